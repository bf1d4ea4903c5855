package report

import (
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/bench"
)

// TestBenchFigure: one bar per rung that ran (skipped and failed ones
// left out), on a log axis from the decade below the slowest to the one
// above the fastest.
func TestBenchFigure(t *testing.T) {
	rows := []bench.RungResult{
		{ID: "M0", Precision: engine.FP64, CombosPerS: 3.5, Extrapolated: true},
		{ID: "M2", Precision: engine.FP64, CombosPerS: 420},
		{ID: "M6", Precision: engine.FP32, Skipped: "no CUDA backend"},
		{ID: "M4", Precision: engine.FP32, CombosPerS: 5400},
	}
	f, err := BenchFigure(rows)
	if err != nil {
		t.Fatal(err)
	}
	sh := shapeOf(t, render(t, f))
	for _, s := range []string{"M0 fp64*", "M2 fp64", "M4 fp32", "combos/s (log scale)", "1", "10000"} {
		if !has(sh.Texts, s) {
			t.Errorf("no %q in %q", s, sh.Texts)
		}
	}
	if has(sh.Texts, "M6") {
		t.Error("the skipped rung is drawn")
	}
	if p := f.panels[0].p; p.Y.Min != 1 || p.Y.Max != 10000 {
		t.Errorf("y [%g, %g], want [1, 10000]", p.Y.Min, p.Y.Max)
	}
	if _, err := BenchFigure(rows[2:3]); err == nil {
		t.Error("no rung ran: want an error")
	}
}
