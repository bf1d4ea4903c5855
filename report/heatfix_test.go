package report

import (
	"image/color"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/plot"

	"sweepbench/engine"
)

// labelled is the labelled ticks of axis a of p, over its range.
func labelled(a *plot.Axis) []plot.Tick {
	var out []plot.Tick
	for _, t := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if t.Label != "" {
			out = append(out, t)
		}
	}
	return out
}

// checkGridTicks: every labelled tick of a is at one of vals (a column's
// or row's centre), labelled by that value's text, and there are at
// least two of them (for two values or more) and at most maxGridLabels.
func checkGridTicks(t *testing.T, what string, a *plot.Axis, vals []float64, text []string) {
	t.Helper()
	ts := labelled(a)
	if len(ts) > maxGridLabels || (len(vals) > 1 && len(ts) < 2) || len(ts) == 0 {
		t.Errorf("%s: %d labelled ticks (%v) for %d values", what, len(ts), ts, len(vals))
	}
	for _, tk := range ts {
		k := slices.Index(vals, tk.Value)
		if k < 0 {
			t.Errorf("%s: tick %q at %g is not a grid value (%v)", what, tk.Label, tk.Value, vals)
			continue
		}
		if tk.Label != text[k] {
			t.Errorf("%s: tick at %g labelled %q, want %q", what, tk.Value, tk.Label, text[k])
		}
		if tk.Value < a.Min || tk.Value > a.Max {
			t.Errorf("%s: tick %q outside the grid's range [%g, %g]", what, tk.Label, a.Min, a.Max)
		}
	}
}

func rangeVals(r engine.Range) ([]float64, []string) {
	var v []float64
	var s []string
	for i := 0; i < r.Len(); i++ {
		v = append(v, float64(r.At(i)))
		s = append(s, strconv.Itoa(r.At(i)))
	}
	return v, s
}

// TestHeatTicksOnGrid: a hull heatmap's ticks are the grid's lengths
// (hma3 12:120:12 read 25/75/125, 125 past the last column), whatever
// the blocks; a strategy heatmap's are its parameters' values, for every
// pair of axes.
func TestHeatTicksOnGrid(t *testing.T) {
	black := func(float64) color.Color { return color.Black }
	for _, g := range []engine.Grid{
		{HMA: engine.Range{Start: 10, Stop: 200, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 120, Step: 12}},
		{HMA: engine.Range{Start: 5, Stop: 7, Step: 1}, HMA3: engine.Range{Start: 3, Stop: 300, Step: 3}},
	} {
		for _, b := range []int{1, 3} {
			p := heatPlot(newHeat(g, b, b), "t", black, nil)
			v, s := rangeVals(g.HMA3)
			checkGridTicks(t, "hma3 "+g.HMA3.String(), &p.X, v, s)
			v, s = rangeVals(g.HMA)
			checkGridTicks(t, "hma "+g.HMA.String(), &p.Y, v, s)
		}
	}
	src := memorySource(t, crossSpec())
	g := src.Report.Grid
	all := g.Strategy.Axes()
	for i := range all {
		for j := range all {
			if i == j {
				continue
			}
			h := newStrategyHeat(g, DefaultCells, [2]int{i, j})
			p := heatPlot(h, "t", black, nil)
			checkGridTicks(t, all[j].Name, &p.X, h.ax[1].pos, all[j].Values)
			checkGridTicks(t, all[i].Name, &p.Y, h.ax[0].pos, all[i].Values)
		}
	}
}
