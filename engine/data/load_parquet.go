package data

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// loadParquet reads a Parquet file (pandas' to_parquet, polars'
// write_parquet, pyarrow) through github.com/parquet-go/parquet-go, pure
// Go. Apache Arrow's module reads Parquet too, but its reader links gRPC
// and Arrow's compute kernels: 45 MB more binary against 8 MB here.
//
// Columns and values as loadColumnar documents; the row groups are read
// one batch of rows at a time, and a file whose row groups declare more
// than Limits.MaxBytes uncompressed is refused before reading. Nested
// columns are not read.
func loadParquet(r io.ReaderAt, size int64, org origin, opt Options) (d *Dataset, err error) {
	name := org.name
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, &Error{File: name, Reason: fmt.Sprintf("malformed parquet file: %v", p)}
		}
	}()
	fail := func(err error) (*Dataset, error) {
		var le *LimitError
		if errors.As(err, &le) {
			return nil, &Error{File: name, Reason: le.Error(), Err: le}
		}
		return nil, &Error{File: name, Reason: "parquet: " + err.Error(), Err: err}
	}
	if err := checkParquet(r, size); err != nil {
		return fail(err)
	}
	pf, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fail(err)
	}
	var total, totalRows int64
	for _, rg := range pf.Metadata().RowGroups {
		total += max(rg.TotalByteSize, 0)
		totalRows += max(rg.NumRows, 0)
	}
	if total > opt.Limits.MaxBytes || totalRows > opt.Limits.MaxBytes/8 {
		le := &LimitError{What: "decompressed size", Max: opt.Limits.MaxBytes, Env: EnvMaxBytes}
		return nil, &Error{File: name, Reason: "its row groups hold " + thousands(int(total)) + " bytes in " +
			thousands(int(totalRows)) + " rows: " + le.Error(), Err: le}
	}
	fields := pf.Schema().Fields()
	header := make([]string, len(fields))
	leaf := make([]int, len(fields)) // each top-level field's leaf column, -1 when nested
	n := 0
	for i, f := range fields {
		header[i] = f.Name()
		leaf[i] = -1
		if f.Leaf() && !f.Repeated() {
			leaf[i] = n
		}
		n += leafCount(f)
	}
	cs, e := pickColumns(header, name, opt)
	if e != nil {
		return nil, e
	}
	conv := plainConvention(opt)
	tp := newTimeParser(conv.loc)
	bl := newBuilder(name, int(min(size/16, 1<<24)))
	bl.tp, bl.timeName = tp, header[cs.time]
	for i := range cs.cols {
		if cs.cols[i] >= 0 {
			bl.names[i] = header[cs.cols[i]]
		}
	}
	for _, f := range cs.fields() {
		if leaf[f] < 0 {
			return nil, &Error{File: name, Field: header[f], Reason: "a nested or repeated column: keep time, open, high, low, close and volume as plain columns"}
		}
	}
	timeOf, reason := parquetTime(fields[cs.time].Type(), tp)
	if reason != "" {
		return nil, &Error{File: name, Field: bl.timeName, Reason: reason}
	}
	var rw row
	rw.hasVol = cs.cols[colVolume] >= 0
	last := colClose
	if rw.hasVol {
		last = colVolume
	}
	var numOf [nCols]func(parquet.Value) (float64, numKind, string)
	for i := colOpen; i <= last; i++ {
		if numOf[i], reason = parquetNumber(fields[cs.cols[i]].Type()); reason != "" {
			return nil, &Error{File: name, Field: bl.names[i], Reason: reason}
		}
	}
	// The columns read: time first, then the numbers.
	want := []int{leaf[cs.time]}
	for i := colOpen; i <= last; i++ {
		want = append(want, leaf[cs.cols[i]])
	}
	rowNo := 0
	for g, rg := range pf.RowGroups() {
		meta := pf.Metadata().RowGroups[g]
		chunks := rg.ColumnChunks()
		cols := make([]*columnValues, len(want))
		for k, c := range want {
			if c >= len(meta.Columns) || c >= len(chunks) {
				return fail(errors.New("a row group without the column"))
			}
			cm := meta.Columns[c].MetaData
			start := cm.DataPageOffset
			if cm.DictionaryPageOffset > 0 && cm.DictionaryPageOffset < start {
				start = cm.DictionaryPageOffset
			}
			if err := checkPages(r, size, pageRange{start: start, end: start + cm.TotalCompressedSize, rows: meta.NumRows}, opt.Limits.MaxBytes); err != nil {
				return fail(err)
			}
			cols[k] = &columnValues{pages: chunks[c].Pages(), buf: make([]parquet.Value, 1024)}
		}
		for n := int64(0); n < rg.NumRows(); n++ {
			rowNo++
			rw.at = where{row: rowNo}
			var vals [1 + nCols]parquet.Value
			for k, c := range cols {
				v, err := c.next()
				if err != nil {
					closeAll(cols)
					if errors.Is(err, io.EOF) {
						err = errors.New("a column holds fewer values than its row group has rows")
					}
					return fail(err)
				}
				vals[k] = v
			}
			if vals[0].IsNull() {
				closeAll(cols)
				return nil, bl.timeError(rw.at, "missing timestamp (null)")
			}
			t, reason := timeOf(vals[0])
			if reason != "" {
				closeAll(cols)
				return nil, bl.timeError(rw.at, reason)
			}
			rw.t = t
			for i := colOpen; i <= last; i++ {
				rw.val[i], rw.kind[i], rw.raw[i] = numOf[i](vals[1+i])
			}
			if e := bl.add(&rw); e != nil {
				closeAll(cols)
				return nil, e
			}
		}
		closeAll(cols)
	}
	if _, e := bl.finish(where{row: 1}); e != nil {
		return nil, e
	}
	d = &Dataset{Bars: bl.bars, firstAt: bl.firstBarAt, lastAt: bl.lastBarAt}
	d.Info = Info{Name: name, Layout: LayoutParquet, Files: 1, DroppedNaN: bl.dropped, DroppedAt: bl.droppedAt, SourceBars: bl.bars.Len()}
	conv.describe(&d.Info, tp)
	d.Info.setStats(&d.Bars)
	return d, nil
}

// leafCount is the number of leaf columns under a schema node.
func leafCount(f parquet.Field) int {
	if f.Leaf() {
		return 1
	}
	n := 0
	for _, c := range f.Fields() {
		n += leafCount(c)
	}
	return n
}

// columnValues reads one column chunk's values in order, page by page.
type columnValues struct {
	pages parquet.Pages
	vr    parquet.ValueReader
	buf   []parquet.Value
	i, n  int
	eof   bool // the current page has no more values
}

func (c *columnValues) next() (parquet.Value, error) {
	for c.i >= c.n {
		if c.vr == nil || c.eof {
			p, err := c.pages.ReadPage()
			if err != nil {
				return parquet.Value{}, err
			}
			c.vr, c.eof = p.Values(), false
		}
		n, err := c.vr.ReadValues(c.buf)
		c.i, c.n = 0, n
		switch {
		case errors.Is(err, io.EOF):
			c.eof = true
		case err != nil:
			return parquet.Value{}, err
		case n == 0:
			return parquet.Value{}, errors.New("a page yields no values")
		}
	}
	v := c.buf[c.i]
	c.i++
	return v, nil
}

func closeAll(cols []*columnValues) {
	for _, c := range cols {
		if c != nil {
			c.pages.Close()
		}
	}
}

// parquetTime returns the reader of a time column's values: a timestamp
// logical type of any unit (adjusted to UTC: instants; not: local times
// in the parser's zone), the legacy INT96 timestamp (UTC), a date, an
// integer of Unix time (unit by magnitude), a string as in a CSV.
func parquetTime(t parquet.Type, tp *timeParser) (func(parquet.Value) (int64, string), string) {
	lt := t.LogicalType()
	var lv format.LogicalTypeValue
	if lt != nil {
		lv = lt.Value
	}
	ct := t.ConvertedType()
	kind := t.Kind()
	switch {
	case isTimestamp(lv, ct):
		per, utc := int64(1e6), true // milliseconds unless said otherwise
		if ts, ok := lv.(*format.TimestampType); ok {
			utc = ts.IsAdjustedToUTC
			if ts.Unit.Value != nil {
				per = int64(ts.Unit.Value.Duration())
			}
		} else if ct != nil && *ct == deprecated.TimestampMicros {
			per = 1e3
		}
		return func(v parquet.Value) (int64, string) {
			x := v.Int64()
			if x > math.MaxInt64/per || x < math.MinInt64/per {
				return 0, "timestamp " + strconv.FormatInt(x, 10) + " is out of range (years 1678-2261)"
			}
			if utc {
				tp.seen |= seenUnix
				return x * per, ""
			}
			return tp.wall(x*per, strconv.FormatInt(x, 10))
		}, ""
	case isDate(lv, ct):
		return func(v parquet.Value) (int64, string) {
			return tp.wall(int64(v.Int32())*86400e9, "date "+strconv.Itoa(int(v.Int32())))
		}, ""
	case kind == parquet.Int96:
		return func(v parquet.Value) (int64, string) {
			tp.seen |= seenUnix
			return int96Time(v.Int96())
		}, ""
	case kind == parquet.Int64 || kind == parquet.Int32 || kind == parquet.Double || kind == parquet.Float:
		return func(v parquet.Value) (int64, string) { return tp.parse(v.String()) }, ""
	case kind == parquet.ByteArray:
		return func(v parquet.Value) (int64, string) { return tp.parse(string(v.ByteArray())) }, ""
	}
	return nil, "column of type " + t.String() + ": expected timestamps, dates, Unix times or text"
}

func isTimestamp(lv format.LogicalTypeValue, ct *deprecated.ConvertedType) bool {
	if _, ok := lv.(*format.TimestampType); ok {
		return true
	}
	return ct != nil && (*ct == deprecated.TimestampMillis || *ct == deprecated.TimestampMicros)
}

func isDate(lv format.LogicalTypeValue, ct *deprecated.ConvertedType) bool {
	if _, ok := lv.(*format.DateType); ok {
		return true
	}
	return ct != nil && *ct == deprecated.Date
}

// int96Time converts the legacy INT96 timestamp (nanoseconds of the day,
// then the Julian day; Impala, Spark, old pandas) to Unix nanoseconds.
func int96Time(i deprecated.Int96) (int64, string) {
	nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
	days := int64(i[2]) - 2440588 // the Julian day of 1970-01-01
	if days > 106751 || days < -106751 || nanos < 0 || nanos >= 86400e9 {
		return 0, "INT96 timestamp out of range (years 1678-2261)"
	}
	return days*86400e9 + nanos, ""
}

// parquetNumber returns the reader of a price or volume column: integers
// and floats, decimals of any physical type, numeric strings; null and
// NaN are missing values.
func parquetNumber(t parquet.Type) (func(parquet.Value) (float64, numKind, string), string) {
	float := func(get func(parquet.Value) float64) func(parquet.Value) (float64, numKind, string) {
		return func(v parquet.Value) (float64, numKind, string) {
			if v.IsNull() {
				return math.NaN(), numNaN, "null"
			}
			x := get(v)
			if x != x {
				return x, numNaN, "NaN"
			}
			return x, numOK, formatFloat(x)
		}
	}
	if lt := t.LogicalType(); lt != nil {
		if dec, ok := lt.Value.(*format.DecimalType); ok {
			scale := math.Pow10(int(dec.Scale))
			switch t.Kind() {
			case parquet.Int32:
				return float(func(v parquet.Value) float64 { return float64(v.Int32()) / scale }), ""
			case parquet.Int64:
				return float(func(v parquet.Value) float64 { return float64(v.Int64()) / scale }), ""
			case parquet.ByteArray, parquet.FixedLenByteArray:
				return float(func(v parquet.Value) float64 { return bigEndianFloat(v.ByteArray()) / scale }), ""
			}
		}
	}
	switch t.Kind() {
	case parquet.Double:
		return float(func(v parquet.Value) float64 { return v.Double() }), ""
	case parquet.Float:
		return float(func(v parquet.Value) float64 { return float64(v.Float()) }), ""
	case parquet.Int64:
		return float(func(v parquet.Value) float64 { return float64(v.Int64()) }), ""
	case parquet.Int32:
		return float(func(v parquet.Value) float64 { return float64(v.Int32()) }), ""
	case parquet.ByteArray:
		return func(v parquet.Value) (float64, numKind, string) {
			if v.IsNull() {
				return math.NaN(), numNaN, "null"
			}
			s := string(v.ByteArray())
			x, kind := parseNumber(s)
			return x, kind, strings.TrimSpace(s)
		}, ""
	}
	return nil, "column of type " + t.String() + ": expected numbers"
}

// bigEndianFloat reads a big-endian two's complement integer (a Parquet
// decimal's unscaled value).
func bigEndianFloat(b []byte) float64 {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	f, _ := new(big.Float).SetInt(x).Float64()
	return f
}
