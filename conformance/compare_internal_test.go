package conformance

import (
	"testing"

	"sweepbench/engine"
)

// TestEquityDiff: with Tolerance.Equity a near-zero return is bounded
// through its equity (the case that failed a GPU run: 8.81e-5 against
// 8.45e-5, equity 1.0000881 against 1.0000845), cagr and calmar through
// their definitions from the backend's own return and drawdown; an
// inconsistent cagr or calmar still fails.
func TestEquityDiff(t *testing.T) {
	w := engine.Metrics{TotalReturn: 8.45193862915039e-05, CAGR: 0.014922350645065308, MaxDrawdown: 0.0974, Calmar: 0.014922350645065308 / 0.0974}
	g := engine.Metrics{TotalReturn: 8.809566497802734e-05, CAGR: 0.015558620914816856, MaxDrawdown: 0.0974}
	g.Calmar = g.CAGR / g.MaxDrawdown
	if d := relDiff(g.TotalReturn, w.TotalReturn); d < 0.04 {
		t.Fatalf("the fixture's returns differ by %g relative, want the ill-conditioned 4%%", d)
	}
	for _, name := range []string{"total_return", "cagr", "calmar"} {
		d, ok := equityDiff(name, g, w)
		if !ok || d > 1e-3 {
			t.Errorf("%s: difference %g (measured %v), want within 1e-3", name, d, ok)
		}
	}
	bad := g
	bad.CAGR *= 1.01 // not (1+R)^k - 1 of its own return
	if d, _ := equityDiff("cagr", bad, w); d < 1e-3 {
		t.Errorf("an inconsistent cagr passes: difference %g", d)
	}
	bad = g
	bad.Calmar *= 1.01
	if d, _ := equityDiff("calmar", bad, w); d < 1e-3 {
		t.Errorf("an inconsistent calmar passes: difference %g", d)
	}
	bad = g
	bad.TotalReturn = w.TotalReturn + 0.01 // the equity itself 1% off
	if d, _ := equityDiff("total_return", bad, w); d < 1e-3 {
		t.Errorf("an equity 1%% off passes: difference %g", d)
	}
}
