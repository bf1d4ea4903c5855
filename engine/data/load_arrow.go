package data

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The columnar layouts: Parquet (pandas' and polars' to_parquet/
// write_parquet; read by loadParquet) and Arrow IPC, as a file (Feather
// v2: freqtrade's default data format, pandas' to_feather) or a stream,
// read through Apache Arrow's Go module. Both pure Go.
const (
	LayoutParquet = "parquet"
	LayoutArrow   = "arrow" // Arrow IPC file (Feather v2) or stream
)

// columnar says which columnar format b starts with: "" when none.
func columnar(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("PAR1")):
		return LayoutParquet
	case bytes.HasPrefix(b, []byte("ARROW1")):
		return LayoutArrow
	case len(b) >= 8 && bytes.Equal(b[:4], []byte{0xff, 0xff, 0xff, 0xff}):
		return layoutArrowStream
	case bytes.HasPrefix(b, []byte("FEA1")):
		return layoutFeatherV1
	}
	return ""
}

const (
	layoutArrowStream = "arrow-stream" // read as LayoutArrow
	layoutFeatherV1   = "feather-v1"   // refused
)

// readerAtSeeker is what the columnar readers read from: a file, or the
// bytes of a decompressed or in-memory one.
type readerAtSeeker interface {
	io.ReaderAt
	io.ReadSeeker
}

// loadColumnar reads a Parquet or Arrow file from r (size bytes). Columns
// are found by name as in a CSV header (the time column: Options.
// TimeColumn, else open_time, timestamp, time, datetime, date, else the
// index pandas writes as __index_level_0__; open, high, low, close;
// volume optional). Times are Arrow/Parquet timestamps of any unit (with a
// zone: UTC instants; without: local times in Options.Location), dates,
// integers of Unix time (unit by magnitude) or strings as in a CSV. Prices
// are numbers of any type, decimals or numeric strings; a null or NaN is a
// missing value. Errors name the row (1-based).
//
// Memory is bounded by Limits.MaxBytes: a Parquet file whose row groups
// declare more is refused before reading, and every buffer the reader
// allocates is counted. A malformed file that makes the Arrow reader
// panic is an error, not a crash.
func loadColumnar(r readerAtSeeker, size int64, kind string, org origin, opt Options) (d *Dataset, err error) {
	name := org.name
	mem := &limitAlloc{max: opt.Limits.MaxBytes}
	defer func() {
		if p := recover(); p != nil {
			if le, ok := p.(*LimitError); ok {
				d, err = nil, &Error{File: name, Reason: le.Error(), Err: le}
				return
			}
			d, err = nil, &Error{File: name, Reason: fmt.Sprintf("malformed %s file: %v", strings.TrimSuffix(kind, "-stream"), p)}
		}
	}()
	fail := func(what string, err error) (*Dataset, error) {
		if de, ok := err.(*Error); ok {
			return nil, de
		}
		return nil, &Error{File: name, Reason: what + ": " + err.Error(), Err: err}
	}
	var (
		schema *arrow.Schema
		next   func() (arrow.RecordBatch, error) // nil batch: the end
	)
	switch kind {
	case layoutFeatherV1:
		return nil, &Error{File: name, Reason: "Feather v1 file (pandas before 1.0, feather-format): save it again as " +
			"Feather v2 (pyarrow.feather.write_feather) or Parquet"}
	case LayoutParquet:
		return loadParquet(r, size, org, opt)
	case LayoutArrow, layoutArrowStream:
		// A file: the stream between the 8-byte magic and the footer
		// (footer, its int32 length, "ARROW1").
		var (
			src   io.Reader = r
			avail           = size
		)
		if kind == LayoutArrow {
			var tail [10]byte
			if size < 8+10 {
				return nil, &Error{File: name, Reason: "arrow: file too short"}
			}
			if _, err := r.ReadAt(tail[:], size-10); err != nil {
				return fail("arrow", err)
			}
			footer := int64(binary.LittleEndian.Uint32(tail[:4]))
			if string(tail[4:]) != "ARROW1" || footer > size-18 {
				return nil, &Error{File: name, Reason: "arrow: no Arrow file footer (truncated?)"}
			}
			avail = size - 18 - footer
			src = io.NewSectionReader(r, 8, avail)
		}
		sr, err := ipc.NewReaderFromMessageReader(&ipcMessages{r: src, remaining: avail, max: opt.Limits.MaxBytes}, ipc.WithAllocator(mem))
		if err != nil {
			return fail("arrow", err)
		}
		defer sr.Release()
		schema = sr.Schema()
		next = func() (arrow.RecordBatch, error) {
			if sr.Next() {
				return sr.RecordBatch(), nil
			}
			return nil, sr.Err()
		}
	default:
		return nil, &Error{File: name, Reason: "not a columnar file"}
	}
	header := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		header[i] = f.Name
	}
	cs, e := pickColumns(header, name, opt)
	if e != nil {
		return nil, e
	}
	conv := plainConvention(opt)
	tp := newTimeParser(conv.loc)
	bl := newBuilder(name, int(min(size/16, 1<<24)))
	bl.tp, bl.timeName = tp, schema.Field(cs.time).Name
	for i := range cs.cols {
		if cs.cols[i] >= 0 {
			bl.names[i] = schema.Field(cs.cols[i]).Name
		}
	}
	var rw row
	rw.hasVol = cs.cols[colVolume] >= 0
	last := colClose
	if rw.hasVol {
		last = colVolume
	}
	rowNo := 0
	for {
		rec, err := next()
		if err != nil {
			return fail(strings.TrimSuffix(kind, "-stream"), err)
		}
		if rec == nil {
			break
		}
		tcol, reason := timeColumn(rec.Column(cs.time), tp)
		if reason != "" {
			return nil, &Error{File: name, Field: bl.timeName, Reason: reason}
		}
		var vcol [nCols]numberCol
		for i := colOpen; i <= last; i++ {
			if vcol[i], reason = numberColumn(rec.Column(cs.cols[i])); reason != "" {
				return nil, &Error{File: name, Field: bl.names[i], Reason: reason}
			}
		}
		for k := 0; k < int(rec.NumRows()); k++ {
			rowNo++
			rw.at = where{row: rowNo}
			t, reason := tcol(k)
			if reason != "" {
				return nil, bl.timeError(rw.at, reason)
			}
			rw.t = t
			for i := colOpen; i <= last; i++ {
				rw.val[i], rw.kind[i], rw.raw[i] = vcol[i](k)
			}
			if e := bl.add(&rw); e != nil {
				return nil, e
			}
		}
	}
	if _, e := bl.finish(where{row: 1}); e != nil {
		return nil, e
	}
	d = &Dataset{Bars: bl.bars, firstAt: bl.firstBarAt, lastAt: bl.lastBarAt}
	d.Info = Info{Name: name, Layout: LayoutArrow, Files: 1, DroppedNaN: bl.dropped, DroppedAt: bl.droppedAt, SourceBars: bl.bars.Len()}
	conv.describe(&d.Info, tp)
	d.Info.setStats(&d.Bars)
	return d, nil
}

// columnSet holds the schema indices of the time column and the numeric
// ones (-1: absent, volume only).
type columnSet struct {
	time int
	cols [nCols]int
}

func (cs columnSet) fields() []int {
	out := []int{cs.time}
	for _, c := range cs.cols {
		if c >= 0 {
			out = append(out, c)
		}
	}
	return out
}

// pickColumns finds the columns of a columnar file by the CSV header's
// rules, and pandas' unnamed index as the time column when no other is.
func pickColumns(header []string, name string, opt Options) (columnSet, *Error) {
	timeIdx, cols, reason, cause := matchColumns(header, opt.TimeColumn)
	if timeIdx < 0 && reason == "" && slices.Contains(header, "__index_level_0__") {
		timeIdx, cols, reason, _ = matchColumns(header, "__index_level_0__")
	}
	if reason == "" && timeIdx < 0 {
		reason = noTimeColumn(header)
	}
	if reason != "" {
		return columnSet{}, &Error{File: name, Reason: reason, Err: cause}
	}
	return columnSet{time: timeIdx, cols: cols}, nil
}

// numberCol reads row k of a numeric column: value, kind, text for messages.
type numberCol func(k int) (float64, numKind, string)

// numberColumn reads a column of prices or volumes: any integer or float
// type, decimals, numeric strings; null and NaN are missing values.
func numberColumn(a arrow.Array) (numberCol, string) {
	null := func(k int) bool { return a.IsNull(k) }
	float := func(get func(int) float64) numberCol {
		return func(k int) (float64, numKind, string) {
			if null(k) {
				return math.NaN(), numNaN, "null"
			}
			v := get(k)
			if v != v {
				return v, numNaN, "NaN"
			}
			return v, numOK, formatFloat(v)
		}
	}
	switch c := a.(type) {
	case *array.Float64:
		return float(c.Value), ""
	case *array.Float32:
		return float(func(k int) float64 { return float64(c.Value(k)) }), ""
	case *array.Int64:
		return float(func(k int) float64 { return float64(c.Value(k)) }), ""
	case *array.Int32:
		return float(func(k int) float64 { return float64(c.Value(k)) }), ""
	case *array.Int16:
		return float(func(k int) float64 { return float64(c.Value(k)) }), ""
	case *array.Int8:
		return float(func(k int) float64 { return float64(c.Value(k)) }), ""
	case *array.Uint64:
		return float(func(k int) float64 { return float64(c.Value(k)) }), ""
	case *array.Uint32:
		return float(func(k int) float64 { return float64(c.Value(k)) }), ""
	case *array.Uint16:
		return float(func(k int) float64 { return float64(c.Value(k)) }), ""
	case *array.Uint8:
		return float(func(k int) float64 { return float64(c.Value(k)) }), ""
	case *array.Decimal128:
		scale := c.DataType().(*arrow.Decimal128Type).Scale
		return float(func(k int) float64 { return c.Value(k).ToFloat64(scale) }), ""
	case *array.String:
		return func(k int) (float64, numKind, string) {
			if null(k) {
				return math.NaN(), numNaN, "null"
			}
			s := c.Value(k)
			v, kind := parseNumber(s)
			return v, kind, strings.TrimSpace(s)
		}, ""
	case *array.LargeString:
		return func(k int) (float64, numKind, string) {
			if null(k) {
				return math.NaN(), numNaN, "null"
			}
			s := c.Value(k)
			v, kind := parseNumber(s)
			return v, kind, strings.TrimSpace(s)
		}, ""
	}
	return nil, "column of type " + a.DataType().String() + ": expected numbers"
}

// timeCol reads row k of the time column as Unix nanoseconds.
type timeCol func(k int) (int64, string)

// timeColumn reads a time column: timestamps (any unit; with a zone they
// are instants, without one local times in the parser's zone), dates,
// integers or floats of Unix time (unit by magnitude), strings as in a
// CSV.
func timeColumn(a arrow.Array, tp *timeParser) (timeCol, string) {
	null := func(k int) (int64, string, bool) {
		if a.IsNull(k) {
			return 0, "missing timestamp (null)", true
		}
		return 0, "", false
	}
	switch c := a.(type) {
	case *array.Timestamp:
		typ := c.DataType().(*arrow.TimestampType)
		per := int64(typ.Unit.Multiplier()) // nanoseconds per unit
		zoned := typ.TimeZone != ""
		return func(k int) (int64, string) {
			if t, r, ok := null(k); ok {
				return t, r
			}
			v := int64(c.Value(k))
			if v > math.MaxInt64/per || v < math.MinInt64/per {
				return 0, "timestamp " + strconv.FormatInt(v, 10) + " " + typ.Unit.String() + " is out of range (years 1678-2261)"
			}
			ns := v * per
			if zoned {
				tp.seen |= seenUnix
				return ns, ""
			}
			return tp.wall(ns, strconv.FormatInt(v, 10)+" "+typ.Unit.String())
		}, ""
	case *array.Date32:
		return func(k int) (int64, string) {
			if t, r, ok := null(k); ok {
				return t, r
			}
			return tp.wall(int64(c.Value(k))*86400e9, "date "+c.Value(k).FormattedString())
		}, ""
	case *array.Date64:
		return func(k int) (int64, string) {
			if t, r, ok := null(k); ok {
				return t, r
			}
			return tp.wall(int64(c.Value(k))*1e6, "date "+c.Value(k).FormattedString())
		}, ""
	case *array.Int64, *array.Int32, *array.Uint64, *array.Uint32, *array.Float64:
		return func(k int) (int64, string) {
			if t, r, ok := null(k); ok {
				return t, r
			}
			return tp.parse(a.ValueStr(k))
		}, ""
	case *array.String:
		return func(k int) (int64, string) {
			if t, r, ok := null(k); ok {
				return t, r
			}
			return tp.parse(c.Value(k))
		}, ""
	case *array.LargeString:
		return func(k int) (int64, string) {
			if t, r, ok := null(k); ok {
				return t, r
			}
			return tp.parse(c.Value(k))
		}, ""
	}
	return nil, "column of type " + a.DataType().String() + ": expected timestamps, dates, Unix times or text"
}

// wall reads a zone-less timestamp (nanoseconds of a wall-clock time, as if
// UTC) as a local time in the parser's zone.
func (tp *timeParser) wall(ns int64, text string) (int64, string) {
	t := time.Unix(0, ns).UTC()
	c := civil{year: t.Year(), month: int(t.Month()), day: t.Day(), hour: t.Hour(), min: t.Minute(), sec: t.Second(), nsec: t.Nanosecond()}
	return tp.instant(c, 0, false, text)
}

// limitAlloc is the Arrow readers' allocator: Go memory, at most max bytes
// live. An allocation past it panics with a *LimitError, which
// loadColumnar recovers into an error.
type limitAlloc struct {
	used, max int64
}

func (m *limitAlloc) Allocate(size int) []byte {
	m.take(size)
	return memory.DefaultAllocator.Allocate(size)
}

func (m *limitAlloc) Reallocate(size int, b []byte) []byte {
	m.take(size - len(b))
	return memory.DefaultAllocator.Reallocate(size, b)
}

func (m *limitAlloc) Free(b []byte) {
	m.used -= int64(len(b))
	memory.DefaultAllocator.Free(b)
}

func (m *limitAlloc) take(n int) {
	if m.used += int64(n); n > 0 && m.used > m.max {
		panic(&LimitError{What: "decompressed size", Max: m.max, Env: EnvMaxBytes})
	}
}
