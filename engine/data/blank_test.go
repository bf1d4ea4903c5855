package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlankLineRun: a run of more than Limits.MaxBlankLines (default
// 1,000,000) blank lines is refused where it starts, naming the limit and
// its variable, so that a small gzip of newlines (200 MB of them from
// 200 kB here; 10 GB from 10 MB would decompress for minutes before the
// 8 GiB cap) is refused after about 1 MB of text. It says how many bars
// came before the run (none: a file of blank lines alone is not worth
// raising the limit for) and to raise it only if bars follow. A run at the
// limit loads.
func TestBlankLineRun(t *testing.T) {
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.csv.gz")
	f, err := os.Create(bomb)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	bw := bufio.NewWriter(zw)
	bw.WriteString(hdr + goodRows(1))
	nl := bytes.Repeat([]byte("\n"), 1<<20)
	for range 200 { // 200 MiB of newlines, 1 MiB in memory
		bw.Write(nl)
	}
	bw.WriteString("1690848060,4.255,4.256,4.252,4.252,25259.1\n")
	if err := errors.Join(bw.Flush(), zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFile(bomb, Options{})
	want := bomb + ": line 3: consecutive blank lines above the limit of 1,000,000 after 1 bar: " +
		"if the file holds bars after them, raise it with SWEEPBENCH_MAX_BLANK_LINES (e.g. SWEEPBENCH_MAX_BLANK_LINES=4000000)"
	var le *LimitError
	if err == nil || err.Error() != want || !errors.As(err, &le) || le.Env != EnvMaxBlankLines || le.Max != DefaultMaxBlankLines {
		t.Fatalf("got  %v\nwant %s", err, want)
	}

	// Blank lines of spaces and CRs count; the run starts at the first
	// blank line, leading ones too; a run of exactly the limit loads.
	row2 := "1690848060,4.255,4.256,4.252,4.252,25259.1\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"5 of them, limit 4", hdr + goodRows(1) + "\n \n\r\n\t\n\n" + row2, "x.csv: line 3: consecutive blank lines above the limit of 4 after 1 bar: if the file holds bars after them"},
		{"leading", "\n\n\n\n\n" + hdr + goodRows(1), "x.csv: line 1: consecutive blank lines above the limit of 4, with no bar before them: if the file holds bars after them"},
		{"after the header", hdr + "\n\n\n\n\n" + goodRows(1), "x.csv: line 2: consecutive blank lines above the limit of 4, with no bar before them"},
		{"after 3 bars", hdr + goodRows(3) + "\n\n\n\n\n" + row2, "x.csv: line 5: consecutive blank lines above the limit of 4 after 3 bars: if the file holds bars after them, raise it with SWEEPBENCH_MAX_BLANK_LINES (e.g. SWEEPBENCH_MAX_BLANK_LINES=16)"},
		{"only newlines", strings.Repeat("\n", 10), "x.csv: line 1: consecutive blank lines above the limit of 4, with no bar before them: if the file holds bars after them"},
		{"4 then 4", hdr + "\n\n\n\n" + goodRows(1) + "\n\n\n\n" + row2, ""},
	} {
		d, err := Parse(strings.NewReader(tc.in), "x.csv", Options{Limits: Limits{MaxBlankLines: 4}})
		if tc.want == "" {
			if err != nil || d.Info.Bars != 2 {
				t.Errorf("%s: %v", tc.name, err)
			}
		} else if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\ngot  %v\nwant %s", tc.name, err, tc.want)
		}
	}
	atLimit := hdr + goodRows(1) + strings.Repeat("\n", DefaultMaxBlankLines) + row2
	if d, err := Parse(strings.NewReader(atLimit), "x.csv", Options{}); err != nil || d.Info.Bars != 2 {
		t.Errorf("1,000,000 blank lines: %v", err)
	}
	t.Setenv(EnvMaxBlankLines, "2000000")
	if d, err := Parse(strings.NewReader(hdr+goodRows(1)+strings.Repeat("\n", DefaultMaxBlankLines+1)+row2), "x.csv", Options{}); err != nil || d.Info.Bars != 2 {
		t.Errorf("%s=2000000: %v", EnvMaxBlankLines, err)
	}
}
