// Command genparquet writes the Parquet fixtures of engine/data's tests
// with Apache Arrow's Parquet writer (pqarrow), a writer independent of
// the reader under test (parquet-go). It lives under testdata so that the
// tests need not compile Arrow's Parquet stack (its compute kernels and
// gRPC), and go.mod does not list what only it needs: run it from the
// repository root with -mod=mod, then restore go.mod and go.sum (the
// output is the same bytes each time):
//
//	go run -mod=mod ./engine/data/testdata/genparquet && git checkout go.mod go.sum
package main

import (
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

const dir = "engine/data/testdata/columnar"

func field(name string, typ arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: typ, Nullable: true}
}

var f64 = arrow.PrimitiveTypes.Float64

func ohlcv() []arrow.Field {
	return []arrow.Field{field("open", f64), field("high", f64), field("low", f64), field("close", f64), field("volume", f64)}
}

func record(schema *arrow.Schema, rows [][]any) arrow.RecordBatch {
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
			case *array.Float64Builder:
				fb.Append(v.(float64))
			case *array.Float32Builder:
				fb.Append(v.(float32))
			case *array.Int64Builder:
				fb.Append(v.(int64))
			case *array.StringBuilder:
				fb.Append(v.(string))
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromI64(v.(int64)))
			default:
				log.Fatalf("no append for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

func write(name string, rec arrow.RecordBatch) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		log.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
}

func main() {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	// freqtrade's frame: date as timestamp[ms, tz=UTC], then float64 OHLCV;
	// two bars, a row of nulls, a bar.
	ft := arrow.NewSchema(append([]arrow.Field{field("date", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"})}, ohlcv()...), nil)
	rows := [][]any{
		{int64(1748798580000), 105100.69, 105114.88, 105100.69, 105114.88, 4.61751},
		{int64(1748798640000), 105114.88, 105114.89, 105100.0, 105100.01, 1.5},
		{int64(1748798700000), nil, nil, nil, nil, nil},
		{int64(1748798760000), 105100.01, 105120.0, 105090.5, 105110.0, 2.25},
	}
	write("freqtrade.parquet", record(ft, rows))
	write("freqtrade_2rows.parquet", record(ft, rows[:2]))
	write("negative_price.parquet", record(ft, [][]any{rows[0], {int64(1748798640000), 1.0, 1.0, 1.0, -3.0, 1.0}}))
	write("some_null.parquet", record(ft, [][]any{rows[0], {int64(1748798640000), 1.0, nil, 1.0, 1.0, 1.0}}))
	write("duplicate_time.parquet", record(ft, [][]any{rows[0], rows[0]}))
	write("null_time.parquet", record(ft, [][]any{rows[0], {nil, 1.0, 1.0, 1.0, 1.0, 1.0}}))
	noClose := arrow.NewSchema([]arrow.Field{field("date", &arrow.TimestampType{Unit: arrow.Second}), field("open", f64),
		field("high", f64), field("low", f64)}, nil)
	write("no_close.parquet", record(noClose, [][]any{{int64(1), 1.0, 1.0, 1.0}}))
	// pandas to_parquet of a frame with an unnamed naive DatetimeIndex
	// (__index_level_0__, microseconds), integer volume.
	pandas := arrow.NewSchema([]arrow.Field{field("Open", f64), field("High", f64), field("Low", f64), field("Close", f64),
		field("Volume", arrow.PrimitiveTypes.Int64), field("__index_level_0__", &arrow.TimestampType{Unit: arrow.Microsecond})}, nil)
	write("pandas_index.parquet", record(pandas, [][]any{
		{472.16, 473.67, 470.49, 472.65, int64(123726500), time.Date(2024, 1, 2, 9, 30, 0, 0, time.UTC).UnixMicro()},
		{470.43, 471.19, 468.17, 468.79, int64(103585900), time.Date(2024, 1, 3, 9, 30, 0, 0, time.UTC).UnixMicro()},
	}))
	// polars: epoch ms as int64 "timestamp", a decimal, a string, a float32.
	polars := arrow.NewSchema([]arrow.Field{field("timestamp", arrow.PrimitiveTypes.Int64),
		field("open", &arrow.Decimal128Type{Precision: 10, Scale: 2}), field("high", arrow.BinaryTypes.String),
		field("low", arrow.PrimitiveTypes.Float32), field("close", f64)}, nil)
	write("polars.parquet", record(polars, [][]any{
		{int64(1704067200000), int64(4228358), "42298.62", float32(42261.0), 42298.61},
		{int64(1704067260000), int64(4229862), "42320", float32(42298.5), 42320.0},
	}))
}
