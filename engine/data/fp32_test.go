package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPricesOutsideFP32: a price fp32 cannot hold (above math.MaxFloat32,
// or below the smallest normal fp32 number, 0x1p-126) is refused naming
// the line and the field, as is a bar whose return close/previous close
// overflows fp32; the bounds themselves are read.
func TestPricesOutsideFP32(t *testing.T) {
	row := func(ts, p string) string { return ts + "," + p + "," + p + "," + p + "," + p + ",1\n" }
	tests := []struct{ name, in, want string }{
		{"1e308", hdr + goodRows(1) + row("1690848060", "1e308"),
			`x.csv: line 3: field "open": price 1e308 is above 3.4028235e+38, the largest fp32 number: the fp32 lanes cannot hold it; rescale the prices (divide them by a power of ten)`},
		{"1e300 throughout", hdr + row("1690848000", "1.5e300") + row("1690848060", "1.6e300"),
			`x.csv: line 2: field "open": price 1.5e300 is above 3.4028235e+38, the largest fp32 number`},
		{"just above the largest fp32", hdr + row("1690848000", "3.4028236e38"),
			`x.csv: line 2: field "open": price 3.4028236e38 is above 3.4028235e+38`},
		{"5e-324", hdr + goodRows(1) + "1690848060,4.2,4.3,5e-324,4.2,1\n",
			`x.csv: line 3: field "low": price 5e-324 is below 1.1754944e-38, the smallest normal fp32 number: the fp32 lanes cannot hold it; rescale the prices (multiply them by a power of ten)`},
		{"a subnormal fp32", hdr + row("1690848000", "1e-40"),
			`x.csv: line 2: field "open": price 1e-40 is below 1.1754944e-38`},
		{"a return that overflows fp32", hdr + row("1690848000", "1e-30") + row("1690848060", "1e20"),
			`x.csv: line 3: field "close": close 1e20 is 1e+50 times the close 1e-30 of line 2: the bar's return overflows fp32 (above 3.4028235e+38); check the prices for a change of unit or scale`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), "x.csv", Options{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
	// The bounds are prices: a falling return as far as the bounds allow
	// (-100% in fp32) does not overflow.
	in := hdr + row("1690848000", "3.4028234663852886e38") + row("1690848060", "1.1754943508222875e-38") + row("1690848120", "1")
	d, err := Parse(strings.NewReader(in), "x.csv", Options{})
	if err != nil || d.Bars.Close[0] != 3.4028234663852886e38 || d.Bars.Close[1] != 0x1p-126 {
		t.Fatalf("the bounds: %v", err)
	}
	// Between the files of a folder, too: the first bar of b.csv against
	// the last of a.csv.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.csv"), []byte(hdr+row("1690848000", "1e-30")), 0o644)
	os.WriteFile(filepath.Join(dir, "b.csv"), []byte(hdr+row("1690848060", "1e20")), 0o644)
	_, err = LoadFile(dir, Options{})
	want := filepath.Join(dir, "b.csv") + `: line 2: field "close": close 1e+20 is 1e+50 times the close 1e-30 of ` +
		filepath.Join(dir, "a.csv") + ` line 2: the bar's return overflows fp32`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("a folder:\ngot  %v\nwant %s", err, want)
	}
}

// TestCROnlyLineEndings: a text whose lines end in CR alone (classic Mac
// OS) is refused saying so, small or large (it would otherwise read as one
// line: "no bars", "row has 1,506 fields", "row length above the limit");
// CRLF, a quoted CR and JSON with CR line endings are read.
func TestCROnlyLineEndings(t *testing.T) {
	want := `x.csv: line 1: the lines end in CR alone (classic Mac OS line endings), which are not read as line ends: save the file with LF or CRLF line endings`
	cr := func(s string) string { return strings.ReplaceAll(s, "\n", "\r") }
	for name, in := range map[string]string{
		"3 rows":                   cr(hdr + goodRows(3)),
		"300 rows":                 cr(hdr + goodRows(300)),
		"30,000 rows (over 1 MiB)": cr(hdr + goodRows(30000)),
		"after blank lines":        "\r\r" + cr(hdr+goodRows(3)),
		"headerless":               cr(goodRows(3)),
	} {
		_, err := Parse(strings.NewReader(in), "x.csv", Options{})
		if err == nil || err.Error() != want {
			t.Errorf("%s:\ngot  %v\nwant %s", name, err, want)
		}
	}
	for name, in := range map[string]string{
		"CRLF":            strings.ReplaceAll(hdr+goodRows(3), "\n", "\r\n"),
		"a quoted CR":     "timestamp,open,high,low,close,\"vol\rume\"\n" + goodRows(3),
		"JSON, CR ending": "[[1748798580000,1,1,1,1,1],\r[1748798640000,1,1,1,1,1]]\r",
	} {
		if d, err := Parse(strings.NewReader(in), "x.csv", Options{}); err != nil || d.Info.Bars < 2 {
			t.Errorf("%s: %v", name, err)
		}
	}
}
