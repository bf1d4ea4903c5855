package data

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// zipMember is one file to put in a test zip.
type zipMember struct {
	name string
	body []byte
}

// writeZip writes a zip of members (deflated; a name ending in '/' is a
// folder entry) to dir/name and returns its path.
func writeZip(t testing.TB, dir, name string, members ...zipMember) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(m.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// binanceRows are three rows in the layout of data.binance.vision's kline
// CSV as its README documents it (no header row, as in the archives before
// 2025; 12 fields, open_time in ms), values hand-written.
const binanceRows = "1704067200000,42283.58,42298.62,42261.02,42298.61,35.92724,1704067259999,1519360.8488024,1327,17.71438,749176.5453648,0\n" +
	"1704067260000,42298.62,42320.00,42298.61,42320.00,21.33350,1704067319999,902559.5262081,987,11.96183,506094.7312034,0\n" +
	"1704067320000,42319.99,42331.54,42317.04,42325.71,23.82590,1704067379999,1008451.9447906,849,12.13620,513651.8519219,0\n"

// TestZip: a Binance monthly kline zip (one CSV) loads directly; the
// hash is the zip's; a zip of several files is refused with their names
// unless "#member" picks one.
func TestZip(t *testing.T) {
	dir := t.TempDir()
	one := writeZip(t, dir, "BTCUSDT-1m-2024-01.zip", zipMember{"BTCUSDT-1m-2024-01.csv", []byte(binanceRows)})
	d, err := LoadFile(one, Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(one)
	sum := sha256.Sum256(raw)
	if d.Info.Layout != LayoutBinanceArchiveNoHeader || d.Info.Bars != 3 || d.Info.SHA256 != hex.EncodeToString(sum[:]) ||
		d.Info.Name != one || d.Info.Path != one || d.Info.MedianSpacing != time.Minute {
		t.Errorf("info %+v", d.Info)
	}
	if !d.Info.First.Equal(utc(2024, 1, 1, 0, 0)) || barAt(&d.Bars, 2) != (ohlcv{42319.99, 42331.54, 42317.04, 42325.71, 23.82590}) {
		t.Errorf("first %v, bar 2 %v", d.Info.First, barAt(&d.Bars, 2))
	}

	// A gzip inside the zip, a folder entry beside it: still one file.
	gz := writeZip(t, dir, "nested.zip", zipMember{"data/", nil}, zipMember{"data/BTCUSDT-1m-2024-01.csv.gz", gzipBytes([]byte(binanceRows))})
	if d, err := LoadFile(gz, Options{}); err != nil || d.Info.Bars != 3 {
		t.Errorf("gzip in zip: %v", err)
	}

	several := writeZip(t, dir, "several.zip",
		zipMember{"a.csv", []byte(hdr + goodRows(2))}, zipMember{"b.csv", []byte(binanceRows)}, zipMember{"c/d.csv", []byte("x")})
	_, err = LoadFile(several, Options{})
	want := several + `: the zip holds 3 files: a.csv, b.csv, c/d.csv; name one after '#', e.g. ` + several + "#a.csv"
	if err == nil || err.Error() != want {
		t.Errorf("several members:\n got  %v\n want %s", err, want)
	}
	for member, bars := range map[string]int{"a.csv": 2, "b.csv": 3} {
		d, err := LoadFile(several+"#"+member, Options{})
		if err != nil || d.Info.Bars != bars || d.Info.Name != several+"#"+member || d.Info.Path != several+"#"+member {
			t.Errorf("#%s: %v %+v", member, err, d)
		}
	}
	if d, err := LoadFile(several+"#d.csv", Options{}); err == nil || d != nil {
		t.Errorf("#d.csv (base name of c/d.csv, which holds 'x') loaded")
	} else if want := several + "#c/d.csv: line 1: cannot detect the layout"; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("#d.csv: %v", err)
	}

	for _, tc := range []struct{ path, want string }{
		{several + "#nope.csv", several + `: no member "nope.csv" in the zip; it holds a.csv, b.csv, c/d.csv`},
		{writeZip(t, dir, "empty.zip"), filepath.Join(dir, "empty.zip") + ": empty zip: no file in it"},
		{writeZip(t, dir, "inner.zip", zipMember{"x.zip", readFile(t, one)}), filepath.Join(dir, "inner.zip") + "#x.zip: a zip inside a compressed file: extract it first"},
		{one[:len(one)-4] + ".csv#a.csv", one[:len(one)-4] + ".csv: no such file"},
	} {
		_, err := LoadFile(tc.path, Options{})
		var de *Error
		if !errors.As(err, &de) || err.Error() != tc.want {
			t.Errorf("%s:\n got  %v\n want %s", tc.path, err, tc.want)
		}
	}

	// A damaged member (bytes flipped inside the deflate stream) is an
	// error naming the member, never bars.
	bad := readFile(t, one)
	bad[60] ^= 0xff
	badPath := filepath.Join(dir, "bad.zip")
	os.WriteFile(badPath, bad, 0o644)
	if _, err := LoadFile(badPath, Options{}); err == nil {
		t.Error("damaged zip loaded")
	}

	// Parse reads a zip from a stream, as the embedded data and a pipe would.
	d, err = Parse(bytes.NewReader(raw), "download.zip", Options{})
	if err != nil || d.Info.Bars != 3 || d.Info.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("Parse of a zip: %v", err)
	}
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
