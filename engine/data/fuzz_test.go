package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// The fuzz targets feed arbitrary bytes to Parse with each layout forced
// (and once with detection), seeded with the first 20 lines (JSON: records)
// of the real files. Whatever the input, Parse must not panic, must return
// either an *Error or a Dataset that keeps every invariant of Bars and Info,
// and the Dataset must resample without breaking them.
//
// Run one at a time, e.g.
//
//	go test ./engine/data -run '^$' -fuzz '^FuzzParseCSV$' -fuzztime 1000000x -parallel 1

// headLines returns the first n lines of a testdata file (gunzipped).
func headLines(f *testing.F, name string, n int) []byte {
	f.Helper()
	raw := readTestdata(f, name)
	end := 0
	for i := 0; i < n && end < len(raw); i++ {
		k := bytes.IndexByte(raw[end:], '\n')
		if k < 0 {
			end = len(raw)
			break
		}
		end += k + 1
	}
	return raw[:end]
}

// headRecords returns a JSON array of the first n records of a testdata
// JSON file (records are "[...]" elements of the outer array).
func headRecords(f *testing.F, name string, n int) []byte {
	f.Helper()
	raw := readTestdata(f, name)
	depth, count := 0, 0
	for i, c := range raw {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 1 {
				if count++; count == n {
					return append(append([]byte{}, raw[:i+1]...), ']')
				}
			}
		}
	}
	return raw
}

func readTestdata(f *testing.F, name string) []byte {
	raw, err := os.ReadFile(testdata + name)
	if err != nil {
		f.Fatal(err)
	}
	if isGzip(raw) {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			f.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			f.Fatal(err)
		}
	}
	return raw
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// fuzzCheck parses data and checks the result's invariants.
func fuzzCheck(t *testing.T, data []byte, opt Options) {
	d, err := Parse(bytes.NewReader(data), "fuzz.csv", opt)
	if err != nil {
		var de *Error
		if !errors.As(err, &de) {
			t.Fatalf("error %T is not *Error: %v", err, err)
		}
		if d != nil {
			t.Fatal("dataset and error both returned")
		}
		if de.Error() == "" {
			t.Fatal("empty message")
		}
		return
	}
	checkDataset(t, d)
	if d.Info.SourceBars != d.Info.Bars || d.Info.Timeframe != "" {
		t.Fatalf("not resampled, yet SourceBars %d Bars %d Timeframe %q", d.Info.SourceBars, d.Info.Bars, d.Info.Timeframe)
	}
	for _, tf := range []time.Duration{2 * d.Info.MedianSpacing, time.Hour} {
		if tf <= 0 {
			continue
		}
		r, err := d.Resample(tf)
		if err != nil {
			continue // finer than or not a multiple of the spacing, or at the edge of the time range
		}
		checkDataset(t, r)
		if r.Info.Bars > d.Info.Bars || r.Info.SourceBars != d.Info.Bars || r.Info.Timeframe != FormatTimeframe(tf) {
			t.Fatalf("resampled %d -> %d bars (source %d), timeframe %q", d.Info.Bars, r.Info.Bars, r.Info.SourceBars, r.Info.Timeframe)
		}
		for i, ts := range r.Bars.Time {
			if ts%int64(tf) != 0 {
				t.Fatalf("resampled bar %d at %d not aligned to %v", i, ts, tf)
			}
		}
	}
}

// checkDataset asserts the Bars invariants and that Info describes the bars.
func checkDataset(t *testing.T, d *Dataset) {
	t.Helper()
	checkBars(t, &d.Bars)
	in, b := d.Info, &d.Bars
	n := b.Len()
	if n == 0 || in.Bars != n {
		t.Fatalf("Info.Bars %d, %d bars", in.Bars, n)
	}
	if !in.First.Equal(b.First()) || !in.Last.Equal(b.Last()) {
		t.Fatalf("First/Last %v %v, bars %v %v", in.First, in.Last, b.First(), b.Last())
	}
	if in.DroppedNaN < 0 || in.Gaps < 0 || in.Gaps > n-1 || in.MedianSpacing < 0 || (in.Gaps > 0) != (in.LargestGap > in.MedianSpacing) {
		t.Fatalf("stats %+v", in)
	}
	if n > 1 && in.MedianSpacing == 0 {
		t.Fatalf("median spacing 0 with %d bars", n)
	}
	if !(in.MinPrice > 0) || in.MinPrice > in.MaxPrice {
		t.Fatalf("price range %v %v", in.MinPrice, in.MaxPrice)
	}
}

func FuzzParseCSV(f *testing.F) {
	f.Add(headLines(f, "btcusdt_1h_2022-2026.csv.gz", 20), false)
	f.Add(headLines(f, "spy_1h_1998-2021.csv.gz", 20), true)
	f.Add(readTestdata(f, "bitstamp_kaggle_like.csv"), false)
	f.Add([]byte("date,open,high,low,close,volume\n2024-03-10,1,2,1,2,5\n2024-03-10 01:59:59.5,1,2,1,2,5\n2024-03-10 03:00+01:00,1,2,1,2,5\n"), true)
	f.Add([]byte("Time,Open,High,Low,Close\n\"2023-11-05 01:30\",1,1,1,1\n1699162200000,\"1,5\",1,1,1\n"), true)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, inNY bool) {
		opt := Options{Layout: LayoutCSV}
		if inNY {
			opt.Location = ny
		}
		fuzzCheck(t, data, opt)
	})
}

func FuzzParseSemicolon(f *testing.F) {
	f.Add(headLines(f, "filusdt_1m_semicolon_head.csv", 20))
	f.Add([]byte("Date;Open;High;Low;Close;Volume\n2023-08-01;4.255;4.256;4.252;4.252;25259.1\n2023-08-02;4,2;4;4;4;1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, Options{Layout: LayoutCSVSemicolon})
	})
}

func FuzzParseBinance(f *testing.F) {
	f.Add(headLines(f, "binance_archive_FILUSDT-1m-2023-08_head.csv", 20))
	f.Add(headLines(f, "binance_archive_FILUSDT-1m-2023-08_head_us.csv.gz", 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, Options{Layout: LayoutBinanceArchive})
	})
}

func FuzzParseBinanceNoHeader(f *testing.F) {
	f.Add(headLines(f, "binance_archive_FILUSDT-1m-2023-08_head_noheader.csv.gz", 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, Options{Layout: LayoutBinanceArchiveNoHeader})
	})
}

func FuzzParseFreqtrade(f *testing.F) {
	f.Add(headRecords(f, "freqtrade_BTC_USDT-1m_head.json.gz", 20))
	f.Add([]byte(`[[1748798580000,null,null,null,null,null],[1748798640000,"1.5",2,1,1.5,0]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, Options{Layout: LayoutFreqtradeJSON})
	})
}

func FuzzParseKlines(f *testing.F) {
	f.Add(headRecords(f, "binance_klines_BTCUSDT-1h-2023-03.json.gz", 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, Options{Layout: LayoutBinanceKlinesJSON})
	})
}

func FuzzParseLEAN(f *testing.F) {
	f.Add(headLines(f, "lean_spy_hour_head.csv.gz", 20))
	f.Add([]byte("20231104 15:00,42010000,42100000,41900000,42000000,100\n20231105 01:30,42010000,42100000,41900000,42000000,100\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, Options{Layout: LayoutLEANCSV})
	})
}

// FuzzParse goes through layout detection and gzip.
func FuzzParse(f *testing.F) {
	for _, s := range [][]byte{
		headLines(f, "btcusdt_1h_2022-2026.csv.gz", 20),
		headLines(f, "filusdt_1m_semicolon_head.csv", 20),
		headLines(f, "binance_archive_FILUSDT-1m-2023-08_head.csv", 20),
		headLines(f, "binance_archive_FILUSDT-1m-2023-08_head_noheader.csv.gz", 20),
		headRecords(f, "freqtrade_BTC_USDT-1m_head.json.gz", 20),
		headRecords(f, "binance_klines_BTCUSDT-1h-2023-03.json.gz", 20),
		headLines(f, "lean_spy_hour_head.csv.gz", 20),
	} {
		f.Add(s)
		f.Add(gzipBytes(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, Options{})
	})
}

// FuzzParseTimestamp checks parsed timestamps against time.Date. The input
// holds several timestamps, one per line, read by one parser, so that the
// zone cache carries state from one to the next as it does down a file.
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{
		"2024-03-10 01:30\n2024-03-10 03:00\n2024-11-03 00:59",
		"2023-11-05 01:59:59.999\n2023-11-05 02:00:00",
		"20231104 15:00\n1998-01-02T09:00:00-05:00\n2024-01-02",
		"1690848000\n1690848000000\n1690848000000000\n1690848000000000000",
		"2023-08-01 00:00:00 UTC\n2023-08-01T05:30:00+05:30\n1969-12-31",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string, inNY bool) {
		loc := time.UTC
		if inNY {
			loc = ny
		}
		tp := newTimeParser(loc)
		for _, s := range strings.Split(in, "\n") {
			got, reason := tp.parse(s)
			s = strings.TrimSpace(s)
			c, off, hasOff, ok := parseISO(s)
			if !ok || isUnixNumber(s) {
				continue
			}
			want := time.Date(c.year, time.Month(c.month), c.day, c.hour, c.min, c.sec, c.nsec, loc)
			if hasOff {
				want = time.Date(c.year, time.Month(c.month), c.day, c.hour, c.min, c.sec, c.nsec, time.FixedZone("", int(off)))
			}
			inRange := want.Year() >= 1679 && want.Year() <= 2261
			switch {
			case reason != "" && !inRange:
			case reason != "" && !hasOff && (want.Hour() != c.hour || want.Minute() != c.min ||
				want.Add(-time.Hour).In(loc).Hour() == c.hour || want.Add(time.Hour).In(loc).Hour() == c.hour):
				// skipped or repeated at a DST change
			case reason != "":
				t.Fatalf("%q: %s", s, reason)
			case got != want.UnixNano():
				t.Fatalf("%q: got %v, want %v", s, time.Unix(0, got).UTC(), want.UTC())
			}
		}
	})
}

// fuzzCheckNamed is fuzzCheck for a named input: the name carries a zip
// member or a LEAN path.
func fuzzCheckNamed(t *testing.T, data []byte, name string, opt Options) {
	d, err := Parse(bytes.NewReader(data), name, opt)
	if err != nil {
		var de *Error
		if !errors.As(err, &de) {
			t.Fatalf("error %T is not *Error: %v", err, err)
		}
		if d != nil || de.Error() == "" {
			t.Fatalf("dataset %v with error %v", d != nil, err)
		}
		for _, c := range de.Error() {
			if c < 0x20 || c == 0x7f {
				t.Fatalf("control character %U in %q", c, de.Error())
			}
		}
		return
	}
	checkDataset(t, d)
}

// FuzzParseZip feeds arbitrary zips (seeded with a Binance monthly zip,
// one with several members and a gzip inside one) to Parse, with and
// without a member named.
func FuzzParseZip(f *testing.F) {
	dir := f.TempDir()
	for i, members := range [][]zipMember{
		{{"BTCUSDT-1m-2024-01.csv", []byte(binanceRows)}},
		{{"a.csv", []byte(hdr + goodRows(3))}, {"b.csv", []byte(binanceRows)}},
		{{"d/", nil}, {"d/x.csv.gz", gzipBytes([]byte(binanceRows))}},
	} {
		raw := readFile(f, writeZip(f, dir, fmt.Sprintf("%d.zip", i), members...))
		f.Add(raw, false)
		f.Add(raw, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, member bool) {
		name := "x.zip"
		if member {
			name = "x.zip#a.csv"
		}
		fuzzCheckNamed(t, data, name, Options{Limits: Limits{MaxBytes: 64 << 20}})
	})
}

// FuzzParseLEANDay reads arbitrary text as LEAN day files of each asset
// class (the path decides scale, zone and date), trade and quote bars.
func FuzzParseLEANDay(f *testing.F) {
	f.Add([]byte("34200000,6448000,6448000,6448000,6448000,90\n34260000,6449000,6450000,6447000,6450000,120\n"), uint8(0))
	f.Add([]byte("0,6060,6060,6048.83,6049.68,6.72374365\n60000,6049.68,6050,6049.68,6050,1.5\n"), uint8(1))
	f.Add([]byte("0,1.38676,1.38686,1.38669,1.38686,0,1.38686,1.38697,1.38680,1.38697,0\n60000,,,,,0,1.38697,1.38700,1.38690,1.38700,0\n"), uint8(2))
	f.Add([]byte("20140501 00:00,1.38676,1.38686,1.38669,1.38686,0,1.38686,1.38697,1.38680,1.38697,0\n"), uint8(3))
	paths := []string{
		"equity/usa/minute/aapl/20140605_trade.zip#20140605_aapl_minute_trade.csv",
		"crypto/coinbase/minute/btceur/20180404_trade.zip#20180404_btceur_minute_trade.csv",
		"forex/oanda/minute/eurusd/20140501_quote.csv",
		"forex/fxcm/hour/eurusd.csv",
		"cfd/oanda/second/xauusd/20240310_quote.csv",
		"option/usa/minute/aapl/20231105_trade.csv",
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		name := paths[int(which)%len(paths)]
		if i := strings.IndexByte(name, '#'); i >= 0 {
			name = name[i+1:] // Parse reads the member's name as the path
		}
		fuzzCheckNamed(t, data, name, Options{})
	})
}

// columnarSeeds are Parquet and Arrow files of the freqtrade frame (the
// Parquet ones TestColumnar's fixtures, the pandas and polars shapes too),
// written by the Arrow module's writers.
func columnarSeeds(f *testing.F) (parquet, arrowFile, arrowStream [][]byte) {
	for _, name := range []string{"freqtrade.parquet", "freqtrade_2rows.parquet", "pandas_index.parquet", "polars.parquet"} {
		parquet = append(parquet, columnarFixture(f, name))
	}
	for _, rec := range []arrow.RecordBatch{record(f, freqtradeSchema, freqtradeRows), record(f, freqtradeSchema, freqtradeRows[:2])} {
		arrowFile = append(arrowFile, writeArrow(f, rec, false))
		arrowStream = append(arrowStream, writeArrow(f, rec, true))
	}
	return
}

// FuzzParseParquet feeds arbitrary bytes after a Parquet seed to the
// Parquet reader: errors, never a panic or a hang.
func FuzzParseParquet(f *testing.F) {
	pq, _, _ := columnarSeeds(f)
	for _, s := range pq {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheckNamed(t, data, "x.parquet", Options{Limits: Limits{MaxBytes: 64 << 20}})
	})
}

// FuzzParseArrow does the same for Arrow IPC files (Feather v2) and
// streams.
func FuzzParseArrow(f *testing.F) {
	_, file, stream := columnarSeeds(f)
	for i := range file {
		f.Add(file[i])
		f.Add(stream[i])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheckNamed(t, data, "x.feather", Options{Limits: Limits{MaxBytes: 64 << 20}})
	})
}
