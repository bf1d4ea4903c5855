package data

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// filCSV writes the embedded FIL/USDT data, decompressed, to a file under
// dir and returns its path: a large on-disk CSV (175,680 rows, ~15 MB).
func filCSV(tb testing.TB, dir string) string {
	tb.Helper()
	f, err := embeddedFS.Open("embedded/filusdt_1m_2023-08_2023-11.csv.gz")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(dir, "filusdt_1m.csv")
	out, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkOpen times loads through Open, the entry point of
// engine.Spec.Open (what `run` calls; without --timeframe and --head,
// Spec.Load adds nothing to it), of the embedded FIL/USDT set and of the
// same data as an on-disk CSV (7.4 MB):
//
//	repeat  a load after one that filled the cache (the embedded set:
//	        its parsed form)
//	first   a load with an empty cache: hash, parse, write the entry
//	off     SWEEPBENCH_CACHE_DIR=off: hash and parse
//
// CGO_ENABLED=0 go test ./engine/data -run '^$' -bench Open -benchtime 20x -count 5
func BenchmarkOpen(b *testing.B) {
	csv := filCSV(b, b.TempDir())
	for _, bc := range []struct{ name, spec, mode string }{
		{"embedded-fil/repeat", DefaultDataset, "repeat"},
		{"csv-fil/repeat", csv, "repeat"},
		{"csv-fil/first", csv, "first"},
		{"csv-fil/off", csv, "off"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cache := b.TempDir()
			b.Setenv(EnvCacheDir, cache)
			if bc.mode == "off" {
				b.Setenv(EnvCacheDir, "off")
			}
			load := func() {
				if _, err := Open(bc.spec, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			load()
			b.ResetTimer()
			for b.Loop() {
				if bc.mode == "first" {
					b.StopTimer()
					if err := os.RemoveAll(cache); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				load()
			}
		})
	}
}
