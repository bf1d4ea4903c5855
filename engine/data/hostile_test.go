package data

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLimits: a stream is refused at a limit, naming the limit and the
// variable that raises it, before memory grows past it.
func TestLimits(t *testing.T) {
	longLine := hdr + "1690848000,4.255,4.256,4.252,4.252," + strings.Repeat("1", 2<<20) + "\n"
	quoted := hdr + "1690848000,4.255,4.256,4.252,4.252,\"" + strings.Repeat("1\n", 1<<20) + "\"\n"
	wide := strings.Repeat("x,", 1500) + "timestamp,open,high,low,close\n"
	jsonToken := `[[1748798580000,1,1,1,1,"` + strings.Repeat("9", 2<<20) + `"]]`
	// The bomb's first 80 bytes are lines 1 and 2; byte 1 MiB + 1 (offset
	// 1,048,576) is on line 3 + 1,048,576 - 80 = 1,048,499.
	bomb := gzipBytes(append([]byte(hdr+goodRows(1)), bytes.Repeat([]byte("\n"), 16<<20)...)) // 16 MB of text from 16 kB
	tests := []struct {
		name string
		in   []byte
		lim  Limits
		want string
		env  string
	}{
		{"a line of 2 MiB", []byte(longLine), Limits{}, `x.csv: line 2: row length above the limit of 1 MiB: raise it with SWEEPBENCH_MAX_LINE (e.g. SWEEPBENCH_MAX_LINE=4MiB)`, EnvMaxLine},
		{"a quoted field over a million lines", []byte(quoted), Limits{}, `x.csv: line 2: row length above the limit of 1 MiB`, EnvMaxLine},
		{"1,505 columns", []byte(wide), Limits{}, `x.csv: line 1: row has 1,505 fields: fields in a row above the limit of 1,000: raise it with SWEEPBENCH_MAX_FIELDS (e.g. SWEEPBENCH_MAX_FIELDS=4000)`, EnvMaxFields},
		{"a JSON string of 2 MiB", []byte(jsonToken), Limits{}, `x.csv: line 1: JSON token length above the limit of 1 MiB: raise it with SWEEPBENCH_MAX_LINE`, EnvMaxLine},
		{"a gzip bomb", bomb, Limits{MaxBytes: 1 << 20, MaxBlankLines: 1 << 30}, `x.csv: line 1048499: decompressed size above the limit of 1 MiB: raise it with SWEEPBENCH_MAX_BYTES (e.g. SWEEPBENCH_MAX_BYTES=4MiB)`, EnvMaxBytes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(bytes.NewReader(tc.in), "x.csv", Options{Limits: tc.lim})
			var le *LimitError
			if !errors.As(err, &le) || le.Env != tc.env || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got  %v\nwant %s...", err, tc.want)
			}
		})
	}
	// The variables raise the limits (and a bad one is named).
	t.Setenv(EnvMaxLine, "4MiB")
	if d, err := Parse(strings.NewReader(hdr+"1690848000,4.255,4.256,4.252,4.252,1."+strings.Repeat("0", 2<<20)+"\n"), "x.csv", Options{}); err != nil || d.Bars.Volume[0] != 1 {
		t.Errorf("SWEEPBENCH_MAX_LINE=4MiB: %v", err)
	}
	t.Setenv(EnvMaxLine, "lots")
	if _, err := Parse(strings.NewReader(hdr+goodRows(1)), "x.csv", Options{}); err == nil ||
		err.Error() != `x.csv: SWEEPBENCH_MAX_LINE="lots": want a positive size such as 16GiB, 4MiB or 5000` {
		t.Errorf("bad variable: %v", err)
	}
}

// TestNotRegularFiles: devices, FIFOs and sockets are refused by name
// before they are read (or opened: a FIFO would block).
func TestNotRegularFiles(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	_, err := LoadFile("/dev/zero", Options{})
	if err == nil || err.Error() != "/dev/zero: a character device, not a regular file: only files are read (save the data to a file first)" {
		t.Errorf("/dev/zero: %v", err)
	}
	link := filepath.Join(t.TempDir(), "data.csv")
	if err := os.Symlink("/dev/zero", link); err == nil {
		if _, err := LoadFile(link, Options{}); err == nil || !strings.Contains(err.Error(), "a character device") {
			t.Errorf("a link to /dev/zero: %v", err)
		}
	}
	if _, err := LoadFile(t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "the folder holds no data file") {
		t.Errorf("an empty folder: %v", err)
	}
}

// TestHostileText: long fields are quoted in part with their length,
// control characters from paths, headers and fields are escaped, Go number
// syntax is not a number, a blank first line is skipped, a time column
// named for a headerless layout is refused.
func TestHostileText(t *testing.T) {
	long := strings.Repeat("A", 10000)
	tests := []struct {
		name, file, in string
		opt            Options
		want           string
	}{
		{"a 10,000-byte field", "x.csv", hdr + "1690848000," + long + ",1,1,1,1\n", Options{},
			`x.csv: line 2: field "open": cannot parse "` + strings.Repeat("A", 60) + `"... (10,000 bytes) as a number`},
		{"a 10,000-byte timestamp", "x.csv", hdr + long + ",1,1,1,1,1\n", Options{},
			`x.csv: line 2: field "timestamp": cannot parse timestamp "` + strings.Repeat("A", 60) + `"... (10,000 bytes)`},
		{"escapes in the name, header and field", "evil\x1b[2J.csv", "when\x1b]0;pwned\x07,open,high,low,close\n1,1,1,1,1\n", Options{},
			`evil\x1b[2J.csv: line 1: no timestamp column (open_time, timestamp, time, datetime or date) in the header; found: when\x1b]0;pwned\x07, open, high, low, close; name it with --time-column`},
		{"bidi override in a field", "x.csv", hdr + "1690848000,\u202e1,1,1,1,1\n", Options{},
			`x.csv: line 2: field "open": cannot parse "\u202e1" as a number`},
		{"1_000 is not 1000", "x.csv", hdr + "1690848000,1_000,1,1,1,1\n", Options{},
			`x.csv: line 2: field "open": cannot parse "1_000" as a number`},
		{"0x10 is not 16", "x.csv", hdr + "1690848000,0x10,1,1,1,1\n", Options{},
			`x.csv: line 2: field "open": cannot parse "0x10" as a number`},
		{"1_690_848_000 is not a time", "x.csv", hdr + "1_690_848_000,1,1,1,1,1\n", Options{},
			`x.csv: line 2: field "timestamp": cannot parse timestamp "1_690_848_000"`},
		{"a time column for a headerless layout", "x.csv",
			"1690848000000,4.255,4.256,4.252,4.252,25259.1,1690848059999,107451.0165,208,5452.3,23199.1103,0\n", Options{TimeColumn: "open_time"},
			`x.csv: a time column ("open_time") was named, but the binance-archive-noheader layout has no header row: its time is always the first field; leave the time column unset`},
		{"a time column for JSON", "x.json", `[[1748798580000,1,1,1,1,1]]`, Options{TimeColumn: "date"},
			`x.json: a time column ("date") was named, but the JSON layout has no header row: its time is always the first field; leave the time column unset`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), tc.file, tc.opt)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
			// A refusal of the time column says so to the caller, who
			// names its own option (--time-column, a form row).
			if errors.Is(err, ErrTimeColumn) != (tc.opt.TimeColumn != "") {
				t.Errorf("errors.Is(ErrTimeColumn) = %v", errors.Is(err, ErrTimeColumn))
			}
			for _, c := range err.Error() {
				if c < 0x20 || c == 0x7f || c == '\u202e' {
					t.Fatalf("control character %U in %q", c, err.Error())
				}
			}
		})
	}
	// A first line of spaces (and blank lines) before the header: read.
	for _, lead := range []string{"   \n", " \t \r\n\n", "\ufeff  \n"} {
		d, err := Parse(strings.NewReader(lead+hdr+goodRows(2)), "x.csv", Options{})
		if err != nil || d.Info.Bars != 2 {
			t.Errorf("%q first: %v", lead, err)
		} else if _, err := Parse(strings.NewReader(lead+hdr+"1690848000,1,1,1,-1,1\n"), "x.csv", Options{}); err == nil ||
			!strings.Contains(err.Error(), "line "+string(rune('0'+strings.Count(lead, "\n")+2))) {
			t.Errorf("%q first: the line numbers moved: %v", lead, err)
		}
	}
	// The summary's name and convention are sanitised too.
	in := Info{Convention: "LEAN crypto/\x1b[31mred (from the path)", PriceScale: 1, Times: TimesUnix}
	if got := in.ReadAs(); got != `LEAN crypto/\x1b[31mred (from the path): prices as stored, Unix times (UTC)` {
		t.Errorf("ReadAs %q", got)
	}
}

// TestSanitize: control, format and invalid bytes are escaped visibly;
// printable text (and non-Latin letters) is unchanged.
func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path.csv":   "plain/path.csv",
		"café 日本.csv":      "café 日本.csv",
		"a\x1b[2Jb":        `a\x1b[2Jb`,
		"tab\there\r\n":    `tab\x09here\x0d\x0a`,
		"\u009b31m":        `\u009b31m`,
		"\x9b31m":          `\x9b31m`,
		"rtl\u202eexe.csv": `rtl\u202eexe.csv`,
		"zero\u200bwidth":  `zero\u200bwidth`,
		"bad\xffbyte":      `bad\xffbyte`,
		"back\\slash":      `back\slash`,
		"del\x7f":          `del\x7f`,
		"":                 "",
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLoadCancelled: a load stops soon after its context is done, on
// every path the bytes take (a gzip decompressing for seconds, a zip, a
// Parquet file, a folder, Parse's reader), with an *Error naming the file
// and wrapping the context's error.
func TestLoadCancelled(t *testing.T) {
	dir := t.TempDir()
	// 256 MiB of empty lines after a header: seconds of decompression.
	member := gzipBytes(bytes.Repeat([]byte("\n"), 8<<20))
	slow := append(gzipBytes([]byte(hdr)), bytes.Repeat(member, 32)...)
	slowPath := filepath.Join(dir, "slow.csv.gz")
	if err := os.WriteFile(slowPath, slow, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := LoadFileContext(ctx, slowPath, Options{Limits: Limits{MaxBlankLines: 1 << 30}}) // not refused for them
	took := time.Since(start)
	var de *Error
	if !errors.As(err, &de) || !errors.Is(err, context.DeadlineExceeded) || err.Error() != slowPath+": loading interrupted" {
		t.Fatalf("a slow gzip: %v", err)
	}
	if took > 2*time.Second {
		t.Errorf("the load took %v to stop", took)
	}

	// Every other path, with a context already cancelled.
	done, stop := context.WithCancel(context.Background())
	stop()
	zipPath := writeZip(t, dir, "m.zip", zipMember{"a.csv", []byte(hdr + goodRows(3))})
	pq := filepath.Join(dir, "f.parquet")
	if err := os.WriteFile(pq, columnarFixture(t, "freqtrade.parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "many")
	os.Mkdir(folder, 0o755)
	os.WriteFile(filepath.Join(folder, "a.csv"), []byte(hdr+goodRows(3)), 0o644)
	for _, p := range []string{slowPath, zipPath, pq, folder} {
		if _, err := LoadFileContext(done, p, Options{}); !errors.Is(err, context.Canceled) || !strings.HasSuffix(err.Error(), ": loading interrupted") {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := ParseContext(done, bytes.NewReader(slow), "x.csv.gz", Options{}); !errors.Is(err, context.Canceled) ||
		err.Error() != "x.csv.gz: loading interrupted" {
		t.Errorf("Parse: %v", err)
	}
	// Embedded data is in memory already: a context does not refuse it.
	if d, err := OpenContext(done, DefaultDataset, Options{}); err != nil || d.Info.Bars == 0 {
		t.Errorf("embedded: %v", err)
	}
}
