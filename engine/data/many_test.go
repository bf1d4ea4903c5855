package data

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// binanceMinutes writes n rows of the Binance archive layout (no header)
// from start, one a minute, close rising by 1 from c0.
func binanceMinutes(start time.Time, n int, c0 float64) []byte {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		ms := start.Add(time.Duration(i) * time.Minute).UnixMilli()
		c := c0 + float64(i)
		fmt.Fprintf(&sb, "%d,%g,%g,%g,%g,1.5,%d,0,1,0,0,0\n", ms, c, c+1, c-1, c, ms+59999)
	}
	return []byte(sb.String())
}

func fileSum(t testing.TB, p string) string {
	sum := sha256.Sum256(readFile(t, p))
	return hex.EncodeToString(sum[:])
}

// TestManyFiles: a glob of monthly Binance zips and a LEAN minute folder of
// day zips load as one dataset in time order; the hash is the manifest's.
func TestManyFiles(t *testing.T) {
	dir := t.TempDir()
	jan, feb, mar := utc(2024, 1, 31, 23, 57), utc(2024, 2, 1, 0, 0), utc(2024, 3, 1, 0, 0)
	// The names sort Feb before Jan on purpose: time order decides.
	pa := writeZip(t, dir, "BTCUSDT-1m-2024-b.zip", zipMember{"BTCUSDT-1m-2024-01.csv", binanceMinutes(jan, 3, 100)})
	pb := writeZip(t, dir, "BTCUSDT-1m-2024-a.zip", zipMember{"BTCUSDT-1m-2024-02.csv", binanceMinutes(feb, 4, 200)})
	pc := writeZip(t, dir, "BTCUSDT-1m-2024-c.zip", zipMember{"BTCUSDT-1m-2024-03.csv", binanceMinutes(mar, 2, 300)})
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("not data"), 0o644)
	glob := filepath.Join(dir, "BTCUSDT-1m-2024-*.zip")
	for _, spec := range []string{glob, dir} {
		d, err := LoadFile(spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		in := d.Info
		wantClose := []float64{100, 101, 102, 200, 201, 202, 203, 300, 301}
		if in.Files != 3 || in.Bars != 9 || in.SourceBars != 9 || in.Name != spec || in.Path != spec || in.Layout != LayoutBinanceArchiveNoHeader {
			t.Errorf("%s: info %+v", spec, in)
		}
		for i, c := range wantClose {
			if d.Bars.Close[i] != c {
				t.Fatalf("%s: close %v, want %v", spec, d.Bars.Close, wantClose)
			}
		}
		// 23:59 -> 00:00 joins Jan to Feb without a gap; Feb 00:03 -> Mar 00:00 is one.
		if in.Gaps != 1 || in.LargestGap != mar.Sub(feb.Add(3*time.Minute)) || !in.First.Equal(jan) {
			t.Errorf("%s: gaps %d largest %v first %v", spec, in.Gaps, in.LargestGap, in.First)
		}
		manifest := fileSum(t, pa) + "  " + filepath.Base(pa) + "\n" + fileSum(t, pb) + "  " + filepath.Base(pb) + "\n" +
			fileSum(t, pc) + "  " + filepath.Base(pc) + "\n"
		if sum := sha256.Sum256([]byte(manifest)); in.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: SHA256 %s is not the manifest's", spec, in.SHA256)
		}
	}
	// Changing one file's bytes changes the dataset's hash.
	before, _ := LoadFile(glob, Options{})
	writeZip(t, dir, "BTCUSDT-1m-2024-c.zip", zipMember{"BTCUSDT-1m-2024-03.csv", binanceMinutes(mar, 2, 301)})
	if after, err := LoadFile(glob, Options{}); err != nil || after.Info.SHA256 == before.Info.SHA256 {
		t.Errorf("a changed member kept the hash (%v)", err)
	}

	// A LEAN minute folder of day zips: New York day files joined, the
	// night between them a gap.
	aapl := filepath.Join(dir, "equity", "usa", "minute", "aapl")
	writeZip(t, dir, "equity/usa/minute/aapl/20140605_trade.zip", zipMember{"20140605_aapl_minute_trade.csv", []byte("34200000,6448000,6448000,6448000,6448000,90\n34260000,6449000,6450000,6447000,6450000,120\n")})
	writeZip(t, dir, "equity/usa/minute/aapl/20140606_trade.zip", zipMember{"20140606_aapl_minute_trade.csv", []byte("34200000,6460000,6460000,6460000,6460000,10\n")})
	d, err := LoadFile(aapl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ny, _ := time.LoadLocation("America/New_York")
	if d.Info.Bars != 3 || !d.Info.Last.Equal(time.Date(2014, 6, 6, 9, 30, 0, 0, ny)) || d.Bars.Close[2] != 646 ||
		d.Info.Gaps != 1 || d.Info.PriceScale != 10000 || d.Info.Layout != LayoutLEANDayCSV {
		t.Errorf("LEAN folder: %+v", d.Info)
	}
}

// TestManyFilesRefused: overlapping or repeated bars across files name
// both files and lines; empty folders and globs, mixed layouts.
func TestManyFilesRefused(t *testing.T) {
	dir := t.TempDir()
	sub := func(name string) string {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		return filepath.Join(dir, name)
	}
	write := func(p string, b []byte) string { os.WriteFile(p, b, 0o644); return p }
	start := utc(2024, 1, 1, 0, 0)

	dup := sub("dup")
	a := write(filepath.Join(dup, "a.csv"), binanceMinutes(start, 3, 100))
	b := write(filepath.Join(dup, "b.csv"), binanceMinutes(start.Add(2*time.Minute), 3, 100))
	over := sub("over")
	c := write(filepath.Join(over, "c.csv"), binanceMinutes(start, 5, 100))
	e := write(filepath.Join(over, "e.csv"), binanceMinutes(start.Add(2*time.Minute), 5, 100))
	mixed := sub("mixed")
	write(filepath.Join(mixed, "x.csv"), binanceMinutes(start, 2, 100))
	write(filepath.Join(mixed, "y.csv"), []byte(hdr+"1704070800,1,1,1,1,1\n"))
	empty := sub("empty")
	write(filepath.Join(empty, "README.md"), []byte("x"))
	bad := sub("bad")
	write(filepath.Join(bad, "g.csv"), binanceMinutes(start, 2, 100))
	write(filepath.Join(bad, "h.csv"), []byte(hdr+"1704070800,1,1,1,-1,1\n"))

	tests := []struct{ spec, want string }{
		{dup, b + ": line 1: duplicate timestamp 2024-01-01 00:02:00 UTC: the same bar as " + a + " line 3: the files overlap or repeat bars; remove one of them"},
		{over, e + ": line 1: timestamp 2024-01-01 00:02:00 UTC overlaps " + c + ", whose bars run to 2024-01-01 00:04:00 UTC (line 5): the files overlap or repeat bars; remove one of them"},
		{mixed, mixed + ": the files are not read alike: " + filepath.Join(mixed, "y.csv") + " is csv (prices as stored, Unix times (UTC)), " +
			filepath.Join(mixed, "x.csv") + " is binance-archive-noheader (prices as stored, Unix times (UTC)): load them separately"},
		{empty, empty + ": the folder holds no data file (.csv .json .gz .zip .txt .parquet .feather .arrow)"},
		{filepath.Join(dir, "nothing-*.zip"), filepath.Join(dir, "nothing-*.zip") + ": no file matches the pattern (and no file has this name)"},
		// Not a valid pattern: a missing file, whatever its characters.
		{filepath.Join(dir, "nope[.csv"), filepath.Join(dir, "nope[.csv") + ": no such file"},
		{filepath.Join(dir, "\x1b[31mgone.csv"), Sanitize(filepath.Join(dir, "\x1b[31mgone.csv")) + ": no such file"},
		{filepath.Join(bad, "*.csv"), filepath.Join(bad, "h.csv") + `: line 2: field "close": price -1 is not positive`},
	}
	for _, tc := range tests {
		_, err := LoadFile(tc.spec, Options{})
		var de *Error
		if !errors.As(err, &de) || err.Error() != tc.want {
			t.Errorf("%s:\n got  %v\n want %s", tc.spec, err, tc.want)
		}
	}
	_, err := LoadFile(dup, Options{Limits: Limits{MaxFiles: 1}})
	var le *LimitError
	if !errors.As(err, &le) || le.Env != EnvMaxFiles || !strings.Contains(err.Error(), "2 files: files above the limit of 1: raise it with SWEEPBENCH_MAX_FILES") {
		t.Errorf("file limit: %v", err)
	}
}
