package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testdata is the repository's shared test data folder (see its README.md).
const testdata = "../../testdata/data/"

func utc(y int, mo time.Month, d, h, mi int) time.Time {
	return time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
}

// ohlcv is one bar's values as written in the file.
type ohlcv [5]float64

func barAt(b *Bars, i int) ohlcv {
	return ohlcv{b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]}
}

// TestLayouts loads each layout from real files and checks what was read
// against the values in the files (read by eye with zcat/head/tail).
func TestLayouts(t *testing.T) {
	filFirst := ohlcv{4.255, 4.256, 4.252, 4.252, 25259.1}
	tests := []struct {
		name, spec  string
		opt         Options
		layout      string
		bars        int
		first, last time.Time
		firstBar    ohlcv
		lastClose   float64
		gaps        int
		largestGap  time.Duration
		median      time.Duration
	}{
		{name: "prepared csv.gz, Unix seconds", spec: testdata + "btcusdt_1h_2022-2026.csv.gz", layout: LayoutCSV,
			bars: 37923, first: utc(2022, 1, 1, 0, 0), last: utc(2026, 4, 30, 3, 0),
			firstBar:  ohlcv{46216.93, 46731.39, 46208.37, 46656.13, 1503.33095},
			lastClose: 75928.1, gaps: 1, largestGap: 2 * time.Hour, median: time.Hour},
		{name: "prepared csv.gz, ISO 8601 with offset", spec: testdata + "spy_1h_1998-2021.csv.gz", layout: LayoutCSV,
			// 1998-01-02T09:00:00-05:00 .. 2021-03-31T15:00:00-04:00
			bars: 40832, first: utc(1998, 1, 2, 14, 0), last: utc(2021, 3, 31, 19, 0),
			firstBar: ohlcv{97.31, 97.53, 97.03, 97.03, 384500}, lastClose: 396.33,
			gaps: 5848, largestGap: 162 * time.Hour, median: time.Hour},
		{name: "Binance archive with header, ms", spec: testdata + "binance_archive_FILUSDT-1m-2023-08_head.csv",
			layout: LayoutBinanceArchive, bars: 2000, first: utc(2023, 8, 1, 0, 0), last: utc(2023, 8, 2, 9, 19),
			firstBar: filFirst, lastClose: 4.252, median: time.Minute},
		{name: "Binance archive with header, gzip", spec: testdata + "binance_archive_FILUSDT-1m-2023-08_head.csv.gz",
			layout: LayoutBinanceArchive, bars: 2000, first: utc(2023, 8, 1, 0, 0), last: utc(2023, 8, 2, 9, 19),
			firstBar: filFirst, lastClose: 4.252, median: time.Minute},
		{name: "Binance archive with header, microseconds", spec: testdata + "binance_archive_FILUSDT-1m-2023-08_head_us.csv.gz",
			layout: LayoutBinanceArchive, bars: 2000, first: utc(2023, 8, 1, 0, 0), last: utc(2023, 8, 2, 9, 19),
			firstBar: filFirst, lastClose: 4.252, median: time.Minute},
		{name: "Binance archive without header", spec: testdata + "binance_archive_FILUSDT-1m-2023-08_head_noheader.csv.gz",
			layout: LayoutBinanceArchiveNoHeader, bars: 2000, first: utc(2023, 8, 1, 0, 0), last: utc(2023, 8, 2, 9, 19),
			firstBar: filFirst, lastClose: 4.252, median: time.Minute},
		{name: "freqtrade JSON", spec: testdata + "freqtrade_BTC_USDT-1m_head.json.gz", layout: LayoutFreqtradeJSON,
			bars: 2000, first: utc(2025, 6, 1, 17, 23), last: utc(2025, 6, 3, 2, 42),
			firstBar: ohlcv{105100.69, 105114.88, 105100.69, 105114.88, 4.61751}, lastClose: 106048.5, median: time.Minute},
		{name: "Binance klines JSON", spec: testdata + "binance_klines_BTCUSDT-1h-2023-03.json.gz", layout: LayoutBinanceKlinesJSON,
			bars: 743, first: utc(2023, 3, 1, 0, 0), last: utc(2023, 3, 31, 23, 0),
			firstBar:  ohlcv{23141.57, 23219.99, 23020.03, 23101, 12736.94918},
			lastClose: 28465.36, gaps: 1, largestGap: 2 * time.Hour, median: time.Hour},
		{name: "LEAN hour bars, equity: New York", spec: testdata + "lean_spy_hour_head.csv.gz", opt: Options{LEANAsset: "equity"}, layout: LayoutLEANCSV,
			// 19980102 09:00 (EST) .. 19990223 10:00 (EST); 973100 / 10000 = 97.31
			bars: 2000, first: utc(1998, 1, 2, 14, 0), last: utc(1999, 2, 23, 15, 0),
			firstBar: ohlcv{97.31, 97.53, 97.03, 97.03, 384500}, lastClose: 128.06,
			gaps: 286, largestGap: 92 * time.Hour, median: time.Hour},
		{name: "LEAN with an explicit zone", spec: testdata + "lean_spy_hour_head.csv.gz", opt: Options{Location: time.UTC, LEANAsset: "equity"},
			layout: LayoutLEANCSV, bars: 2000, first: utc(1998, 1, 2, 9, 0), last: utc(1999, 2, 23, 10, 0),
			firstBar: ohlcv{97.31, 97.53, 97.03, 97.03, 384500}, lastClose: 128.06,
			gaps: 286, largestGap: 92 * time.Hour, median: time.Hour},
		{name: "semicolon, decimal commas, CRLF", spec: testdata + "filusdt_1m_semicolon_head.csv", layout: LayoutCSVSemicolon,
			bars: 30, first: utc(2023, 8, 1, 0, 0), last: utc(2023, 8, 1, 0, 29),
			firstBar: filFirst, lastClose: 4.265, median: time.Minute},
		{name: "embedded default", spec: DefaultDataset, layout: LayoutCSV,
			bars: 175680, first: utc(2023, 8, 1, 0, 0), last: utc(2023, 11, 30, 23, 59),
			firstBar: filFirst, lastClose: 4.387, median: time.Minute},
		{name: "embedded btcusdt-1m", spec: "embedded:btcusdt-1m", layout: LayoutCSV,
			bars: 43208, first: utc(2025, 6, 1, 17, 23), last: utc(2025, 7, 1, 17, 30),
			firstBar: ohlcv{105100.69, 105114.88, 105100.69, 105114.88, 4.61751}, lastClose: 106185.13, median: time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(tc.spec, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			in := d.Info
			if in.Layout != tc.layout {
				t.Errorf("layout %q, want %q", in.Layout, tc.layout)
			}
			if in.Bars != tc.bars || d.Bars.Len() != tc.bars || in.SourceBars != tc.bars {
				t.Errorf("bars: info %d, len %d, source %d; want %d", in.Bars, d.Bars.Len(), in.SourceBars, tc.bars)
			}
			if !in.First.Equal(tc.first) || !in.Last.Equal(tc.last) {
				t.Errorf("range %v .. %v, want %v .. %v", in.First, in.Last, tc.first, tc.last)
			}
			if in.First.Location() != time.UTC {
				t.Errorf("First not in UTC: %v", in.First.Location())
			}
			if got := barAt(&d.Bars, 0); got != tc.firstBar {
				t.Errorf("first bar %v, want %v", got, tc.firstBar)
			}
			if got := d.Bars.Close[d.Bars.Len()-1]; got != tc.lastClose {
				t.Errorf("last close %v, want %v", got, tc.lastClose)
			}
			if in.Gaps != tc.gaps || in.LargestGap != tc.largestGap || in.MedianSpacing != tc.median {
				t.Errorf("gaps %d largest %v median %v, want %d %v %v", in.Gaps, in.LargestGap, in.MedianSpacing,
					tc.gaps, tc.largestGap, tc.median)
			}
			if in.DroppedNaN != 0 || in.Timeframe != "" {
				t.Errorf("dropped %d timeframe %q", in.DroppedNaN, in.Timeframe)
			}
			checkBars(t, &d.Bars)
		})
	}
}

// checkBars asserts the invariants Bars documents.
func checkBars(t testing.TB, b *Bars) {
	t.Helper()
	n := len(b.Time)
	if len(b.Open) != n || len(b.High) != n || len(b.Low) != n || len(b.Close) != n || len(b.Volume) != n {
		t.Fatalf("column lengths differ: %d %d %d %d %d %d", n, len(b.Open), len(b.High), len(b.Low), len(b.Close), len(b.Volume))
	}
	for i := 0; i < n; i++ {
		if i > 0 && b.Time[i] <= b.Time[i-1] {
			t.Fatalf("bar %d: time %d not after %d", i, b.Time[i], b.Time[i-1])
		}
		for _, p := range []float64{b.Open[i], b.High[i], b.Low[i], b.Close[i]} {
			if !(p > 0) || math.IsInf(p, 0) {
				t.Fatalf("bar %d: price %v", i, p)
			}
		}
		if b.High[i] < b.Low[i] {
			t.Fatalf("bar %d: high %v < low %v", i, b.High[i], b.Low[i])
		}
		if !(b.Volume[i] >= 0) || math.IsInf(b.Volume[i], 0) {
			t.Fatalf("bar %d: volume %v", i, b.Volume[i])
		}
	}
}

// TestLayoutsAgree cross-checks loaders against each other: the layout
// samples are cut from the same exchange data as the prepared files, so two
// different parsers (and, for LEAN, a local-time path against an offset
// path) must give identical bars.
func TestLayoutsAgree(t *testing.T) {
	tests := []struct {
		name, a, b string
		offset     int // bar index in b where a starts
	}{
		{"Binance archive = prepared FIL", testdata + "binance_archive_FILUSDT-1m-2023-08_head.csv", DefaultDataset, 0},
		{"Binance archive (us) = prepared FIL", testdata + "binance_archive_FILUSDT-1m-2023-08_head_us.csv.gz", DefaultDataset, 0},
		{"freqtrade = prepared BTC 1m", testdata + "freqtrade_BTC_USDT-1m_head.json.gz", "embedded:btcusdt-1m", 0},
		// 2023-03-01 00:00 is bar 10176 of the hourly file: 424 days of 24 bars from 2022-01-01.
		{"klines = prepared BTC 1h", testdata + "binance_klines_BTCUSDT-1h-2023-03.json.gz", testdata + "btcusdt_1h_2022-2026.csv.gz", 424 * 24},
		{"LEAN (New York local) = prepared SPY (offsets)", testdata + "lean/equity/usa/hour/spy.zip", testdata + "spy_1h_1998-2021.csv.gz", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Open(tc.a, Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := Open(tc.b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < a.Bars.Len(); i++ {
				j := tc.offset + i
				if a.Bars.Time[i] != b.Bars.Time[j] || barAt(&a.Bars, i) != barAt(&b.Bars, j) {
					t.Fatalf("bar %d: %v %v, other file bar %d: %v %v", i, a.Bars.Time[i], barAt(&a.Bars, i),
						j, b.Bars.Time[j], barAt(&b.Bars, j))
				}
			}
		})
	}
}

// TestGzipTransparent: a .gz loads as its content, the hash is of the bytes
// as stored, and gzip is found by its magic bytes whatever the name.
func TestGzipTransparent(t *testing.T) {
	plainPath := testdata + "binance_archive_FILUSDT-1m-2023-08_head.csv"
	gzPath := plainPath + ".gz"
	plain, err := LoadFile(plainPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := LoadFile(gzPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < plain.Bars.Len(); i++ {
		if plain.Bars.Time[i] != gz.Bars.Time[i] || barAt(&plain.Bars, i) != barAt(&gz.Bars, i) {
			t.Fatalf("bar %d differs", i)
		}
	}
	for _, d := range []*Dataset{plain, gz} {
		raw, err := os.ReadFile(d.Info.Path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(raw)
		if d.Info.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: SHA256 %s is not the hash of the stored bytes", d.Info.Path, d.Info.SHA256)
		}
		if d.Info.Name != d.Info.Path {
			t.Errorf("Name %q, Path %q", d.Info.Name, d.Info.Path)
		}
	}
	// sha256sum of the plain file, computed outside Go.
	if plain.Info.SHA256 != "ea1cb8d05e3a942fae51d61550daa10399e23a173ed4162c6ba05a8ef0eadfe3" {
		t.Errorf("plain SHA256 %s", plain.Info.SHA256)
	}
	raw, err := os.ReadFile(gzPath)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(bytes.NewReader(raw), "download.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Info.Bars != 2000 || d.Info.Layout != LayoutBinanceArchive || d.Info.SHA256 != gz.Info.SHA256 || d.Info.Path != "" {
		t.Errorf("gzip under another name: %+v", d.Info)
	}
}

// TestDroppedNaN reads a file in the Kaggle Bitstamp layout (header
// Timestamp,Open,High,Low,Close,Volume_(BTC),...; minutes without trades as
// NaN rows, and as empty fields the way pandas writes NaN).
func TestDroppedNaN(t *testing.T) {
	d, err := LoadFile(testdata+"bitstamp_kaggle_like.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Info.DroppedNaN != 4 || d.Info.Bars != 3 {
		t.Fatalf("dropped %d bars %d, want 4 and 3", d.Info.DroppedNaN, d.Info.Bars)
	}
	wantTimes := []int64{1325317920, 1325318160, 1325318280}
	wantBars := []ohlcv{
		{4.39, 4.39, 4.39, 4.39, 0.45558087}, // Volume_(BTC) is the volume column
		{4.39, 4.39, 4.39, 4.39, 48},
		{4.5, 4.57, 4.5, 4.57, 37.86229723},
	}
	for i := range wantTimes {
		if d.Bars.Time[i] != wantTimes[i]*1e9 || barAt(&d.Bars, i) != wantBars[i] {
			t.Errorf("bar %d: %d %v, want %d %v", i, d.Bars.Time[i], barAt(&d.Bars, i), wantTimes[i]*1e9, wantBars[i])
		}
	}
	// 07:52, 07:56, 07:58: spacings 4m and 2m, lower median 2m, one gap of 4m.
	if d.Info.MedianSpacing != 2*time.Minute || d.Info.Gaps != 1 || d.Info.LargestGap != 4*time.Minute {
		t.Errorf("median %v gaps %d largest %v", d.Info.MedianSpacing, d.Info.Gaps, d.Info.LargestGap)
	}
}

// TestCSVColumns covers header handling: case, extra columns, optional
// volume, the time column option, date-only values in a zone.
func TestCSVColumns(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		in     string
		opt    Options
		times  []time.Time
		first  ohlcv
		layout string
	}{
		{name: "upper case, extra columns, no volume",
			in:    "Symbol,Date,Close,Open,Low,High,Adj Close\nSPY,2024-01-02,472.65,472.16,470.49,473.67,466.6\nSPY,2024-01-03,468.79,470.43,468.17,471.19,462.75\n",
			times: []time.Time{utc(2024, 1, 2, 0, 0), utc(2024, 1, 3, 0, 0)}, first: ohlcv{472.16, 473.67, 470.49, 472.65, 0}},
		{name: "date-only in the exchange zone",
			in:  "date,open,high,low,close,volume\n2024-01-02,472.16,473.67,470.49,472.65,123726500\n2024-07-02,543.7,549.01,543.65,549.01,40434800\n",
			opt: Options{Location: ny},
			// midnight EST = 05:00 UTC, midnight EDT = 04:00 UTC
			times: []time.Time{utc(2024, 1, 2, 5, 0), utc(2024, 7, 2, 4, 0)}, first: ohlcv{472.16, 473.67, 470.49, 472.65, 123726500}},
		{name: "time column option picks another column",
			in:    "date,bar_start_utc,open,high,low,close,volume\n2023-08-01,1690848000,4.255,4.256,4.252,4.252,25259.1\n2023-08-01,1690848060,4.251,4.253,4.251,4.253,2476.0\n",
			opt:   Options{TimeColumn: "Bar_Start_UTC"},
			times: []time.Time{utc(2023, 8, 1, 0, 0), utc(2023, 8, 1, 0, 1)}, first: ohlcv{4.255, 4.256, 4.252, 4.252, 25259.1}},
		{name: "open_time preferred over timestamp, naive ISO local time, quoted fields, BOM",
			in:    "\ufefftimestamp,\"open_time\",open,high,low,close,volume\nx,2023-08-01 02:00,\"4.255\",4.256,4.252,4.252,1\nx,2023-08-01 02:01,4.251,4.253,4.251,4.253,2\n",
			opt:   Options{Location: time.FixedZone("CEST", 2*3600)},
			times: []time.Time{utc(2023, 8, 1, 0, 0), utc(2023, 8, 1, 0, 1)}, first: ohlcv{4.255, 4.256, 4.252, 4.252, 1}},
		{name: "forced layout", in: "timestamp,open,high,low,close\n1,1,1,1,1\n", opt: Options{Layout: LayoutCSV},
			times: []time.Time{time.Unix(1, 0)}, first: ohlcv{1, 1, 1, 1, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse(bytes.NewReader([]byte(tc.in)), "t.csv", tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if d.Bars.Len() != len(tc.times) {
				t.Fatalf("%d bars, want %d", d.Bars.Len(), len(tc.times))
			}
			for i, want := range tc.times {
				if d.Bars.Time[i] != want.UnixNano() {
					t.Errorf("bar %d time %v, want %v", i, time.Unix(0, d.Bars.Time[i]).UTC(), want.UTC())
				}
			}
			if got := barAt(&d.Bars, 0); got != tc.first {
				t.Errorf("first bar %v, want %v", got, tc.first)
			}
			if d.Info.Layout != LayoutCSV || d.Info.Name != "t.csv" {
				t.Errorf("info %+v", d.Info)
			}
		})
	}
}

// TestLoadAllocations guards the speed claim: loading the 175,680-bar FIL
// file allocates about once per row (encoding/csv's line string), not once
// per field. The wall time is measured by BenchmarkLoadFIL.
func TestLoadAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 175,680 bars")
	}
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := Open(DefaultDataset, Options{}); err != nil {
			t.Fatal(err)
		}
	})
	if perBar := allocs / 175680; perBar > 1.05 {
		t.Errorf("%.0f allocations, %.2f per bar", allocs, perBar)
	}
}

// BenchmarkLoadFIL measures loading the default dataset (gunzip, parse,
// validate, stats).
func BenchmarkLoadFIL(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Open(DefaultDataset, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSharedData loads every prepared file of the shared data folder when it
// is present (it is outside the repository) and checks the bar counts its
// README gives.
func TestSharedData(t *testing.T) {
	const dir = "/work/shared/data"
	want := map[string]int{
		"filusdt_1m_2023-08_2023-11.csv.gz": 175680, "btcusdt_1m_2025-06.csv.gz": 43208,
		"ethusdt_1m_2025-06.csv.gz": 43208, "btcusdt_15m_2025-2026.csv.gz": 46673,
		"btcusdt_1h_2022-2026.csv.gz": 37923, "spy_1h_1998-2021.csv.gz": 40832,
	}
	if _, err := os.Stat(dir); err != nil || testing.Short() {
		t.Skip("shared data folder not present")
	}
	for name, bars := range want {
		d, err := LoadFile(filepath.Join(dir, name), Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if d.Info.Bars != bars {
			t.Errorf("%s: %d bars, want %d", name, d.Info.Bars, bars)
		}
	}
}
