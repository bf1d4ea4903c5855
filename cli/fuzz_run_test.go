package cli

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sweepbench/engine"
	"sweepbench/engine/data"
)

// FuzzRun drives the whole `run` command in process, as the binary runs
// it: the fuzzed bytes are written as the --data file under one of the
// names the loaders read conventions from (a CSV, a LEAN equity or crypto
// path, a zip member, Parquet, Feather, a folder of two files), the
// dataset is loaded and validated, the study built from the flags, a grid
// of four combos swept in fp64 and fp32 on the CPU reference, the parity
// report computed and the table written. Memory is capped by the loaders'
// limits, set small here (SWEEPBENCH_MAX_*). Whatever the bytes:
//
//   - no panic (a backend's recovered panic, engine.ErrPanic, fails too);
//   - an error is a message, never empty, and reaches the terminal
//     without a control character (errorText);
//   - a run that succeeds prints the table (and, on both precisions, the
//     parity verdict), and
//     neither stdout nor stderr holds a control character but newlines.
//
// The seeds are the heads of the real files under testdata/data (CSV,
// Binance archive with and without header, microsecond times, semicolon,
// Kaggle NaN rows, freqtrade and klines JSON, LEAN), gzipped and zipped,
// the Parquet fixtures of engine/data and a Feather file written by
// Arrow's writer. Run it with
//
//	go test -run '^$' -fuzz '^FuzzRun$' -fuzztime 1000000x -parallel 1 .
func FuzzRun(f *testing.F) {
	f.Setenv(data.EnvMaxBytes, "1MiB")
	f.Setenv(data.EnvMaxLine, "16KiB")
	f.Setenv(data.EnvMaxFields, "64")
	f.Setenv(data.EnvMaxFiles, "4")
	f.Setenv("XDG_DATA_HOME", f.TempDir()) // --no-save: nothing is written there
	for _, s := range fuzzRunSeeds(f) {
		f.Add(s.raw, s.shape)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte, shape uint8) {
		name := fuzzRunNames[int(shape)%len(fuzzRunNames)]
		flags := fuzzRunFlags[int(shape)/len(fuzzRunNames)%len(fuzzRunFlags)]
		spec := writeFuzzData(t, dir, name, raw)
		args := append([]string{"run", "--data", spec, "--no-save", "--backend", "reference",
			"--hma", "2:3", "--hma3", "6:7", "--top", "3"}, flags...)
		root := newRoot()
		var out, errb bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errb)
		root.SetArgs(args)
		err := root.ExecuteContext(context.Background())
		if err != nil {
			if errors.Is(err, engine.ErrPanic) {
				t.Fatalf("%v: a panic, recovered: %v", args, err)
			}
			msg := errorText(err)
			if strings.TrimSpace(msg) == "" {
				t.Fatalf("%v: an empty error (%T)", args, err)
			}
			noControl(t, "error", msg)
		} else if o := out.String(); !strings.HasPrefix(o, "data    ") || !strings.Contains(o, "\nTop ") ||
			len(flags) == 0 && !strings.Contains(o, "\nParity fp32 vs fp64: ") {
			t.Fatalf("%v: no table (or no parity verdict) in\n%s", args, o)
		}
		if os.Getenv("SWEEPBENCH_FUZZ_LOG") != "" {
			t.Logf("%v: %v", args[2:3], errorText(err))
		}
		noControl(t, "stdout", out.String())
		noControl(t, "stderr", errb.String())
	})
}

// noControl fails when s holds a control character other than a newline.
func noControl(t *testing.T, what, s string) {
	t.Helper()
	for i, r := range s {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) {
			t.Fatalf("%s: control character %U at byte %d of %q", what, r, i, s)
		}
	}
}

// fuzzRunNames are the --data names a fuzzed file is written under: the
// path decides LEAN conventions and a "#member" picks from a zip; "many/"
// is a folder of two files, the bytes split at the first "\x00|".
var fuzzRunNames = []string{
	"data.csv",
	"data.csv.gz",
	"lean/equity/usa/hour/spy.zip",
	"lean/crypto/coinbase/minute/btcusd/20240101_trade.zip",
	"archive.zip#b.csv",
	"data.parquet",
	"data.feather",
	"many/",
}

// fuzzRunFlags are the study flags tried with each name.
var fuzzRunFlags = [][]string{
	nil,
	{"--timeframe", "1h"},
	{"--source", "ohlc4", "--mode", "long-only", "--fee", "0"},
	{"--lean-asset", "equity", "--tz", "America/New_York"},
	{"--time-column", "date"},
	{"--precision", "fp32", "--wma", "prefix"},
	{"--head", "10", "--bars-per-year", "1764"},
}

// fuzzShape is the shape byte of name with flag set k.
func fuzzShape(name string, k int) uint8 {
	for i, n := range fuzzRunNames {
		if n == name {
			return uint8(k*len(fuzzRunNames) + i)
		}
	}
	panic("no fuzz name " + name)
}

// writeFuzzData writes raw as the file name in dir (the folder "many/":
// two files, raw split at "\x00|") and returns the --data value.
func writeFuzzData(t *testing.T, dir, name string, raw []byte) string {
	t.Helper()
	file, member, _ := strings.Cut(name, "#")
	p := filepath.Join(dir, filepath.FromSlash(file))
	if strings.HasSuffix(name, "/") {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		a, b, _ := bytes.Cut(raw, []byte("\x00|"))
		mustWrite(t, filepath.Join(p, "a.csv"), a)
		mustWrite(t, filepath.Join(p, "b.csv"), b)
		return p
	}
	mustWrite(t, p, raw)
	if member != "" {
		return p + "#" + member
	}
	return p
}

func mustWrite(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type fuzzSeed struct {
	raw   []byte
	shape uint8
}

// fuzzRunSeeds are the real layouts, each under a name that reads it.
func fuzzRunSeeds(f *testing.F) []fuzzSeed {
	head := func(name string, lines int) []byte { // read no further: every worker reads the seeds
		r, closeFile := openGunzip(f, filepath.Join("..", "testdata", "data", name))
		defer closeFile()
		br := bufio.NewReader(r)
		var out []byte
		for range lines {
			line, err := br.ReadBytes('\n')
			out = append(out, line...)
			if err != nil {
				break
			}
		}
		return out
	}
	records := func(name string, n int) []byte { // the first n records of a JSON array of arrays
		raw := readGunzip(f, filepath.Join("..", "testdata", "data", name))
		depth, count := 0, 0
		for i, c := range raw {
			switch c {
			case '[':
				depth++
			case ']':
				if depth--; depth == 1 {
					if count++; count == n {
						return append(append([]byte{}, raw[:i+1]...), ']')
					}
				}
			}
		}
		return raw
	}
	binance := head("binance_archive_FILUSDT-1m-2023-08_head.csv", 40)
	lean := head("lean_spy_hour_head.csv.gz", 40)
	var seeds []fuzzSeed
	add := func(raw []byte, name string, k int) { seeds = append(seeds, fuzzSeed{raw, fuzzShape(name, k)}) }
	add(binance, "data.csv", 0)
	add(binance, "data.csv", 1)
	add(gzipOf(f, binance), "data.csv.gz", 0)
	add(head("binance_archive_FILUSDT-1m-2023-08_head_noheader.csv.gz", 40), "data.csv", 0)
	add(head("binance_archive_FILUSDT-1m-2023-08_head_us.csv.gz", 40), "data.csv", 2)
	add(head("btcusdt_1h_2022-2026.csv.gz", 60), "data.csv", 6)
	add(head("spy_1h_1998-2021.csv.gz", 60), "data.csv", 3)
	add(head("filusdt_1m_semicolon_head.csv", 40), "data.csv", 0)
	add(head("bitstamp_kaggle_like.csv", 40), "data.csv", 0)
	add(records("freqtrade_BTC_USDT-1m_head.json.gz", 30), "data.csv", 0)
	add(records("binance_klines_BTCUSDT-1h-2023-03.json.gz", 30), "data.csv.gz", 5)
	add(lean, "data.csv", 3)
	add(zipOf(f, "spy.csv", lean), "lean/equity/usa/hour/spy.zip", 0)
	var day []byte // a LEAN minute day file: milliseconds since midnight, prices as stored
	for i, c := range []string{"42298.61", "42320", "42325.71", "42310.5", "42330", "42301.25", "42340", "42335.5"} {
		day = fmt.Appendf(day, "%d,42300,42345,42290,%s,%d.5\n", 60000*i, c, 10+i)
	}
	add(zipOf(f, "20240101_btcusd_minute_trade.csv", day), "lean/crypto/coinbase/minute/btcusd/20240101_trade.zip", 0)
	add(zipOf(f, "a.csv", binance, "b.csv", head("binance_archive_FILUSDT-1m-2023-08_head_noheader.csv.gz", 20)), "archive.zip#b.csv", 0)
	lines := bytes.SplitAfter(binance, []byte("\n")) // a header and 39 rows: two files of 20 and 19 rows
	add(bytes.Join([][]byte{bytes.Join(lines[:21], nil), bytes.Join(append(lines[:1:1], lines[21:]...), nil)}, []byte("\x00|")), "many/", 0)
	btc := bytes.SplitAfter(head("btcusdt_1h_2022-2026.csv.gz", 41), []byte("\n")) // one hour missing between the files
	add(bytes.Join([][]byte{bytes.Join(btc[:21], nil), bytes.Join(append(btc[:1:1], btc[22:]...), nil)}, []byte("\x00|")), "many/", 1)
	for _, name := range []string{"freqtrade.parquet", "freqtrade_2rows.parquet", "pandas_index.parquet", "polars.parquet", "some_null.parquet"} {
		raw, err := os.ReadFile(filepath.Join("..", "engine", "data", "testdata", "columnar", name))
		if err != nil {
			f.Fatal(err)
		}
		add(raw, "data.parquet", 0)
	}
	feather, stream := featherOf(f)
	add(feather, "data.feather", 0)
	add(feather, "data.feather", 4)
	add(stream, "data.feather", 2)
	return seeds
}

// openGunzip opens a file to read, gunzipped when it is gzip.
func openGunzip(t testing.TB, p string) (io.Reader, func()) {
	t.Helper()
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(fh)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		return zr, func() { fh.Close() }
	}
	return br, func() { fh.Close() }
}

// readGunzip reads a file, gunzipped when it is gzip.
func readGunzip(t testing.TB, p string) []byte {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return raw
}

func gzipOf(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipOf is a zip of the members given as name, body pairs.
func zipOf(t testing.TB, nameBody ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(nameBody); i += 2 {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: nameBody[i].(string), Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(nameBody[i+1].([]byte)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// featherOf writes freqtrade's frame (date as timestamp[ms, UTC], then
// open, high, low, close, volume) of 15 rows, one of them all null, as a
// Feather v2 file and as an Arrow stream, with Arrow's own writers.
func featherOf(t testing.TB) (file, stream []byte) {
	t.Helper()
	f64 := arrow.PrimitiveTypes.Float64
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "date", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "open", Type: f64, Nullable: true}, {Name: "high", Type: f64, Nullable: true},
		{Name: "low", Type: f64, Nullable: true}, {Name: "close", Type: f64, Nullable: true},
		{Name: "volume", Type: f64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	rows := [][6]float64{
		{1748798580000, 105100.69, 105114.88, 105100.69, 105114.88, 4.61751},
		{1748798640000, 105114.88, 105114.89, 105100.0, 105100.01, 1.5},
		{1748798700000, -1, -1, -1, -1, -1}, // nulls
	}
	for i := range 12 { // a bar a minute after them, alternately up and down
		c := 105100.0 + float64(i%2)*20 + float64(i)
		rows = append(rows, [6]float64{float64(1748798760000 + 60000*i), c - 5, c + 10, c - 10, c, 1 + float64(i)})
	}
	for _, r := range rows {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(r[0])))
		for i := 1; i < 6; i++ {
			if r[i] < 0 {
				b.Field(i).AppendNull()
			} else {
				b.Field(i).(*array.Float64Builder).Append(r[i])
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var fb, sb bytes.Buffer
	fw, err := ipc.NewFileWriter(&fb, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	sw := ipc.NewWriter(&sb, ipc.WithSchema(schema))
	for _, w := range []interface {
		Write(arrow.RecordBatch) error
		Close() error
	}{fw, sw} {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return fb.Bytes(), sb.Bytes()
}
