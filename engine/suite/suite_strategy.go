package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"sweepbench/engine"
	"sweepbench/engine/text"
)

// The aggregate of a strategy family's grid (engine.Grid.Strategy): its
// combos are named by their parameters (Grid.Columns, Grid.Point), as
// every per-combo output names them, and its heatmap is over the grid's
// first two axes (rows the first, columns the second; one column for a
// grid of one axis), each cell the best median over the combos that share
// those two values (its other axes), in the objective's sense; a cell the
// grid holds no combo of (--fast-below-slow) has none.

// axisHeat is the median heatmap of a strategy grid over its first two
// axes.
type axisHeat struct {
	rows, cols []string // the two axes' values (cols one "" for a grid of one axis)
	rowAxis    engine.StrategyAxis
	colAxis    *engine.StrategyAxis // nil for a grid of one axis
	over       []string             // the other axes' names, reduced in each cell
	vals       [][]float64          // [row][col]: the best median, NaN when none
}

// heat builds the strategy grid's axisHeat from the medians.
func (g *Aggregate) heat() *axisHeat {
	st := g.Grid.Strategy
	axes := st.Axes()
	h := &axisHeat{}
	if len(axes) == 0 {
		return h
	}
	h.cols = []string{""}
	// A price leg is one value, length 0 as the combos' columns say.
	for a := range axes[:min(2, len(axes))] {
		if axes[a].Kind == "price" {
			axes[a].Values = []string{"0"}
		}
	}
	h.rowAxis, h.rows = axes[0], axes[0].Values
	if len(axes) > 1 {
		h.colAxis, h.cols = &axes[1], axes[1].Values
	}
	for _, ax := range axes[min(2, len(axes)):] {
		h.over = append(h.over, ax.Name)
	}
	h.vals = make([][]float64, len(h.rows))
	for r := range h.vals {
		h.vals[r] = make([]float64, len(h.cols))
		for c := range h.vals[r] {
			h.vals[r][c] = math.NaN()
		}
	}
	for i, v := range g.Median {
		if math.IsNaN(v) {
			continue
		}
		co := st.Coords(i)
		r, c := co[0], 0
		if len(co) > 1 {
			c = co[1]
		}
		if r < 0 || r >= len(h.rows) || c < 0 || c >= len(h.cols) {
			continue
		}
		if cur := h.vals[r][c]; math.IsNaN(cur) || (g.Objective.Minimise && v < cur) || (!g.Objective.Minimise && v > cur) {
			h.vals[r][c] = v
		}
	}
	return h
}

// of is what the heatmap's cells hold: "median sharpe", "best median
// sharpe over exit" for a grid of more than two axes.
func (h *axisHeat) of(metric string) string {
	if len(h.over) == 0 {
		return "median " + metric
	}
	return "best median " + metric + " over " + strings.Join(h.over, ", ")
}

// paramText is a parameter column's text in a table: a leg's kind, or
// the value's exact decimal.
func paramTexts(ps []engine.ParamValue) []string {
	var out []string
	for _, p := range ps {
		if p.Kind != "" {
			out = append(out, p.Kind)
		}
		out = append(out, p.Text)
	}
	return out
}

// paramJSON is a parameter column's JSON value: a leg's kind a string, a
// value a number (its exact decimal text: "1.75", "20").
func paramJSON(t string) json.RawMessage {
	if _, err := strconv.ParseFloat(t, 64); err == nil && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(t) // a string always marshals
	return b
}

// strategyRow is one combo of the aggregate's JSON: its parameter
// columns (Grid.Columns) in order, then median, worst, profitable.
type strategyRow struct {
	cols       []string
	vals       []json.RawMessage
	median     engine.JSONFloat
	worst      engine.JSONFloat
	profitable int
}

func (r strategyRow) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	field := func(k string, v []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	for i, c := range r.cols {
		field(c, r.vals[i])
	}
	for _, f := range []struct {
		k string
		v any
	}{{"median", r.median}, {"worst", r.worst}, {"profitable", r.profitable}} {
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		field(f.k, v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// strategyAggregate is the JSON shape of a strategy grid's aggregate: as
// hull's, plus the family and its grid, each combo by its parameters and
// the heatmap over the first two axes.
type strategyAggregate struct {
	Objective string          `json:"objective"`
	Lane      string          `json:"lane"`
	Datasets  []string        `json:"datasets"`
	Strategy  string          `json:"strategy"`
	Grid      string          `json:"grid"`
	Columns   []string        `json:"columns"`
	Combos    []strategyRow   `json:"combos"`
	Heatmap   strategyHeatmap `json:"heatmap"`
}

type strategyHeatmap struct {
	Of           string               `json:"of"`
	Rows         string               `json:"rows"`
	RowValues    []json.RawMessage    `json:"row_values"`
	Columns      string               `json:"columns,omitempty"`
	ColumnValues []json.RawMessage    `json:"column_values,omitempty"`
	Over         []string             `json:"over,omitempty"`
	Values       [][]engine.JSONFloat `json:"values"`
}

// strategyJSON is JSON for a strategy grid.
func (g *Aggregate) strategyJSON(lane engine.Precision) any {
	cols := g.Grid.Columns()
	out := strategyAggregate{Objective: g.Objective.Name(), Lane: lane.String(), Datasets: g.Datasets,
		Strategy: g.Grid.Family(), Grid: g.Grid.Text(), Columns: cols, Combos: make([]strategyRow, len(g.Median))}
	for i := range g.Median {
		ts := paramTexts(g.Grid.Point(i))
		vs := make([]json.RawMessage, len(ts))
		for k, t := range ts {
			if k < len(cols) && strings.HasSuffix(cols[k], "_kind") {
				vs[k], _ = json.Marshal(t)
			} else {
				vs[k] = paramJSON(t)
			}
		}
		out.Combos[i] = strategyRow{cols: cols, vals: vs, median: engine.JSONFloat(g.Median[i]),
			worst: engine.JSONFloat(g.Worst[i]), profitable: g.Profitable[i]}
	}
	h := g.heat()
	values := func(ts []string) []json.RawMessage {
		out := make([]json.RawMessage, len(ts))
		for i, t := range ts {
			out[i] = paramJSON(t)
		}
		return out
	}
	hm := strategyHeatmap{Of: h.of(g.Objective.Name()), Rows: h.rowAxis.Name, RowValues: values(h.rows), Over: h.over}
	if h.colAxis != nil {
		hm.Columns, hm.ColumnValues = h.colAxis.Name, values(h.cols)
	}
	for _, row := range h.vals {
		r := make([]engine.JSONFloat, len(row))
		for c, v := range row {
			r[c] = engine.JSONFloat(v)
		}
		hm.Values = append(hm.Values, r)
	}
	out.Heatmap = hm
	return out
}

// strategyTable is WriteTable for a strategy grid: the top k combos by
// their parameter columns, then the heatmap over the first two axes.
func (g *Aggregate) strategyTable(w io.Writer, k int) error {
	bw := text.NewErrWriter(w)
	name := g.Objective.Name()
	worst := "min"
	if g.Objective.Minimise {
		worst = "max"
	}
	bw.Printf("\nAcross %d datasets: top %d combos by the median %s (worst = the %s over the datasets; profitable = datasets with total return > 0)\n",
		len(g.Datasets), min(k, len(g.Median)), name, worst)
	cols := g.Grid.Columns()
	top := g.Top(k)
	texts := make([][]string, len(top))
	width := make([]int, len(cols))
	for c, col := range cols {
		width[c] = max(5, len(col))
	}
	for t, i := range top {
		texts[t] = paramTexts(g.Grid.Point(i))
		for c, s := range texts[t] {
			if c < len(width) {
				width[c] = max(width[c], len(s))
			}
		}
	}
	var head strings.Builder
	for c, col := range cols {
		fmt.Fprintf(&head, "  %*s", width[c], col)
	}
	bw.Printf("%s  %12s  %12s  %10s\n", head.String(), "median", "worst", "profitable")
	for t, i := range top {
		var row strings.Builder
		for c, s := range texts[t] {
			if c < len(width) {
				fmt.Fprintf(&row, "  %*s", width[c], s)
			}
		}
		bw.Printf("%s  %12s  %12s  %6d/%d\n", row.String(), fmtAgg(g.Median[i]), fmtAgg(g.Worst[i]), g.Profitable[i], len(g.Datasets))
	}
	h := g.heat()
	if len(h.cols) > 100 || len(h.rows) > 200 {
		bw.Printf("\n(heatmap of the %s: in the JSON report, the grid is too large to draw here)\n", h.of(name))
		return bw.Err()
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range h.vals {
		for _, v := range row {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	axes := fmt.Sprintf("rows %s %s", h.rowAxis.Name, h.rowAxis.Range)
	if h.colAxis != nil {
		axes += fmt.Sprintf(", columns %s %s", h.colAxis.Name, h.colAxis.Range)
	}
	bw.Printf("\nHeatmap of the %s: %s; '%c' lowest (%s) .. '%c' highest (%s), '?' none\n",
		h.of(name), axes, heatShades[0], fmtAgg(lo), heatShades[len(heatShades)-1], fmtAgg(hi))
	rw := 5
	for _, r := range h.rows {
		rw = max(rw, len(r))
	}
	for r, row := range h.vals {
		var b strings.Builder
		for _, v := range row {
			b.WriteByte(heatCell(v, lo, hi))
		}
		label := h.rows[r]
		if h.rowAxis.Kind == "price" {
			label = "price"
		}
		bw.Printf("  %*s |%s|\n", rw, label, b.String())
	}
	return bw.Err()
}

// heatCell is the heatmap's character for v between lo and hi.
func heatCell(v, lo, hi float64) byte {
	switch {
	case math.IsNaN(v):
		return '?'
	case hi <= lo || math.IsInf(v, -1):
		return heatShades[0]
	case math.IsInf(v, 1):
		return heatShades[len(heatShades)-1]
	}
	k := int((v - lo) / (hi - lo) * float64(len(heatShades)-1))
	return heatShades[min(max(k, 0), len(heatShades)-1)]
}
