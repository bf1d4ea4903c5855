// Package records writes one combo's trades and its per-bar series
// (`sweepbench sessions trades` and `sessions bars`, the workbench's
// export key) as CSV, JSON lines or Parquet, from the combo recomputed by
// engine.InspectIndex: the sweep's own code path, so the records add up to
// the saved metrics (total_return, total_trades, sharpe, profit_factor,
// sqn).
//
// The trades file has one row per trade (engine.Trade), in order:
//
//	entry_time   the entry fill's bar time (UTC; Parquet TIMESTAMP(NANOS))
//	entry_index  that bar's index in the dataset (0 = its first bar)
//	entry_price  the entry fill price (the close, the next open; the run's precision widened;
//	             where the run's loop records none, fill close without stops, the bar's close)
//	exit_time    the exit fill's bar time
//	exit_index   its index (n-1 for a trade still open at the end)
//	exit_price   the exit fill price (a close, an open, a stop's level)
//	side         "long" or "short"
//	bars_held    the bars held (counted in long_bars or short_bars)
//	return       the trade's return R, a fraction, fees and slippage included
//	exit_reason  signal, stop, take-profit, trail or end
//
// The bars file has one row per bar of the dataset:
//
//	time      the bar's time (UTC)
//	index     the bar's index
//	close     its close
//	...       the family's indicator values, NaN in the warm-up: hull's h
//	          (HMA of the source) and h3 (HMA3 of the close); a strategy
//	          family's signal lines (engine.Signal, strategy.SignalSeries)
//	          named by their labels in snake_case ("fast ema 5" is
//	          fast_ema_5, "z 20" is z_20); a line whose name is already a
//	          column (breakout's "close") is signal_NAME
//	position  the position held over the next bar, decided at this bar's
//	          close (engine.Trace.Pos: 1 long, -1 short, 0 flat)
//	return    the strategy's return over this bar, a fraction
//	          (engine.Trace.Returns; 0 at bar 0): equity = prev equity x (1+return)
//	equity    the equity after this bar (engine.Trace.Equity; 1 at the start)
//	drawdown  1 - equity / its running peak, a fraction (0 at a new peak)
//
// Non-finite floats are written as the project writes them everywhere:
// "inf", "-inf", "nan" in CSV and as JSON strings in JSON lines
// (engine.JSONFloat); IEEE doubles in Parquet. Times are RFC 3339 UTC
// text (nanoseconds kept) in CSV and JSON lines.
package records

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/engine/text"
)

// Kind is a column's type.
type Kind int

const (
	KindTime   Kind = iota // Unix nanoseconds, UTC
	KindInt                // an integer (an index, a count, a position)
	KindFloat              // a float64
	KindString             // text
)

// Column is one column of a Table: its name and its n values in the
// slice of its Kind (Int for KindTime and KindInt).
type Column struct {
	Name  string
	Kind  Kind
	Int   []int64
	Float []float64
	Str   []string
}

// Table is a combo's trades or bars, column by column, every column of
// Len() values.
type Table struct {
	Columns []Column
	// Meta is written as the Parquet file's key/value metadata (the
	// session, the combo, the precision); CSV and JSON lines leave it out.
	Meta [][2]string
}

// Len is the number of rows.
func (t *Table) Len() int {
	if len(t.Columns) == 0 {
		return 0
	}
	c := &t.Columns[0]
	if c.Kind == KindFloat {
		return len(c.Float)
	}
	if c.Kind == KindString {
		return len(c.Str)
	}
	return len(c.Int)
}

// Names are the column names in order.
func (t *Table) Names() []string {
	out := make([]string, len(t.Columns))
	for i := range t.Columns {
		out[i] = t.Columns[i].Name
	}
	return out
}

// Column is the column named name, nil when there is none.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// TradeColumns and the fixed columns of the bars file, in order (the
// indicator columns go between close and position).
var (
	TradeColumns = []string{"entry_time", "entry_index", "entry_price", "exit_time", "exit_index", "exit_price",
		"side", "bars_held", "return", "exit_reason"}
	BarLeadColumns  = []string{"time", "index", "close"}
	BarTrailColumns = []string{"position", "return", "equity", "drawdown"}
)

// ErrNoTrace: the combo detail holds no per-bar record (no Trace, or a
// Trace without its returns or equity of n values).
var ErrNoTrace = errors.New("the combo's recomputation holds no per-bar record")

// check returns the number of bars, or ErrNoTrace when d's trace does not
// cover the bars' times.
func check(d *engine.ComboDetail, b *engine.Bars) (int, error) {
	if d == nil || d.Trace == nil {
		return 0, ErrNoTrace
	}
	n := len(b.Time)
	if len(d.Pos) != n || len(d.Equity) != n || len(d.Returns) != n || len(d.Close) != n {
		return 0, fmt.Errorf("%w: %d bars, a trace of pos %d, equity %d, returns %d, close %d", ErrNoTrace,
			n, len(d.Pos), len(d.Equity), len(d.Returns), len(d.Close))
	}
	return n, nil
}

// Trades is d's trades as a Table (the columns of TradeColumns; see the
// package doc), b the bars d was computed on (their times). Errors:
// ErrNoTrace, a trade's bar outside the bars.
func Trades(d *engine.ComboDetail, b *engine.Bars) (*Table, error) {
	n, err := check(d, b)
	if err != nil {
		return nil, err
	}
	m := len(d.Trades)
	et, ei, xt, xi, bh := make([]int64, m), make([]int64, m), make([]int64, m), make([]int64, m), make([]int64, m)
	ep, xp, r := make([]float64, m), make([]float64, m), make([]float64, m)
	side, why := make([]string, m), make([]string, m)
	for k, tr := range d.Trades {
		if tr.Entry < 0 || tr.Exit >= n || tr.Entry > tr.Exit {
			return nil, fmt.Errorf("trade %d: bars %d to %d outside the %d bars", k+1, tr.Entry, tr.Exit, n)
		}
		if tr.EntryPrice == 0 && tr.ExitPrice == 0 {
			// The plain loop (fill close, no stops) records no prices:
			// its fills are the closes of the entry and exit bars.
			tr.EntryPrice, tr.ExitPrice = inPrecision(d.Close[tr.Entry], d.Precision), inPrecision(d.Close[tr.Exit], d.Precision)
		}
		et[k], ei[k], ep[k] = b.Time[tr.Entry], int64(tr.Entry), tr.EntryPrice
		xt[k], xi[k], xp[k] = b.Time[tr.Exit], int64(tr.Exit), tr.ExitPrice
		side[k] = "long"
		if tr.Side < 0 {
			side[k] = "short"
		}
		bh[k], r[k], why[k] = int64(tr.Bars), tr.Return, tr.Reason.String()
	}
	return &Table{Columns: []Column{
		{Name: "entry_time", Kind: KindTime, Int: et}, {Name: "entry_index", Kind: KindInt, Int: ei},
		{Name: "entry_price", Kind: KindFloat, Float: ep},
		{Name: "exit_time", Kind: KindTime, Int: xt}, {Name: "exit_index", Kind: KindInt, Int: xi},
		{Name: "exit_price", Kind: KindFloat, Float: xp},
		{Name: "side", Kind: KindString, Str: side}, {Name: "bars_held", Kind: KindInt, Int: bh},
		{Name: "return", Kind: KindFloat, Float: r}, {Name: "exit_reason", Kind: KindString, Str: why},
	}}, nil
}

// inPrecision is v rounded to precision p and widened back to float64:
// a price as a run of that precision holds it.
func inPrecision(v float64, p engine.Precision) float64 {
	if p == engine.FP32 {
		return float64(float32(v))
	}
	return v
}

// Bars is d's per-bar series as a Table (time, index, close, the
// family's indicators, position, return, equity, drawdown; see the
// package doc), b the bars d was computed on. Drawdown is 1 -
// Equity[i]/max(Equity[0..i]) in float64. Errors: ErrNoTrace.
func Bars(d *engine.ComboDetail, b *engine.Bars) (*Table, error) {
	n, err := check(d, b)
	if err != nil {
		return nil, err
	}
	idx, pos := make([]int64, n), make([]int64, n)
	dd := make([]float64, n)
	peak := math.Inf(-1)
	for i := 0; i < n; i++ {
		idx[i], pos[i] = int64(i), int64(d.Pos[i])
		peak = max(peak, d.Equity[i])
		dd[i] = 1 - d.Equity[i]/peak
	}
	cols := []Column{{Name: "time", Kind: KindTime, Int: b.Time}, {Name: "index", Kind: KindInt, Int: idx},
		{Name: "close", Kind: KindFloat, Float: d.Close}}
	taken := map[string]bool{}
	for _, c := range append(append([]string(nil), BarLeadColumns...), BarTrailColumns...) {
		taken[c] = true
	}
	add := func(name string, v []float64) error {
		if len(v) != n {
			return fmt.Errorf("%w: indicator %s has %d values for %d bars", ErrNoTrace, name, len(v), n)
		}
		if taken[name] {
			name = "signal_" + name
		}
		taken[name] = true
		cols = append(cols, Column{Name: name, Kind: KindFloat, Float: v})
		return nil
	}
	switch {
	case d.Signal != nil:
		for _, l := range d.Signal.Lines {
			if err := add(SnakeCase(l.Name), l.Values); err != nil {
				return nil, err
			}
		}
	default:
		if err := add("h", d.H); err != nil {
			return nil, err
		}
		if err := add("h3", d.H3); err != nil {
			return nil, err
		}
	}
	cols = append(cols, Column{Name: "position", Kind: KindInt, Int: pos}, Column{Name: "return", Kind: KindFloat, Float: d.Returns},
		Column{Name: "equity", Kind: KindFloat, Float: d.Equity}, Column{Name: "drawdown", Kind: KindFloat, Float: dd})
	return &Table{Columns: cols}, nil
}

// SnakeCase is a label as a column name: lower case, every run of
// characters other than letters and digits one underscore, none at
// either end ("fast ema 5" -> "fast_ema_5", "+entry" -> "entry").
func SnakeCase(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
			continue
		}
		under = true
	}
	if b.Len() == 0 {
		return "line"
	}
	return b.String()
}

// Write writes t to w in format f: CSV with a header, JSON lines (one
// object per row, its keys the columns in order) or Parquet (every
// column required: times TIMESTAMP(NANOS, UTC), integers INT64, floats
// DOUBLE, text dictionary-encoded UTF-8; t.Meta as key/value metadata).
func (t *Table) Write(w io.Writer, f output.RowFormat) error {
	switch f {
	case output.RowsCSV:
		return t.writeCSV(w)
	case output.RowsJSONL:
		return t.writeJSONL(w)
	case output.RowsParquet:
		return t.writeParquet(w)
	}
	return fmt.Errorf("records: format %q: want csv, jsonl or parquet", f)
}

// TimeText is a bar time (Unix ns) as CSV and JSON lines write it:
// RFC 3339 in UTC with its fraction of a second when it has one.
func TimeText(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// text is row i of column c as CSV writes it.
func (c *Column) text(i int) string {
	switch c.Kind {
	case KindTime:
		return TimeText(c.Int[i])
	case KindInt:
		return strconv.FormatInt(c.Int[i], 10)
	case KindFloat:
		return text.FormatFloat(c.Float[i])
	}
	return c.Str[i]
}

func (t *Table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Names()); err != nil {
		return err
	}
	row := make([]string, len(t.Columns))
	for i, n := 0, t.Len(); i < n; i++ {
		for j := range t.Columns {
			row[j] = t.Columns[j].text(i)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func (t *Table) writeJSONL(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	keys := make([][]byte, len(t.Columns))
	for j, c := range t.Columns {
		k, _ := json.Marshal(c.Name) // a string always marshals
		keys[j] = append(k, ':')
	}
	var b []byte
	for i, n := 0, t.Len(); i < n; i++ {
		b = append(b[:0], '{')
		for j := range t.Columns {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, keys[j]...)
			c := &t.Columns[j]
			switch c.Kind {
			case KindInt:
				b = strconv.AppendInt(b, c.Int[i], 10)
			case KindFloat:
				v, _ := engine.JSONFloat(c.Float[i]).MarshalJSON() // never fails
				b = append(b, v...)
			default:
				s, _ := json.Marshal(c.text(i))
				b = append(b, s...)
			}
		}
		b = append(b, '}', '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// schema is t's Parquet schema: a struct type made by reflect in column
// order (as engine/output's strategy layout builds its own), so the
// columns keep their order.
func (t *Table) schema() *parquet.Schema {
	fs := make([]reflect.StructField, len(t.Columns))
	for j, c := range t.Columns {
		typ, tag := reflect.TypeOf(int64(0)), c.Name
		switch c.Kind {
		case KindTime:
			tag += ",timestamp(nanosecond)"
		case KindFloat:
			typ = reflect.TypeOf(0.0)
		case KindString:
			typ, tag = reflect.TypeOf(""), tag+",dict"
		}
		fs[j] = reflect.StructField{Name: fmt.Sprintf("F%d", j), Type: typ, Tag: reflect.StructTag(`parquet:"` + tag + `"`)}
	}
	return parquet.SchemaOf(reflect.New(reflect.StructOf(fs)).Elem().Interface())
}

func (t *Table) writeParquet(w io.Writer) error {
	s := t.schema()
	// The schema's leaves are in the struct's order: column j is leaf j.
	pw := parquet.NewWriter(w, s, parquet.Compression(output.FastSnappy{}), parquet.DataPageVersion(1),
		parquet.MaxRowsPerRowGroup(output.ParquetRowGroup))
	for _, kv := range t.Meta {
		pw.SetKeyValueMetadata(kv[0], kv[1])
	}
	const batch = 1024
	rows := make([]parquet.Row, 0, batch)
	n := t.Len()
	for i := 0; i < n; i++ {
		row := make(parquet.Row, len(t.Columns))
		for j := range t.Columns {
			c := &t.Columns[j]
			var v parquet.Value
			switch c.Kind {
			case KindTime, KindInt:
				v = parquet.Int64Value(c.Int[i])
			case KindFloat:
				v = parquet.DoubleValue(c.Float[i])
			default:
				v = parquet.ByteArrayValue([]byte(c.Str[i]))
			}
			row[j] = v.Level(0, 0, j)
		}
		rows = append(rows, row)
		if len(rows) == batch || i == n-1 {
			if _, err := pw.WriteRows(rows); err != nil {
				return err
			}
			rows = rows[:0]
		}
	}
	return pw.Close()
}
