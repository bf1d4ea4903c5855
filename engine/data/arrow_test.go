package data

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// record builds one record batch of schema from rows of Go values (nil is
// a null): the Arrow module's own builders, the reference writer.
func record(t testing.TB, schema *arrow.Schema, rows [][]any) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		for i, v := range r {
			fb := b.Field(i)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v.(int64)))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(v.(int)))
			case *array.Float64Builder:
				fb.Append(v.(float64))
			case *array.Float32Builder:
				fb.Append(v.(float32))
			case *array.Int64Builder:
				fb.Append(v.(int64))
			case *array.StringBuilder:
				fb.Append(v.(string))
			case *array.BooleanBuilder:
				fb.Append(v.(bool))
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromI64(v.(int64)))
			default:
				t.Fatalf("no append for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// columnarFixture reads a Parquet fixture written by Apache Arrow's
// Parquet writer (testdata/genparquet), independent of the reader.
func columnarFixture(t testing.TB, name string) []byte {
	t.Helper()
	return readFile(t, filepath.Join("testdata", "columnar", name))
}

// writeArrow writes rec as an Arrow IPC file (Feather v2), or a stream.
func writeArrow(t testing.TB, rec arrow.RecordBatch, stream bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if stream {
		w = ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	} else {
		fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(rec.Schema()), ipc.WithZstd())
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func field(name string, typ arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: typ, Nullable: true}
}

var (
	f64     = arrow.PrimitiveTypes.Float64
	ohlcvFs = []arrow.Field{field("open", f64), field("high", f64), field("low", f64), field("close", f64), field("volume", f64)}
)

// freqtradeSchema is freqtrade's feather/parquet frame: date as
// timestamp[ms, tz=UTC], then open, high, low, close, volume as float64.
var freqtradeSchema = arrow.NewSchema(append([]arrow.Field{field("date", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"})}, ohlcvFs...), nil)

// freqtradeRows: two bars, a row with every value null (dropped), a bar.
var freqtradeRows = [][]any{
	{int64(1748798580000), 105100.69, 105114.88, 105100.69, 105114.88, 4.61751},
	{int64(1748798640000), 105114.88, 105114.89, 105100.0, 105100.01, 1.5},
	{int64(1748798700000), nil, nil, nil, nil, nil},
	{int64(1748798760000), 105100.01, 105120.0, 105090.5, 105110.0, 2.25},
}

// TestColumnar loads Parquet, Feather v2 and Arrow streams written with
// the Arrow module's writers (the Parquet ones in testdata): columns by the CSV header's names,
// timestamps of any unit (zoned: instants; naive: local times), integers
// by magnitude, nulls as missing values.
func TestColumnar(t *testing.T) {
	dir := t.TempDir()
	ny, _ := time.LoadLocation("America/New_York")
	ft := record(t, freqtradeSchema, freqtradeRows)
	// The Parquet fixtures (testdata/genparquet): freqtrade's frame as
	// above; pandas to_parquet of a frame indexed by a naive DatetimeIndex
	// (unnamed: __index_level_0__, microseconds), read in New York time;
	// polars with epoch milliseconds as int64 "timestamp", a decimal
	// (scale 2), a string and a float32 price, no volume.
	// Dates, as a daily file.
	dailySchema := arrow.NewSchema(append([]arrow.Field{field("Date", arrow.FixedWidthTypes.Date32)}, ohlcvFs...), nil)
	daily := record(t, dailySchema, [][]any{{19724, 1.0, 2.0, 0.5, 1.5, 10.0}, {19725, 1.5, 2.5, 1.0, 2.0, 20.0}})

	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path string
		opt        Options
		layout     string
		times      []time.Time
		bar0       ohlcv
		dropped    int
		times0     string
		zone       string
	}{
		{"freqtrade parquet", write("BTC_USDT-1m.parquet", columnarFixture(t, "freqtrade.parquet")), Options{}, LayoutParquet,
			[]time.Time{utc(2025, 6, 1, 17, 23), utc(2025, 6, 1, 17, 24), utc(2025, 6, 1, 17, 26)},
			ohlcv{105100.69, 105114.88, 105100.69, 105114.88, 4.61751}, 1, TimesUnix, ""},
		{"freqtrade feather (Arrow IPC file, zstd)", write("BTC_USDT-1m.feather", writeArrow(t, ft, false)), Options{}, LayoutArrow,
			[]time.Time{utc(2025, 6, 1, 17, 23), utc(2025, 6, 1, 17, 24), utc(2025, 6, 1, 17, 26)},
			ohlcv{105100.69, 105114.88, 105100.69, 105114.88, 4.61751}, 1, TimesUnix, ""},
		{"Arrow IPC stream", write("btc.arrows", writeArrow(t, ft, true)), Options{}, LayoutArrow,
			[]time.Time{utc(2025, 6, 1, 17, 23), utc(2025, 6, 1, 17, 24), utc(2025, 6, 1, 17, 26)},
			ohlcv{105100.69, 105114.88, 105100.69, 105114.88, 4.61751}, 1, TimesUnix, ""},
		{"pandas parquet, naive index in New York", write("spy.parquet", columnarFixture(t, "pandas_index.parquet")), Options{Location: ny}, LayoutParquet,
			[]time.Time{time.Date(2024, 1, 2, 9, 30, 0, 0, ny), time.Date(2024, 1, 3, 9, 30, 0, 0, ny)},
			ohlcv{472.16, 473.67, 470.49, 472.65, 123726500}, 0, TimesLocal, "America/New_York"},
		{"polars parquet, int64 ms, decimals and strings", write("pl.parquet", columnarFixture(t, "polars.parquet")), Options{}, LayoutParquet,
			[]time.Time{utc(2024, 1, 1, 0, 0), utc(2024, 1, 1, 0, 1)},
			ohlcv{42283.58, 42298.62, 42261, 42298.61, 0}, 0, TimesUnix, ""},
		{"dates", write("daily.feather", writeArrow(t, daily, false)), Options{}, LayoutArrow,
			[]time.Time{utc(2024, 1, 2, 0, 0), utc(2024, 1, 3, 0, 0)}, ohlcv{1, 2, 0.5, 1.5, 10}, 0, TimesLocal, "UTC"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := LoadFile(tc.path, Options{Location: tc.opt.Location})
			if err != nil {
				t.Fatal(err)
			}
			in := d.Info
			if in.Layout != tc.layout || in.Bars != len(tc.times) || in.DroppedNaN != tc.dropped || in.Times != tc.times0 ||
				in.TimeZone != tc.zone || in.PriceScale != 1 || in.SHA256 != fileSum(t, tc.path) {
				t.Errorf("info %+v", in)
			}
			for i, want := range tc.times {
				if d.Bars.Time[i] != want.UnixNano() {
					t.Errorf("bar %d at %v, want %v", i, time.Unix(0, d.Bars.Time[i]).UTC(), want.UTC())
				}
			}
			if got := barAt(&d.Bars, 0); got != tc.bar0 {
				t.Errorf("bar 0 %v, want %v", got, tc.bar0)
			}
		})
	}
	// Gzipped, zipped, or from a stream: the same bars.
	raw := columnarFixture(t, "freqtrade.parquet")
	for name, b := range map[string][]byte{"ft.parquet.gz": gzipBytes(raw), "ft.parquet": raw} {
		if d, err := Parse(bytes.NewReader(b), name, Options{}); err != nil || d.Info.Bars != 3 || d.Info.Layout != LayoutParquet {
			t.Errorf("Parse %s: %v", name, err)
		}
	}
	zp := writeZip(t, dir, "ft.zip", zipMember{"BTC_USDT-1m.feather", writeArrow(t, ft, false)})
	if d, err := LoadFile(zp, Options{}); err != nil || d.Info.Bars != 3 || d.Info.Layout != LayoutArrow {
		t.Errorf("feather in a zip: %v", err)
	}
}

// TestColumnarRefusals: what a columnar file is refused for, by row and
// column.
func TestColumnarRefusals(t *testing.T) {
	dir := t.TempDir()
	fx := func(name string) []byte { return columnarFixture(t, name) }
	boolTime := arrow.NewSchema(append([]arrow.Field{field("time", arrow.FixedWidthTypes.Boolean)}, ohlcvFs...), nil)
	tests := []struct {
		name string
		b    []byte
		opt  Options
		want string // after the path
	}{
		{"negative price", fx("negative_price.parquet"), Options{},
			`: row 2: field "close": price -3 is not positive`},
		{"some prices null", fx("some_null.parquet"), Options{},
			`: row 2: field "high": missing price ("null") in a row whose other prices are numbers; only rows with open, high, low and close all missing are dropped`},
		{"duplicate time", fx("duplicate_time.parquet"), Options{},
			`: row 2: field "date": duplicate timestamp 2025-06-01 17:23:00 UTC: same as row 1 (remove or merge the duplicate rows)`},
		{"null time", fx("null_time.parquet"), Options{},
			`: row 2: field "date": missing timestamp (null)`},
		{"no close", fx("no_close.parquet"), Options{},
			`: no "close" column in the header; found: date, open, high, low`},
		{"time column of booleans", writeArrow(t, record(t, boolTime, [][]any{{true, 1.0, 1.0, 1.0, 1.0, 1.0}}), false), Options{},
			`: field "time": column of type bool: expected timestamps, dates, Unix times or text`},
		{"decompressed size limit", fx("freqtrade.parquet"), Options{Limits: Limits{MaxBytes: 100}},
			`: its row groups hold`},
		{"Feather v1", []byte("FEA1" + strings.Repeat("\x00", 60) + "FEA1"), Options{},
			`: Feather v1 file (pandas before 1.0, feather-format): save it again as Feather v2 (pyarrow.feather.write_feather) or Parquet`},
		{"truncated parquet", fx("freqtrade.parquet")[:100], Options{}, `: parquet: `},
	}
	for i, tc := range tests {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".parquet")
		os.WriteFile(p, tc.b, 0o644)
		_, err := LoadFile(p, tc.opt)
		var de *Error
		if !errors.As(err, &de) || !strings.HasPrefix(err.Error(), p+tc.want) {
			t.Errorf("%d %s:\n got  %v\n want %s%s", i, tc.name, err, p, tc.want)
		}
	}
	_, err := LoadFile(filepath.Join(dir, "decompressed_size_limit.parquet"), Options{Limits: Limits{MaxBytes: 100}})
	var le *LimitError
	if !errors.As(err, &le) || le.Env != EnvMaxBytes {
		t.Errorf("limit: %v", err)
	}
}
