package output

import (
	"fmt"
	"io"
	"reflect"

	"github.com/parquet-go/parquet-go"
)

// A strategy grid's Parquet results (Grid.Strategy): parquetRow's columns
// with hma and hma3 replaced by "strategy" (the family, a string) and the
// grid's parameter columns (Grid.Columns(): a leg's NAME_kind a
// dictionary-encoded string, a length INT64, a decimal threshold
// DOUBLE), in RowColumnsOf's order. The schema depends on the grid, so it
// is built at run time (a struct type made by reflect, which keeps the
// fields' order as the columns'), and the rows are written as
// parquet.Rows, each value placed on its column.

// strategyLayout is the Parquet schema of a strategy grid's rows.
type strategyLayout struct {
	pc     *paramCols
	schema *parquet.Schema
	// Column indices: the lane's (precision, backend, wma, status) and
	// where the parameters and metrics start.
	params, metrics, status int
}

// metricFields are ComboColumns' fields past hma and hma3 (the metrics),
// in order.
var metricFields = func() []reflect.StructField {
	t := reflect.TypeOf(ComboColumns{})
	var out []reflect.StructField
	for i := 2; i < t.NumField(); i++ {
		out = append(out, t.Field(i))
	}
	return out
}()

func newStrategyLayout(pc *paramCols) *strategyLayout {
	l := &strategyLayout{pc: pc}
	var fs []reflect.StructField
	add := func(t reflect.Type, tag string) {
		fs = append(fs, reflect.StructField{Name: fmt.Sprintf("F%d", len(fs)), Type: t, Tag: reflect.StructTag(`parquet:"` + tag + `"`)})
	}
	str, i64, f64 := reflect.TypeOf(""), reflect.TypeOf(int64(0)), reflect.TypeOf(0.0)
	add(str, "precision,dict")
	add(str, "backend,dict")
	add(str, "wma,dict")
	add(str, "strategy,dict")
	l.params = len(fs)
	for _, a := range pc.axes {
		if a.leg {
			add(str, a.name+"_kind,dict")
		}
		if a.integer {
			add(i64, a.name)
		} else {
			add(f64, a.name)
		}
	}
	l.metrics = len(fs)
	for _, f := range metricFields {
		fs = append(fs, reflect.StructField{Name: fmt.Sprintf("F%d", len(fs)), Type: f.Type, Tag: f.Tag})
	}
	l.status = len(fs)
	add(str, "status,dict")
	add(str, "dataset,dict")
	add(str, "timeframe,dict")
	add(f64, "fee")
	add(str, "mode,dict")
	add(str, "source,dict")
	add(f64, "bars_per_year")
	l.schema = parquet.SchemaOf(reflect.New(reflect.StructOf(fs)).Elem().Interface())
	return l
}

// row is the parquet.Row of r (a parquetRow: its lane, settings and
// metrics) at grid index i, appended to out.
func (l *strategyLayout) row(out parquet.Row, r *parquetRow, i int) parquet.Row {
	col := 0
	str := func(s string) {
		out = append(out, parquet.ByteArrayValue([]byte(s)).Level(0, 0, col))
		col++
	}
	i64 := func(v int64) {
		out = append(out, parquet.Int64Value(v).Level(0, 0, col))
		col++
	}
	f64 := func(v float64) {
		out = append(out, parquet.DoubleValue(v).Level(0, 0, col))
		col++
	}
	str(r.Precision)
	str(r.Backend)
	str(r.WMA)
	str(l.pc.family)
	for k, v := range l.pc.point(i) {
		a := l.pc.axes[k]
		if a.leg {
			str(v.Kind)
		}
		if a.integer {
			i64(int64(v.Value))
		} else {
			f64(v.Value)
		}
	}
	c := &r.ComboColumns
	f64(c.TotalReturn)
	f64(c.CAGR)
	f64(c.Sharpe)
	f64(c.Sortino)
	f64(c.MaxDrawdown)
	f64(c.Calmar)
	f64(c.WinRate)
	i64(c.TotalTrades)
	f64(c.VaR95)
	f64(c.CVaR95)
	f64(c.Omega)
	i64(c.LongBars)
	i64(c.ShortBars)
	i64(c.FlatBars)
	f64(c.ProfitFactor)
	f64(c.Expectancy)
	f64(c.AvgWin)
	f64(c.AvgLoss)
	f64(c.BestTrade)
	f64(c.WorstTrade)
	f64(c.AvgTradeBars)
	f64(c.Exposure)
	f64(c.SQN)
	f64(c.MaxDrawdownBars)
	str(r.Status)
	str(r.Dataset)
	str(r.Timeframe)
	f64(r.Fee)
	str(r.Mode)
	str(r.Source)
	f64(r.BarsPerYear)
	return out
}

// encode writes the rows of lane (its lane and settings columns) and
// cols (their combos; indices their grid indices) with pw, a writer of
// the layout's schema, and closes it.
func (l *strategyLayout) encode(pw *parquet.Writer, lane *parquetRow, cols []ComboColumns, indices []int) error {
	const batch = 1024
	rows := make([]parquet.Row, batch)
	r := *lane
	for off := 0; off < len(cols); off += batch {
		b := rows[:min(batch, len(cols)-off)]
		for k := range b {
			r.ComboColumns = cols[off+k]
			b[k] = l.row(b[k][:0], &r, indices[off+k])
		}
		if _, err := pw.WriteRows(b); err != nil {
			return err
		}
	}
	return pw.Close()
}

// relabelRows copies the rows of a strategy grid's Parquet file src to
// out, each row of lane from[i] (known by its precision) given the lane
// fields of to[i], with meta as the file's metadata.
func (l *strategyLayout) relabelRows(out io.Writer, src io.ReaderAt, size int64, from, to []rowLane, meta [][2]string) error {
	f, err := parquet.OpenFile(src, size)
	if err != nil {
		return err
	}
	if !parquet.EqualNodes(f.Schema(), l.schema) {
		return fmt.Errorf("the results file's schema is not the grid's")
	}
	pw := parquet.NewWriter(out, append([]parquet.WriterOption{l.schema}, parquetOptions()...)...)
	r := parquet.NewReader(f)
	defer r.Close()
	buf := make([]parquet.Row, 1024)
	lane := func(row parquet.Row) error {
		prec := string(row[0].ByteArray())
		for i := range from {
			if from[i].precision.String() == prec {
				t := to[i]
				row[0] = parquet.ByteArrayValue([]byte(t.precision.String())).Level(0, 0, 0)
				row[1] = parquet.ByteArrayValue([]byte(t.backend)).Level(0, 0, 1)
				row[2] = parquet.ByteArrayValue([]byte(t.wma.String())).Level(0, 0, 2)
				row[l.status] = parquet.ByteArrayValue([]byte(string(t.status))).Level(0, 0, l.status)
				return nil
			}
		}
		return fmt.Errorf("a row of precision %q, not of the lanes streamed", prec)
	}
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			if e := lane(row); e != nil {
				return e
			}
		}
		if n > 0 {
			if _, e := pw.WriteRows(buf[:n]); e != nil {
				return e
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	for _, e := range meta {
		pw.SetKeyValueMetadata(e[0], e[1])
	}
	return pw.Close()
}
