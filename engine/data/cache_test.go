package data

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain keeps the package's tests off the user's cache folder: every
// load goes through a cache in a temporary folder, so the other tests
// also run on entries they wrote (a second load of a fixture is a hit).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sweepbench-data-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv(EnvCacheDir, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// freshParse loads spec as Open does, without the cache and, for an
// embedded set, from its source instead of its parsed form.
func freshParse(t testing.TB, spec string, opt Options) (*Dataset, error) {
	t.Helper()
	if name, ok := strings.CutPrefix(spec, embeddedPrefix); ok {
		e, err := embeddedEntryOf(name)
		if err != nil {
			t.Fatal(err)
		}
		if opt.Limits, err = opt.Limits.resolve(); err != nil {
			t.Fatal(err)
		}
		return parseEmbedded(e, opt)
	}
	dir := os.Getenv(EnvCacheDir)
	os.Setenv(EnvCacheDir, "off")
	defer os.Setenv(EnvCacheDir, dir)
	return Open(spec, opt)
}

// entries lists the cache entries in dir (not the temporary files).
func entries(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.bars"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// stamp is what tells a kept entry from a rewritten one: a rewrite is a
// new file renamed into place.
func stamp(t testing.TB, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

func writeFixture(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCacheSameAsParse loads every fixture layout fresh, then twice
// through an empty cache (a miss that stores, a hit), and compares the
// datasets deeply: what the summary shows (name, scale, zone, calendar,
// gaps, dropped rows and their lines, SHA-256) comes out of the cache as
// the parse made it.
func TestCacheSameAsParse(t *testing.T) {
	dir := t.TempDir()
	ny, _ := time.LoadLocation("America/New_York")
	ft := record(t, freqtradeSchema, freqtradeRows)
	minutes := filepath.Join(dir, "minutes")
	writeZip(t, minutes, "BTCUSDT-1m-2024-01.zip", zipMember{"BTCUSDT-1m-2024-01.csv", binanceMinutes(utc(2024, 1, 31, 23, 57), 3, 100)})
	writeZip(t, minutes, "BTCUSDT-1m-2024-02.zip", zipMember{"BTCUSDT-1m-2024-02.csv", binanceMinutes(utc(2024, 2, 1, 0, 3), 4, 200)})
	tests := []struct {
		name, spec string
		opt        Options
		files      int // entries one load writes
	}{
		{"csv.gz, Unix seconds", testdata + "btcusdt_1h_2022-2026.csv.gz", Options{}, 1},
		{"csv.gz, ISO 8601 with offsets, sessions calendar, gaps", testdata + "spy_1h_1998-2021.csv.gz", Options{}, 1},
		{"Binance archive", testdata + "binance_archive_FILUSDT-1m-2023-08_head.csv", Options{}, 1},
		{"Binance archive, microseconds", testdata + "binance_archive_FILUSDT-1m-2023-08_head_us.csv.gz", Options{}, 1},
		{"Binance archive without header", testdata + "binance_archive_FILUSDT-1m-2023-08_head_noheader.csv.gz", Options{}, 1},
		{"freqtrade JSON", testdata + "freqtrade_BTC_USDT-1m_head.json.gz", Options{}, 1},
		{"Binance klines JSON", testdata + "binance_klines_BTCUSDT-1h-2023-03.json.gz", Options{}, 1},
		{"LEAN hour zip, equity from the path", testdata + "lean/equity/usa/hour/spy.zip", Options{}, 1},
		{"LEAN hour, equity as given", testdata + "lean_spy_hour_head.csv.gz", Options{LEANAsset: "equity"}, 1},
		{"LEAN hour, equity in UTC", testdata + "lean_spy_hour_head.csv.gz", Options{LEANAsset: "equity", Location: time.UTC}, 1},
		{"LEAN minute day file, zip member", writeZip(t, dir, "equity/usa/minute/aapl/20140605_trade.zip",
			zipMember{"20140605_aapl_minute_trade.csv", []byte("34200000,6448000,6448000,6448000,6448000,90\n34260000,6449000,6450000,6447000,6450000,120\n")}) +
			"#20140605_aapl_minute_trade.csv", Options{}, 1},
		{"semicolons, decimal commas", testdata + "filusdt_1m_semicolon_head.csv", Options{}, 1},
		{"NaN rows dropped (Kaggle Bitstamp)", testdata + "bitstamp_kaggle_like.csv", Options{}, 1},
		{"null rows dropped with their lines (Yahoo)", writeFixture(t, dir, "SPY.csv", []byte(yahoo)), Options{}, 1},
		{"naive times in New York, a named time column", writeFixture(t, dir, "naive.csv",
			[]byte("when,time,open,high,low,close,volume\nx,2024-03-08 09:30,1,2,0.5,1.5,10\nx,2024-03-11 09:30,1.5,2.5,1,2,20\n")),
			Options{Location: ny, TimeColumn: "time"}, 1},
		{"Parquet (freqtrade), a null row dropped", writeFixture(t, dir, "ft.parquet", columnarFixture(t, "freqtrade.parquet")), Options{}, 1},
		{"Parquet (pandas), naive index in New York", writeFixture(t, dir, "spy.parquet", columnarFixture(t, "pandas_index.parquet")), Options{Location: ny}, 1},
		{"Feather", writeFixture(t, dir, "ft.feather", writeArrow(t, ft, false)), Options{}, 1},
		{"Arrow stream", writeFixture(t, dir, "ft.arrows", writeArrow(t, ft, true)), Options{}, 1},
		{"a folder of zips", minutes, Options{}, 2},
		{"embedded, another zone (parsed through the cache)", DefaultDataset, Options{Location: time.UTC}, 1},
		{"embedded, as shipped", "embedded:btcusdt-1m", Options{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv(EnvCacheDir, cache)
			want, err := freshParse(t, tc.spec, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			miss, err := Open(tc.spec, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			sameDataset(t, "miss", want, miss)
			stored := entries(t, cache)
			if len(stored) != tc.files {
				t.Fatalf("%d entries, want %d", len(stored), tc.files)
			}
			var before []os.FileInfo
			for _, p := range stored {
				before = append(before, stamp(t, p))
			}
			hit, err := Open(tc.spec, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			sameDataset(t, "hit", want, hit)
			for i, p := range stored {
				if !os.SameFile(before[i], stamp(t, p)) {
					t.Errorf("%s was rewritten: the second load missed", filepath.Base(p))
				}
			}
		})
	}
}

// TestCacheMissOnChangedFile: a file changed in one byte, its size and
// modification time kept, misses (the key is the content's hash, not the
// file's stat), loads the new bars and replaces the entry.
func TestCacheMissOnChangedFile(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvCacheDir, cache)
	p := writeFixture(t, t.TempDir(), "bars.csv", []byte("timestamp,open,high,low,close,volume\n"+
		"1704067200,10,12,9,11,5\n1704067260,11,13,10,12,6\n"))
	d, err := Open(p, Options{})
	if err != nil || d.Bars.Close[1] != 12 {
		t.Fatal(d, err)
	}
	fi := stamp(t, p)
	b := readFile(t, p)
	b[bytes.LastIndex(b, []byte(",12,"))+2] = '3' // close 12 -> 13 (high 13)
	writeFixture(t, filepath.Dir(p), "bars.csv", b)
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if now := stamp(t, p); now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		t.Fatal("size or mtime changed")
	}
	got, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := freshParse(t, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameDataset(t, "changed file", want, got)
	if got.Bars.Close[1] != 13 || got.Info.SHA256 == d.Info.SHA256 {
		t.Errorf("close %v, sha %s: the old entry was served", got.Bars.Close[1], got.Info.SHA256)
	}
	if n := len(entries(t, cache)); n != 1 {
		t.Errorf("%d entries: the changed file's entry was not replaced", n)
	}
}

// TestCacheMissOnChangedOption: each Option that changes the parse (zone,
// time column, forced layout, LEAN asset, limits) has an entry of its own,
// read back as a fresh parse with that option reads; limits lowered below
// what the file needs refuse it as the parse does.
func TestCacheMissOnChangedOption(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvCacheDir, cache)
	ny, _ := time.LoadLocation("America/New_York")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	p := writeFixture(t, t.TempDir(), "naive.csv", []byte("date,time,open,high,low,close,volume\n"+
		"2024-01-02,2024-01-02 09:30,1,2,0.5,1.5,10\n2024-01-03,2024-01-03 09:30,1.5,2.5,1,2,20\n"))
	opts := []struct {
		name string
		opt  Options
	}{
		{"defaults", Options{}},
		{"New York", Options{Location: ny}},
		{"Tokyo", Options{Location: tokyo}},
		{"time column", Options{TimeColumn: "time"}},
		{"time column, Tokyo", Options{TimeColumn: "time", Location: tokyo}},
		{"forced layout", Options{Layout: LayoutCSV}},
		{"longer lines allowed", Options{Limits: Limits{MaxLine: 8 << 10}}},
	}
	for round := range 2 { // the second round hits every entry the first wrote
		for i, o := range opts {
			got, err := Open(p, o.opt)
			if err != nil {
				t.Fatal(o.name, err)
			}
			want, err := freshParse(t, p, o.opt)
			if err != nil {
				t.Fatal(o.name, err)
			}
			sameDataset(t, o.name, want, got)
			if n := len(entries(t, cache)); round == 0 && n != i+1 {
				t.Fatalf("%s: %d entries, want %d", o.name, n, i+1)
			}
		}
	}
	if n := len(entries(t, cache)); n != len(opts) {
		t.Errorf("%d entries after the second round, want %d", n, len(opts))
	}
	// A zone of the same name and other rules (a tz database update)
	// shares the slot and misses: its entry replaces the other's.
	for _, loc := range []*time.Location{time.FixedZone("X", 3600), time.FixedZone("X", 7200), time.FixedZone("X", 3600)} {
		got, err := Open(p, Options{Location: loc})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := freshParse(t, p, Options{Location: loc})
		sameDataset(t, "zone X", want, got)
	}
	// Limits: the cached file is refused as its parse refuses it.
	for _, lim := range []Limits{{MaxBytes: 50}, {MaxFields: 3}} {
		_, err := Open(p, Options{Limits: lim})
		_, want := freshParse(t, p, Options{Limits: lim})
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("limits %+v: %v, want %v", lim, err, want)
		}
	}
	// A LEAN asset: a file cached as equity is not served as crypto.
	lean := testdata + "lean_spy_hour_head.csv.gz"
	for _, asset := range []string{"equity", "crypto", "equity"} {
		got, err := Open(lean, Options{LEANAsset: asset})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := freshParse(t, lean, Options{LEANAsset: asset})
		sameDataset(t, asset, want, got)
	}
}

// TestCacheDamagedEntry: an entry with a byte flipped anywhere, cut short
// or grown is a miss, never an error: the load parses and writes a good
// entry again.
func TestCacheDamagedEntry(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvCacheDir, cache)
	p := testdata + "binance_archive_FILUSDT-1m-2023-08_head.csv"
	want, err := freshParse(t, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(p, Options{}); err != nil {
		t.Fatal(err)
	}
	stored := entries(t, cache)
	if len(stored) != 1 {
		t.Fatalf("%d entries", len(stored))
	}
	entry := stored[0]
	good := readFile(t, entry)
	flip := func(at int) func([]byte) []byte {
		return func(b []byte) []byte { b[at] ^= 0x10; return b }
	}
	metaEnd := parsedHeaderLen + len(appendMeta(nil, want))
	damages := []struct {
		name string
		hurt func([]byte) []byte
	}{
		{"magic", flip(0)}, {"version", flip(8)}, {"meta length", flip(12)}, {"bar count", flip(16)},
		{"key", flip(40)}, {"crc", flip(parsedCRCAt)}, {"reserved", flip(61)}, {"meta: name", flip(parsedHeaderLen + 3)},
		{"meta: last byte", flip(metaEnd - 1)}, {"first time", flip(len(good) - 6*8*2000)},
		{"a close", flip(len(good) - 2*8*2000 + 8*1234 + 3)}, {"last byte", flip(len(good) - 1)},
		{"empty", func(b []byte) []byte { return nil }},
		{"header only", func(b []byte) []byte { return b[:parsedHeaderLen] }},
		{"cut in the meta", func(b []byte) []byte { return b[:metaEnd-2] }},
		{"cut by half", func(b []byte) []byte { return b[:len(b)/2] }},
		{"one byte short", func(b []byte) []byte { return b[:len(b)-1] }},
		{"one byte more", func(b []byte) []byte { return append(b, 0) }},
		{"a bar more", func(b []byte) []byte { return append(b, make([]byte, 48)...) }},
		{"not a file", func(b []byte) []byte { return nil }},
	}
	for _, dm := range damages {
		if dm.name == "not a file" {
			os.Remove(entry)
			os.Mkdir(entry, 0o700)
		} else {
			writeFixture(t, cache, filepath.Base(entry), dm.hurt(bytes.Clone(good)))
		}
		got, err := Open(p, Options{})
		if err != nil {
			t.Fatalf("%s: %v", dm.name, err)
		}
		sameDataset(t, dm.name, want, got)
		if dm.name == "not a file" {
			os.Remove(entry)
			continue
		}
		if !bytes.Equal(readFile(t, entry), good) {
			t.Errorf("%s: the entry was not written again", dm.name)
		}
	}
}

// TestCacheUnwritable: a cache folder that cannot be made or written
// costs nothing but the parse.
func TestCacheUnwritable(t *testing.T) {
	file := writeFixture(t, t.TempDir(), "a-file", []byte("x"))
	p := testdata + "binance_archive_FILUSDT-1m-2023-08_head.csv"
	want, err := freshParse(t, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{file, filepath.Join(file, "below")}
	if runtime.GOOS != "windows" && os.Geteuid() != 0 {
		ro := t.TempDir()
		os.Chmod(ro, 0o500)
		t.Cleanup(func() { os.Chmod(ro, 0o700) })
		dirs = append(dirs, ro)
	}
	for _, dir := range dirs {
		t.Setenv(EnvCacheDir, dir)
		for range 2 {
			got, err := Open(p, Options{})
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			sameDataset(t, dir, want, got)
		}
	}
	if b := readFile(t, file); string(b) != "x" {
		t.Errorf("the file named as the cache folder changed: %q", b)
	}
}

// TestCacheOff: SWEEPBENCH_CACHE_DIR=off loads without writing anything,
// anywhere; unset, the cache lives in the user's cache folder.
func TestCacheOff(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "xdg"))
	t.Setenv("LocalAppData", filepath.Join(home, "xdg")) // Windows
	t.Setenv(EnvCacheDir, "")
	if got, want := CacheDir(), filepath.Join(home, "xdg", "sweepbench", "datasets"); got != want && runtime.GOOS != "darwin" {
		t.Errorf("CacheDir() = %q, want %q", got, want)
	}
	for _, off := range []string{"off", "OFF", " off "} {
		t.Setenv(EnvCacheDir, off)
		if CacheDir() != "" {
			t.Errorf("%s=%q: CacheDir() = %q", EnvCacheDir, off, CacheDir())
		}
		p := testdata + "binance_archive_FILUSDT-1m-2023-08_head.csv"
		for _, spec := range []string{p, p, DefaultDataset} {
			if _, err := Open(spec, Options{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Open(DefaultDataset, Options{Location: time.UTC}); err != nil {
			t.Fatal(err)
		}
	}
	filepath.WalkDir(home, func(p string, _ os.DirEntry, err error) error {
		if p != home {
			t.Errorf("written with the cache off: %s", p)
		}
		return err
	})
	if _, err := os.Stat("off"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a folder named off: %v", err)
	}
}

// TestCachePrivate: the cache folder is made 0700 and its entries 0600
// (they name the user's data files); no temporary file stays behind.
func TestCachePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	dir := filepath.Join(t.TempDir(), "cache", "datasets")
	t.Setenv(EnvCacheDir, dir)
	if _, err := Open(testdata+"binance_archive_FILUSDT-1m-2023-08_head.csv", Options{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if m := stamp(t, d).Mode().Perm(); m != 0o700 {
			t.Errorf("%s: mode %v, want 0700", d, m)
		}
	}
	all, _ := os.ReadDir(dir)
	if len(all) != 1 || !strings.HasSuffix(all[0].Name(), ".bars") {
		t.Fatalf("cache folder holds %v", all)
	}
	if m := stamp(t, filepath.Join(dir, all[0].Name())).Mode().Perm(); m != 0o600 {
		t.Errorf("entry mode %v, want 0600", m)
	}
}

// TestZoneRules: the key sees a zone's rules, not only its name.
func TestZoneRules(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	if zoneRules(ny) != zoneRules(ny) || zoneRulesOf(nil) != zoneRules(ny) {
		t.Error("New York's rules differ from themselves")
	}
	if zoneRules(time.FixedZone("X", 3600)) == zoneRules(time.FixedZone("X", 7200)) {
		t.Error("two fixed zones of one name and different offsets share rules")
	}
	if zoneRules(time.UTC) == zoneRules(ny) {
		t.Error("UTC has New York's rules")
	}
}
