package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestInputQuirks: the smaller input problems of issue 12, through `run`
// as a user meets them: a first line of blanks before the header is read;
// a doubled BOM and UTF-16 or UTF-32 text (with or without a byte-order
// mark, JSON or CSV) get their own message, not the CSV header's; a time
// column named for a layout without a header names --time-column; a huge
// field is quoted in part, with its length.
func TestInputQuirks(t *testing.T) {
	dir := t.TempDir()
	rows := "1690848000,4.255,4.256,4.252,4.252,25259.1\n1690848060,4.251,4.253,4.251,4.253,2476\n"
	var many strings.Builder // enough bars for the grid
	for i := range 40 {
		many.WriteString(strings.Replace("T,4.255,4.256,4.252,4.252,25259.1\n", "T", strconv.Itoa(1690848000+60*i), 1))
	}
	wide := func(s string, bigEndian bool) string {
		var b []byte
		for _, u := range utf16.Encode([]rune(s)) {
			if bigEndian {
				b = append(b, byte(u>>8), byte(u))
			} else {
				b = append(b, byte(u), byte(u>>8))
			}
		}
		return string(b)
	}
	huge, digits := strings.Repeat("A", 100000), strings.Repeat("7", 100000)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := []string{"--hma", "2:3", "--hma3", "6:7", "--backend", "reference", "--no-save", "-q"}
	t.Run("blank first line", func(t *testing.T) {
		p := write("blank.csv", " \t \r\n\ntimestamp,open,high,low,close,volume\n"+many.String())
		out, _, err := execute(t, append([]string{"run", "--data", p}, small...)...)
		if err != "" || !strings.HasPrefix(out, "data    "+p+": 40 bars 2023-08-01 00:00 .. 2023-08-01 00:39 UTC") {
			t.Fatalf("error %q\n%s", err, out)
		}
	})
	for _, tc := range []struct {
		name, file, body string
		args             []string
		want             string
	}{
		{"doubled BOM", "bom.csv", "\ufeff\ufefftimestamp,open,high,low,close,volume\n" + rows, nil,
			"%s: line 1: two UTF-8 byte-order marks (BOM) at the start, as when a file is converted to UTF-8 twice: remove the second one (EF BB BF)"},
		{"UTF-16 JSON without BOM", "ft.json", wide("[[1748798580000,1,1,1,1,1]]", false), nil,
			"%s: line 1: UTF-16 text without a byte-order mark: save the file as UTF-8"},
		{"UTF-16 big-endian JSON without BOM", "ftbe.json", wide("[[1748798580000,1,1,1,1,1]]", true), nil,
			"%s: line 1: UTF-16 text without a byte-order mark: save the file as UTF-8"},
		{"UTF-16 CSV without BOM", "u16.csv", wide("timestamp,open,high,low,close\n1,1,1,1,1\n", false), nil,
			"%s: line 1: UTF-16 text without a byte-order mark: save the file as UTF-8"},
		{"UTF-16 JSON with BOM", "bom16.json", "\xff\xfe" + wide("[[1748798580000,1,1,1,1,1]]", false), nil,
			"%s: line 1: UTF-16 text: save the file as UTF-8"},
		{"UTF-32 JSON with BOM", "u32.json", "\xff\xfe\x00\x00[\x00\x00\x00[\x00\x00\x00", nil,
			"%s: line 1: UTF-32 text: save the file as UTF-8"},
		{"--time-column for LEAN", "lean.csv", "20231104 15:00,42010000,42100000,41900000,42000000,100\n",
			[]string{"--lean-asset", "equity", "--time-column", "date"},
			`--time-column date: %s: a time column ("date") was named, but the lean-csv layout has no header row: its time is always the first field; leave the time column unset`},
		{"--time-column for Binance without header", "bn.csv",
			"1690848000000,4.255,4.256,4.252,4.252,25259.1,1690848059999,107451.0165,208,5452.3,23199.1103,0\n",
			[]string{"--time-column", "open_time"},
			`--time-column open_time: %s: a time column ("open_time") was named, but the binance-archive-noheader layout has no header row`},
		{"--time-column for JSON", "t.json", "[[1748798580000,1,1,1,1,1]]", []string{"--time-column", "date"},
			`--time-column date: %s: a time column ("date") was named, but the JSON layout has no header row`},
		{"--time-column not in the header", "nocol.csv", "timestamp,open,high,low,close\n" + rows, []string{"--time-column", "ts"},
			`--time-column ts: %s: line 1: no column "ts" (the time column asked for) in the header; found: timestamp, open, high, low, close`},
		{"a 100,000-byte field", "huge.csv", "timestamp,open,high,low,close,volume\n1690848000," + huge + ",1,1,1,1\n", nil,
			`%s: line 2: field "open": cannot parse "` + huge[:60] + `"... (100,000 bytes) as a number`},
		{"a 100,000-digit price", "digits.csv", "timestamp,open,high,low,close,volume\n1690848000," + digits + ",1,1,1,1\n", nil,
			`%s: line 2: field "open": price ` + digits[:60] + `... (100,000 bytes) is not finite`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(tc.file, tc.body)
			args := append(append([]string{"run", "--data", p}, small...), tc.args...)
			_, _, err := execute(t, args...)
			want := strings.ReplaceAll(tc.want, "%s", p)
			if !strings.HasPrefix(err, want) {
				t.Fatalf("got  %s\nwant %s", err, want)
			}
			if len(err) > 400 {
				t.Errorf("a message of %d bytes", len(err))
			}
		})
	}
}
