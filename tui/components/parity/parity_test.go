package parity

import (
	"strings"
	"testing"

	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/theme"
)

// TestSummaryNamesEachFiguresCombo (issue 25, items 19 and 20): the pane
// shows the reason with its combo, each maximum with the combo it comes
// from (max |dPnL| and its relative maximum are of different combos
// here) and the engine's explanation of a dPnL-only collapse.
func TestSummaryNamesEachFiguresCombo(t *testing.T) {
	g := engine.Grid{HMA: engine.Range{Start: 100, Stop: 100, Step: 1}, HMA3: engine.Range{Start: 108, Stop: 120, Step: 12}}
	row := func(k, trades int, ret64, ret32 float64) engine.ComboParity {
		return engine.NewComboParity(&engine.ComboResult{Index: k, Combo: g.At(k), Metrics: engine.Metrics{TotalTrades: trades, TotalReturn: ret64}},
			&engine.ComboResult{Index: k, Combo: g.At(k), Metrics: engine.Metrics{TotalTrades: trades, TotalReturn: ret32}})
	}
	// hma 100 x hma3 108: +1 pp on 0.5% (rel 2); hma 100 x hma3 120: -6 pp on -60%.
	p := engine.MergeParity([]*engine.Parity{{Tolerance: engine.DefaultBorderline,
		Combos: []engine.ComboParity{row(0, 50, 0.005, 0.015), row(1, 1376, -0.60, -0.66)}}})
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true)}
	state := &common.RunState{Selected: -1, Results: &common.Results{Report: &engine.Report{Parity: p, Grid: g}, Grid: g}}
	m := New(ctx, state)
	m.SetSize(200, 40)
	m.Reload()
	sum := strings.Join(m.Summary(), "\n")
	for _, s := range []string{
		"! max |dPnL| 6 pp > 5 pp on (hma 100, hma3 120): return -60.00% fp64, -66.00% fp32; 1,376 trades in both",
		"max |dPnL| 6 pp (hma 100, hma3 120); max relative 2.00e+00 (hma 100, hma3 108)",
		"note: only max |dPnL| fired, on (hma 100, hma3 120)",
	} {
		if !strings.Contains(sum, s) {
			t.Errorf("the summary does not say %q:\n%s", s, sum)
		}
	}
}
