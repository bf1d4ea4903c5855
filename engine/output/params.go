package output

import (
	"strconv"

	"sweepbench/engine"
)

// A combo's parameters in every per-combo output. A hull study's rows
// carry hma and hma3 from ComboResult.Combo, as they always have; a
// strategy study's (Grid.Strategy) carry, after the lane's fields, the
// study's family as "strategy" and then each parameter of the combo under
// its SPEC name, read from Grid.Point(Index): the columns are
// Grid.Columns() (a crossover leg as NAME_kind, a string, then NAME, its
// length). A length is an integer (int64 in Parquet), a decimal
// threshold its exact decimal text (a double in Parquet).

// paramCols describes a strategy grid's parameter columns; nil for hull.
// Their JSON fields are jsonFields'.
type paramCols struct {
	grid   engine.Grid
	family string
	axes   []paramAxis
}

// paramAxis is one parameter of the grid: a leg writes its kind then its
// length; integer tells a length (integer, legs' too) from a decimal.
type paramAxis struct {
	name    string
	leg     bool
	integer bool
}

// paramColsOf is g's parameter columns, nil for a hull grid.
func paramColsOf(g engine.Grid) *paramCols {
	if g.Strategy == nil {
		return nil
	}
	p := &paramCols{grid: g, family: g.Family()}
	for _, ax := range g.Strategy.Axes() {
		p.axes = append(p.axes, paramAxis{name: ax.Name, leg: ax.Kind != "", integer: ax.Kind != "" || ax.Integer})
	}
	return p
}

// columns are the parameter columns (Grid.Columns()).
func (p *paramCols) columns() []string {
	var out []string
	for _, a := range p.axes {
		if a.leg {
			out = append(out, a.name+"_kind")
		}
		out = append(out, a.name)
	}
	return out
}

// point is combo i's parameters, one per axis.
func (p *paramCols) point(i int) []engine.ParamValue { return p.grid.Point(i) }

// appendNumber appends parameter v of axis a as a number: an integer
// length whole, a decimal its exact decimal text (a valid JSON number:
// "1.75", "-0.5", "2").
func (a paramAxis) appendNumber(b []byte, v engine.ParamValue) []byte {
	if a.integer {
		return strconv.AppendInt(b, int64(v.Value), 10)
	}
	if v.Text == "" {
		return appendFloat(b, v.Value)
	}
	return append(b, v.Text...)
}

// RowColumnsOf are the columns of a per-combo row of grid g in order:
// RowColumns for hull; for a strategy grid precision, backend, wma,
// strategy, the grid's parameter columns (Grid.Columns()), the metrics
// and the settings.
func RowColumnsOf(g engine.Grid) []string {
	p := paramColsOf(g)
	if p == nil {
		return RowColumns()
	}
	out := append([]string{"precision", "backend", "wma", "strategy"}, p.columns()...)
	out = append(out, engine.MetricNames...)
	return append(out, "status", "dataset", "timeframe", "fee", "mode", "source", "bars_per_year")
}
