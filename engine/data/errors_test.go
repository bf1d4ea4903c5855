package data

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

const hdr = "timestamp,open,high,low,close,volume\n"

// goodRows returns n valid FIL rows starting at 2023-08-01 00:00 UTC.
func goodRows(n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteString(strconv.Itoa(1690848000+60*i) + ",4.255,4.256,4.252,4.252,25259.1\n")
	}
	return sb.String()
}

// TestErrors checks every input error the SPEC and the loaders name, with
// the exact message a user sees: file, line (or JSON record), field, reason.
func TestErrors(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	semiHdr := "Date;Open;High;Low;Close;Volume\n"
	tests := []struct {
		name string
		file string // default data.csv
		in   string
		opt  Options
		want string
	}{
		{name: "unparsable field", in: hdr + "1690848000,4.255,4.256,4.252,abc,1\n",
			want: `data.csv: line 2: field "close": cannot parse "abc" as a number`},
		{name: "negative price on line 17", in: hdr + goodRows(15) + "1690849000,4.255,4.256,4.252,-3,1\n",
			want: `data.csv: line 17: field "close": price -3 is not positive`},
		{name: "zero price", in: hdr + "1690848000,0,4.256,4.252,4.252,1\n",
			want: `data.csv: line 2: field "open": price 0 is not positive`},
		{name: "infinite price", in: hdr + "1690848000,4.255,inf,4.252,4.252,1\n",
			want: `data.csv: line 2: field "high": price inf is not finite`},
		{name: "price overflowing float64", in: hdr + "1690848000,4.255,1e999,4.252,4.252,1\n",
			want: `data.csv: line 2: field "high": price 1e999 is not finite`},
		{name: "high below low", in: hdr + "1690848000,4.2,4.1,4.2,4.2,1\n",
			want: `data.csv: line 2: field "high": high 4.1 is below low 4.2`},
		{name: "negative volume", in: hdr + "1690848000,4.255,4.256,4.252,4.252,-1\n",
			want: `data.csv: line 2: field "volume": volume -1 is negative`},
		{name: "timestamps decreasing", in: hdr + "1690848060,4.255,4.256,4.252,4.252,1\n1690848000,4.255,4.256,4.252,4.252,1\n",
			want: `data.csv: line 3: field "timestamp": timestamp 2023-08-01 00:00:00 UTC is earlier than 2023-08-01 00:01:00 UTC on line 2: timestamps must be strictly increasing (sort the file)`},
		{name: "duplicate timestamp", in: hdr + goodRows(2) + "1690848060,4.255,4.256,4.252,4.252,1\n",
			want: `data.csv: line 4: field "timestamp": duplicate timestamp 2023-08-01 00:01:00 UTC: same as line 3 (remove or merge the duplicate rows)`},
		{name: "empty file", in: "", want: `data.csv: line 1: empty file: no bars`},
		{name: "blank lines only", in: "\n \r\n", want: `data.csv: line 1: empty file: no bars`},
		{name: "header only", in: hdr, want: `data.csv: line 2: no bars: the file has no data rows`},
		{name: "all rows NaN", in: hdr + "1690848000,NaN,NaN,NaN,NaN,NaN\n1690848060,,,,,\n",
			want: `data.csv: line 2: no bars: all 2 rows have open, high, low and close missing (NaN, null or empty)`},
		{name: "some prices NaN", in: hdr + "1690848000,4.255,NaN,4.252,4.252,1\n",
			want: `data.csv: line 2: field "high": missing price ("NaN") in a row whose other prices are numbers; only rows with open, high, low and close all missing are dropped`},
		{name: "volume NaN in a row with prices", in: hdr + "1690848000,4.255,4.256,4.252,4.252,\n",
			want: `data.csv: line 2: field "volume": missing volume (empty) in a row with prices`},
		{name: "thousands separator in a comma file", in: hdr + "1690848000,4.255,4.256,4.252,4.252,\"25,259.1\"\n",
			want: `data.csv: line 2: field "volume": thousands separator in "25,259.1": export numbers without digit grouping`},
		{name: "decimal comma or thousands separator in a comma file, quoted", in: hdr + "1690848000,\"4,255\",4.256,4.252,4.252,1\n",
			want: `data.csv: line 2: field "open": comma in "4,255" in a comma-separated file: a decimal comma or a thousands separator, which cannot be told apart: export with '.' as the decimal mark and no digit grouping`},
		{name: "decimal comma in a comma file, unambiguous", in: hdr + "1690848000,\"4,2555\",4.256,4.252,4.252,1\n",
			want: `data.csv: line 2: field "open": decimal comma in "4,2555" in a comma-separated file: export with '.' as the decimal mark, or as a semicolon-separated file`},
		{name: "decimal comma in a comma file, unquoted", in: hdr + "1690848000,4,255,4,256,4,252,4,252,25259,1\n",
			want: `data.csv: line 2: field "open": row has 11 fields but the header has 6: a decimal comma or thousands separator in a comma-separated file? Export with '.' as the decimal mark and no digit grouping`},
		{name: "semicolon file mixing decimal marks", in: semiHdr + "2023-08-01 00:00:00;4,255;4,256;4,252;4,252;25259,1\n2023-08-01 00:01:00;4.251;4,253;4,251;4,253;2476,0\n",
			want: `data.csv: line 3: field "Open": "4.251" does not use the file's decimal mark ',' (set by line 2): a thousands separator, or mixed formats`},
		{name: "semicolon file with thousands separator", in: semiHdr + "2023-08-01 00:00:00;4,255;4,256;4,252;4,252;25.259,1\n",
			want: `data.csv: line 2: field "Volume": thousands separator in "25.259,1": export numbers without digit grouping`},
		{name: "unparsable timestamp", in: hdr + "yesterday,4.255,4.256,4.252,4.252,1\n",
			want: `data.csv: line 2: field "timestamp": cannot parse timestamp "yesterday": expected Unix seconds, milliseconds, microseconds or nanoseconds, or ISO 8601 like 2024-01-02 09:30:00-05:00`},
		{name: "yyyyMMdd integer timestamp", in: hdr + "20240102,4.255,4.256,4.252,4.252,1\n",
			want: `data.csv: line 2: field "timestamp": timestamp 20240102 would be 1970-08-23 as Unix seconds but looks like a yyyyMMdd date: write it as 2024-01-02`},
		{name: "DST: repeated local hour (LEAN, New York)", in: "20231104 15:00,42010000,42100000,41900000,42000000,100\n20231105 01:30,42010000,42100000,41900000,42000000,100\n",
			opt:  Options{LEANAsset: "equity"},
			want: `data.csv: line 2: field "time": local time "20231105 01:30" occurs twice in America/New_York (the clocks repeat it at a DST change), so the bar's instant is ambiguous: use timestamps with a UTC offset`},
		{name: "DST: missing local hour (naive ISO)", in: hdr + "2024-03-10 01:30:00,4.255,4.256,4.252,4.252,1\n2024-03-10 02:30:00,4.255,4.256,4.252,4.252,1\n",
			opt: Options{Location: ny}, want: `data.csv: line 3: field "timestamp": local time "2024-03-10 02:30:00" does not exist in America/New_York (the clocks skip it at a DST change): the file's times are not in this zone, or the row is wrong`},
		{name: "no header row", in: "1690848000,4.255,4.256,4.252,4.252,25259.1\n",
			want: `data.csv: line 1: no header row: the first line is data; add a header naming the columns, e.g. timestamp,open,high,low,close,volume`},
		{name: "missing column", in: "timestamp,open,high,low\n1,1,1,1\n",
			want: `data.csv: line 1: no "close" column in the header; found: timestamp, open, high, low`},
		{name: "no timestamp column", in: "when,open,high,low,close\n1,1,1,1,1\n",
			want: `data.csv: line 1: no timestamp column (open_time, timestamp, time, datetime or date) in the header; found: when, open, high, low, close; name it with --time-column`},
		{name: "time column option names no column", in: hdr + goodRows(1), opt: Options{TimeColumn: "ts"},
			want: `data.csv: line 1: no column "ts" (the time column asked for) in the header; found: timestamp, open, high, low, close, volume`},
		{name: "column named twice", in: "timestamp,open,high,low,close,close\n1,1,1,1,1,1\n",
			want: `data.csv: line 1: column "close" appears twice (columns 5 and 6): rename one`},
		{name: "row too short", in: hdr + "1690848000,4.255,4.256\n",
			want: `data.csv: line 2: row has 3 fields but the header has 6`},
		{name: "bare quote", in: hdr + "1690848000,4\"255,4.256,4.252,4.252,1\n",
			want: `data.csv: line 2: column 13: bare " in non-quoted-field`},
		{name: "Binance archive row too short", in: "1690848000000,4.255,4.256,4.252,4.252,25259.1,1690848059999,107451.0165,208,5452.3,23199.1103,0\n1690848060000,4.251\n",
			want: `data.csv: line 2: row has 2 fields, expected 12`},
		{name: "LEAN bad time", in: "20231104 15:00,42010000,42100000,41900000,42000000,100\n20231104 1600,42010000,42100000,41900000,42000000,100\n",
			opt:  Options{LEANAsset: "equity"},
			want: `data.csv: line 2: field "time": cannot parse LEAN timestamp "20231104 1600": expected yyyyMMdd HH:mm`},
		{name: "forced LEAN on a CSV with header", in: hdr + goodRows(1), opt: Options{Layout: LayoutLEANCSV, LEANAsset: "equity"},
			want: `data.csv: line 1: field "time": cannot parse LEAN timestamp "timestamp": expected yyyyMMdd HH:mm`},
		{name: "unknown layout", in: hdr + goodRows(1), opt: Options{Layout: "excel"},
			want: `data.csv: unknown layout "excel" (Options.Layout): use one of csv, csv-semicolon, binance-archive, binance-archive-noheader, freqtrade-json, binance-klines-json, lean-csv, lean-day-csv, parquet, arrow`},
		{name: "JSON high below low", file: "klines.json",
			in:   `[[1677628800000,"23141.57","23219.99","23020.03","23101.0","1.5",1677632399999,"0",1,"0","0","0"],` + "\n" + `[1677632400000,"23101.0","23000.0","23075.14","23245.96","1.5",1677635999999,"0",1,"0","0","0"]]`,
			want: `klines.json: record 2: field "high": high 23000.0 is below low 23075.14`},
		{name: "JSON unparsable price", file: "ft.json", in: `[[1748798580000,105100.69,105114.88,105100.69,"abc",4.61751]]`,
			want: `ft.json: record 1: field "close": cannot parse "abc" as a number`},
		{name: "JSON price null among numbers", file: "ft.json", in: `[[1748798580000,105100.69,null,105100.69,105114.88,4.61751]]`,
			want: `ft.json: record 1: field "high": missing price ("null") in a row whose other prices are numbers; only rows with open, high, low and close all missing are dropped`},
		{name: "JSON duplicate time", file: "ft.json", in: `[[1748798580000,1,1,1,1,1],[1748798580000,1,1,1,1,1]]`,
			want: `ft.json: record 2: field "time": duplicate timestamp 2025-06-01 17:23:00 UTC: same as record 1 (remove or merge the duplicate rows)`},
		{name: "JSON record length", file: "ft.json", in: `[[1748798580000,1,1,1,1,1],[1748798640000,1,1,1,1]]`,
			want: `ft.json: record 2: record has 5 fields, expected 6 as in the first record (freqtrade-json)`},
		{name: "JSON record not an array", file: "ft.json", in: `[[1748798580000,1,1,1,1,1],{"t":1}]`,
			want: `ft.json: record 2: record is not an array: expected [time, open, high, low, close, volume, ...]`},
		{name: "JSON truncated", file: "ft.json", in: "[[1748798580000,1,1,1,1,1],\n[1748798640000,1,1",
			want: `ft.json: line 2: record 2: invalid JSON: unexpected end of the file (truncated?)`},
		{name: "JSON syntax", file: "ft.json", in: "[[1748798580000,1,1,1,1,1],\n[1748798640000,1,1,1,1,1}]",
			want: `ft.json: line 2: record 2: invalid JSON: invalid character '}' after array element`},
		{name: "JSON empty array", file: "ft.json", in: "[]", want: `ft.json: line 1: no bars: the file has no data rows`},
		{name: "JSON object", file: "ft.json", in: `{"data":[]}`, want: `ft.json: line 1: JSON object: expected a JSON array of bars, [[time, open, high, low, close, volume], ...]`},
		{name: "JSON data after the array", file: "ft.json", in: "[[1748798580000,1,1,1,1,1]]\n[]", want: `ft.json: line 2: data after the end of the JSON array`},
		{name: "corrupt gzip", in: "\x1f\x8b\x08\x00garbage", want: `data.csv: gzip: unexpected EOF`},
		{name: "UTF-16", in: "\xff\xfet\x00", want: `data.csv: line 1: UTF-16 text: save the file as UTF-8`},
		{name: "UTF-16 without BOM, little-endian JSON", file: "ft.json", in: "[\x00[\x001\x007\x004\x008\x00,\x001\x00]\x00]\x00",
			want: `ft.json: line 1: UTF-16 text without a byte-order mark: save the file as UTF-8`},
		{name: "UTF-16 without BOM, big-endian CSV", in: "\x00t\x00i\x00m\x00e\x00,\x00o\x00p\x00e\x00n\x00\n",
			want: `data.csv: line 1: UTF-16 text without a byte-order mark: save the file as UTF-8`},
		{name: "UTF-32 with BOM", in: "\xff\xfe\x00\x00t\x00\x00\x00", want: `data.csv: line 1: UTF-32 text: save the file as UTF-8`},
		{name: "UTF-32 without BOM", in: "t\x00\x00\x00i\x00\x00\x00m\x00\x00\x00e\x00\x00\x00",
			want: `data.csv: line 1: UTF-32 text without a byte-order mark: save the file as UTF-8`},
		{name: "doubled BOM", in: "\ufeff\ufeff" + hdr + goodRows(1),
			want: `data.csv: line 1: two UTF-8 byte-order marks (BOM) at the start, as when a file is converted to UTF-8 twice: remove the second one (EF BB BF)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "data.csv"
			}
			d, err := Parse(bytes.NewReader([]byte(tc.in)), file, tc.opt)
			if err == nil {
				t.Fatalf("no error; %d bars", d.Info.Bars)
			}
			var de *Error
			if !errors.As(err, &de) {
				t.Fatalf("%T is not *Error: %v", err, err)
			}
			if de.File != file {
				t.Errorf("File %q", de.File)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}
