package data

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLEANConventions builds LEAN files in LEAN's folders from the example
// rows of the LEAN docs ("Data Format": US Equity, Equity Options, Crypto,
// Forex and CFD) and checks that the security type folder decides the
// prices' scale and the times' zone, and that the dataset says which.
func TestLEANConventions(t *testing.T) {
	dir := t.TempDir()
	const (
		// US Equity: AAPL minute, June 5 2014 (the docs' row, at 09:30 instead of 04:15).
		equityMinute = "34200000,6448000,6448000,6448000,6448000,90\n34260000,6449000,6450000,6447000,6450000,120\n"
		// Crypto: BTCEUR minute, coinbase, April 4 2018 (the docs' trade row).
		cryptoMinute = "0,6060,6060,6048.83,6049.68,6.72374365\n60000,6049.68,6050,6049.68,6050,1.5\n"
		cryptoHour   = "20180404 00:00,6060,6060,6048.83,6049.68,6.72374365\n20180404 01:00,6049.68,6050,6049.68,6050,1.5\n"
		// Forex: EURUSD minute, oanda, May 1 2014 (the docs' quote row).
		forexMinute = "0,1.38676,1.38686,1.38669,1.38686,0,1.38686,1.38697,1.38680,1.38697,0\n60000,1.38686,1.38690,1.38680,1.38690,0,1.38697,1.38700,1.38690,1.38700,0\n"
		forexHour   = "20140501 00:00,1.38676,1.38686,1.38669,1.38686,0,1.38686,1.38697,1.38680,1.38697,0\n"
		// Equity Options: the AAPL $1,000 call, June 6 2014 (the docs' trade row).
		optionMinute = "34200000,17000,17000,17000,17000,28\n"
	)
	ny, _ := time.LoadLocation("America/New_York")
	mid := func(bid, ask float64) float64 { return (bid + ask) / 2 }
	tests := []struct {
		name    string
		path    string // a zip under dir, with members
		members []zipMember
		opt     Options
		first   time.Time
		bar0    ohlcv
		scale   float64
		zone    string
		conv    string
		layout  string
	}{
		{name: "equity minute: x 1/10,000, New York, date from the file name",
			path: "equity/usa/minute/aapl/20140605_trade.zip", members: []zipMember{{"20140605_aapl_minute_trade.csv", []byte(equityMinute)}},
			first: time.Date(2014, 6, 5, 9, 30, 0, 0, ny), bar0: ohlcv{644.8, 644.8, 644.8, 644.8, 90},
			scale: 10000, zone: "America/New_York", conv: "LEAN equity/usa (from the path)", layout: LayoutLEANDayCSV},
		{name: "crypto minute: prices as stored, UTC (not / 10,000, not New York)",
			path: "crypto/coinbase/minute/btceur/20180404_trade.zip", members: []zipMember{{"20180404_btceur_minute_trade.csv", []byte(cryptoMinute)}},
			first: utc(2018, 4, 4, 0, 0), bar0: ohlcv{6060, 6060, 6048.83, 6049.68, 6.72374365},
			scale: 1, zone: "UTC", conv: "LEAN crypto/coinbase (from the path)", layout: LayoutLEANDayCSV},
		{name: "crypto hour _trade.zip",
			path: "crypto/coinbase/hour/btceur_trade.zip", members: []zipMember{{"btceur.csv", []byte(cryptoHour)}},
			first: utc(2018, 4, 4, 0, 0), bar0: ohlcv{6060, 6060, 6048.83, 6049.68, 6.72374365},
			scale: 1, zone: "UTC", conv: "LEAN crypto/coinbase (from the path)", layout: LayoutLEANCSV},
		{name: "forex oanda minute quote bars: midpoints, UTC",
			path: "forex/oanda/minute/eurusd/20140501_quote.zip", members: []zipMember{{"20140501_eurusd_minute_quote.csv", []byte(forexMinute)}},
			first: utc(2014, 5, 1, 0, 0), bar0: ohlcv{mid(1.38676, 1.38686), mid(1.38686, 1.38697), mid(1.38669, 1.38680), mid(1.38686, 1.38697), 0},
			scale: 1, zone: "UTC", conv: "LEAN forex/oanda (from the path), quote bars: bid/ask midpoints", layout: LayoutLEANDayCSV},
		{name: "forex fxcm hour: UTC-05 without DST",
			path: "forex/fxcm/hour/eurusd.zip", members: []zipMember{{"eurusd.csv", []byte(forexHour)}},
			first: utc(2014, 5, 1, 5, 0), bar0: ohlcv{mid(1.38676, 1.38686), mid(1.38686, 1.38697), mid(1.38669, 1.38680), mid(1.38686, 1.38697), 0},
			scale: 1, zone: "UTC-05", conv: "LEAN forex/fxcm (from the path), quote bars: bid/ask midpoints", layout: LayoutLEANCSV},
		{name: "cfd oanda hour: as forex",
			path: "cfd/oanda/hour/xauusd.zip", members: []zipMember{{"xauusd.csv", []byte(forexHour)}},
			first: utc(2014, 5, 1, 0, 0), bar0: ohlcv{mid(1.38676, 1.38686), mid(1.38686, 1.38697), mid(1.38669, 1.38680), mid(1.38686, 1.38697), 0},
			scale: 1, zone: "UTC", conv: "LEAN cfd/oanda (from the path), quote bars: bid/ask midpoints", layout: LayoutLEANCSV},
		{name: "option minute, one contract of several named after #",
			path: "option/usa/minute/aapl/20140606_trade_american.zip#20140606_aapl_minute_trade_american_call_10000000_20141018.csv",
			members: []zipMember{{"20140606_aapl_minute_trade_american_call_10000000_20141018.csv", []byte(optionMinute)},
				{"20140606_aapl_minute_trade_american_put_10000000_20141018.csv", []byte(optionMinute)}},
			first: time.Date(2014, 6, 6, 9, 30, 0, 0, ny), bar0: ohlcv{1.7, 1.7, 1.7, 1.7, 28},
			scale: 10000, zone: "America/New_York", conv: "LEAN option/usa (from the path)", layout: LayoutLEANDayCSV},
		{name: "bare file, the asset given: crypto",
			path: "btcusd.zip", members: []zipMember{{"btcusd.csv", []byte(cryptoHour)}}, opt: Options{LEANAsset: "crypto"},
			first: utc(2018, 4, 4, 0, 0), bar0: ohlcv{6060, 6060, 6048.83, 6049.68, 6.72374365},
			scale: 1, zone: "UTC", conv: "LEAN crypto (as given)", layout: LayoutLEANCSV},
		{name: "bare day file, the asset given: equity, the date from the name",
			path: "20140605_trade.zip", members: []zipMember{{"20140605_aapl_minute_trade.csv", []byte(equityMinute)}}, opt: Options{LEANAsset: "equity"},
			first: time.Date(2014, 6, 5, 9, 30, 0, 0, ny), bar0: ohlcv{644.8, 644.8, 644.8, 644.8, 90},
			scale: 10000, zone: "America/New_York", conv: "LEAN equity/usa (as given)", layout: LayoutLEANDayCSV},
		{name: "the zone given overrides the convention's",
			path: "equity/india/hour/infy.zip", members: []zipMember{{"infy.csv", []byte("20200102 09:15,7300000,7350000,7290000,7320000,1000\n")}},
			opt: Options{Location: time.FixedZone("IST", 19800)}, first: utc(2020, 1, 2, 3, 45), bar0: ohlcv{730, 735, 729, 732, 1000},
			scale: 10000, zone: "IST", conv: "LEAN equity/india (from the path)", layout: LayoutLEANCSV},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file, member := tc.path, ""
			if i := strings.IndexByte(tc.path, '#'); i >= 0 {
				file, member = tc.path[:i], tc.path[i:]
			}
			p := writeZip(t, dir, file, tc.members...) + member
			d, err := LoadFile(p, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			in := d.Info
			if !in.First.Equal(tc.first) {
				t.Errorf("first %v, want %v", in.First, tc.first.UTC())
			}
			got := barAt(&d.Bars, 0)
			for i := range got {
				if math.Abs(got[i]-tc.bar0[i]) > 1e-12*math.Abs(tc.bar0[i]) {
					t.Errorf("bar 0 %v, want %v", got, tc.bar0)
					break
				}
			}
			if in.PriceScale != tc.scale || in.TimeZone != tc.zone || in.Convention != tc.conv || in.Times != TimesLocal || in.Layout != tc.layout {
				t.Errorf("scale %v zone %q convention %q times %q layout %q; want %v %q %q local %q",
					in.PriceScale, in.TimeZone, in.Convention, in.Times, in.Layout, tc.scale, tc.zone, tc.conv, tc.layout)
			}
		})
	}
}

// TestLEANRefusals: what LEAN cannot be read without more words, or at all.
func TestLEANRefusals(t *testing.T) {
	dir := t.TempDir()
	hour := []zipMember{{"x.csv", []byte("20180404 00:00,6060,6060,6048.83,6049.68,6.7\n")}}
	tests := []struct {
		path    string
		members []zipMember
		opt     Options
		want    string // after "<dir>/"
	}{
		{"aapl.zip", hour, Options{}, `aapl.zip#x.csv: LEAN rows, but the path does not say the security type, which decides the prices' scale and the times' zone: give --lean-asset (equity, option, crypto, forex, cfd), or keep the file in LEAN's folders (e.g. equity/usa/hour/aapl.zip)`},
		{"crypto/binance/hour/btcusdt_trade.zip", hour, Options{LEANAsset: "equity"}, `crypto/binance/hour/btcusdt_trade.zip#x.csv: the path says LEAN crypto (its crypto/binance/hour folders), but --lean-asset says equity: drop --lean-asset, or move the file`},
		{"equity/india/hour/infy.zip", hour, Options{}, `equity/india/hour/infy.zip#x.csv: the exchange zone of LEAN equity market "india" is not known here: give --tz`},
		{"forex/dukascopy/hour/eurusd.zip", hour, Options{}, `forex/dukascopy/hour/eurusd.zip#x.csv: the data zone of LEAN forex market "dukascopy" is not known here: give --tz`},
		{"future/cme/hour/es.zip", hour, Options{}, `future/cme/hour/es.zip#x.csv: LEAN future data is not read here: the loaders read equity, option, crypto, forex, cfd`},
		{"x.zip", hour, Options{LEANAsset: "bond"}, `x.zip#x.csv: unknown LEAN asset "bond": use one of equity, option, crypto, forex, cfd`},
		{"equity/usa/hour/aapl_openinterest.zip", hour, Options{}, `equity/usa/hour/aapl_openinterest.zip#x.csv: LEAN open interest file: it holds no bars; use the _trade file`},
		{"crypto/coinbase/minute/btcusd/20180404_trade.zip",
			[]zipMember{{"20180404_btcusd_minute_trade.csv", []byte("0,6060,6060,6048.83,6049.68,6.7\n86400000,1,1,1,1,1\n")}}, Options{},
			`crypto/coinbase/minute/btcusd/20180404_trade.zip#20180404_btcusd_minute_trade.csv: line 2: field "time": LEAN time 86400000 ms is past the end of the day (86,400,000 ms)`},
		{"crypto/coinbase/minute/btcusd/20180404_trade.zip",
			[]zipMember{{"20180404_btcusd_minute_trade.csv", []byte("0,6060,6060,6048.83,6049.68,6.7\n60000,1,1,1,1\n")}}, Options{},
			`crypto/coinbase/minute/btcusd/20180404_trade.zip#20180404_btcusd_minute_trade.csv: line 2: row has 5 fields, expected 6 as in the first row (trade bars)`},
		{"btcusd.zip", []zipMember{{"btcusd.csv", []byte("0,6060,6060,6048.83,6049.68,6.7\n")}}, Options{},
			`btcusd.zip#btcusd.csv: line 1: no header row: the first line is data; add a header naming the columns, e.g. timestamp,open,high,low,close,volume; a LEAN minute or second file takes its date from its name: keep it as <type>/<market>/minute/<ticker>/<yyyyMMdd>_trade.zip`},
	}
	for _, tc := range tests {
		p := writeZip(t, dir, tc.path, tc.members...)
		_, err := LoadFile(p, tc.opt)
		var de *Error
		want := filepath.Join(dir, "") + "/" + tc.want
		if !errors.As(err, &de) || err.Error() != want {
			t.Errorf("%s:\n got  %v\n want %s", tc.path, err, want)
		}
	}
}

// TestLEANPath reads LEAN's folders and names from paths.
func TestLEANPath(t *testing.T) {
	tests := []struct {
		path                      string
		asset, market, resolution string
		tick                      string
		date                      string
	}{
		{"/data/equity/usa/minute/aapl/20131007_trade.zip/20131007_aapl_minute_trade.csv", "equity", "usa", "minute", "trade", "2013-10-07"},
		{`C:\lean\Data\Crypto\Coinbase\Hour\btcusd_quote.zip`, "crypto", "coinbase", "hour", "quote", ""},
		{"equity/usa/daily/spy.zip", "equity", "usa", "daily", "", ""},
		{"downloads/20240102_trade.csv", "", "", "", "trade", "2024-01-02"},
		{"equity/usa.csv", "", "", "", "", ""},
		{"20241399_trade.zip", "", "", "", "trade", ""}, // no such date
	}
	for _, tc := range tests {
		lp := leanFromPath(tc.path)
		date := ""
		if lp.hasDate {
			date = time.Date(lp.date.year, time.Month(lp.date.month), lp.date.day, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
		}
		if lp.asset != tc.asset || lp.market != tc.market || lp.resolution != tc.resolution || lp.tickType != tc.tick || date != tc.date {
			t.Errorf("%s: %+v (date %q)", tc.path, lp, date)
		}
	}
}
