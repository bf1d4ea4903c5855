package engine_test

import (
	"math"
	"testing"

	"sweepbench/engine"
	_ "sweepbench/strategy" // registers engine.NewStrategy
)

// summariseStrategy summarises every combo of family's grid over params,
// combo i's Sharpe being i.
func summariseStrategy(t *testing.T, family string, params map[string]string, fastBelowSlow bool, opt engine.SummaryOptions) (engine.Grid, *engine.Summary) {
	t.Helper()
	st, err := engine.NewStrategy(family, params, fastBelowSlow)
	if err != nil {
		t.Fatal(err)
	}
	g := engine.Grid{Strategy: st}
	s := engine.NewSummariser(g, engine.FP64, engine.Objective{}, opt, nil)
	rs := make([]engine.ComboResult, g.Len())
	for i := range rs {
		rs[i] = engine.ComboResult{Index: i, Metrics: engine.Metrics{Sharpe: float64(i), TotalTrades: 1}}
	}
	s.Add(rs)
	run := &engine.Run{Precision: engine.FP64, Grid: g}
	s.Keep(run)
	if run.Summary == nil || run.Summary.Count != g.Len() {
		t.Fatalf("summary %+v", run.Summary)
	}
	return g, run.Summary
}

// TestStrategyHeatmap: a strategy grid's heatmap is over its first two
// axes (Strategy.Coords), without a panic: a crossover grid's cells are
// one combo each (Full; a pair --fast-below-slow drops is an empty cell),
// a z-score grid's (three axes) reduce its exits per (length, entry), and
// a grid larger than the cap is reduced by blocks.
func TestStrategyHeatmap(t *testing.T) {
	for _, fbs := range []bool{false, true} {
		g, sum := summariseStrategy(t, "cross", map[string]string{"fast": "ema:5:25:5", "slow": "sma:10:30:10"}, fbs, engine.SummaryOptions{})
		h := sum.Heatmap("sharpe")
		if h.Rows != 5 || h.Cols != 3 || !h.Full() {
			t.Fatalf("fast below slow %v: %d x %d cells, full %v; want 5 x 3, full", fbs, h.Rows, h.Cols, h.Full())
		}
		for r := range h.Rows {
			for c := range h.Cols {
				i := g.Strategy.IndexOf([]int{r, c})
				cell := h.Cell(r, c)
				if i < 0 {
					if cell.N != 0 || !fbs {
						t.Errorf("cell (%d, %d): no combo, holds %+v", r, c, cell)
					}
					continue
				}
				if cell.N != 1 || cell.Max != float64(i) {
					t.Errorf("cell (%d, %d) %+v, want combo %d (%s)", r, c, cell, i, g.Label(i))
				}
				if cr, cc := h.CellOf(i); cr != r || cc != c {
					t.Errorf("CellOf(%d) = (%d, %d), want (%d, %d)", i, cr, cc, r, c)
				}
			}
		}
	}

	g, sum := summariseStrategy(t, "zscore", map[string]string{"length": "10:30:10", "entry": "1.5:2:0.5", "exit": "0:1:0.5"}, false, engine.SummaryOptions{})
	h := sum.Heatmap("sharpe")
	if h.Rows != 3 || h.Cols != 2 || h.Full() {
		t.Fatalf("zscore: %d x %d cells, full %v; want 3 x 2 reduced", h.Rows, h.Cols, h.Full())
	}
	for r := range h.Rows {
		for c := range h.Cols {
			lo, hi := math.Inf(1), math.Inf(-1)
			n := 0
			for x := range 3 {
				i := g.Strategy.IndexOf([]int{r, c, x})
				lo, hi, n = min(lo, float64(i)), max(hi, float64(i)), n+1
			}
			if cell := h.Cell(r, c); cell.N != n || cell.Min != lo || cell.Max != hi {
				t.Errorf("zscore cell (%d, %d) %+v, want %d combos %v..%v", r, c, cell, n, lo, hi)
			}
		}
	}

	_, sum = summariseStrategy(t, "breakout", map[string]string{"entry": "10:100:1", "exit": "5:50:1"}, false, engine.SummaryOptions{MaxRows: 16, MaxCols: 16})
	h = sum.Heatmap("sharpe")
	if h.Rows > 16 || h.Cols > 16 || h.Full() {
		t.Fatalf("breakout 91 x 46 capped at 16: %d x %d cells of %d x %d", h.Rows, h.Cols, h.BlockRows, h.BlockCols)
	}
	total := 0
	for r := range h.Rows {
		for c := range h.Cols {
			total += h.Cell(r, c).N
		}
	}
	if total != 91*46 {
		t.Errorf("breakout cells hold %d combos, want %d", total, 91*46)
	}
}
