package engine_test

import (
	"context"
	"strings"
	"testing"

	"sweepbench/engine"
	_ "sweepbench/reference" // the CPU arithmetic engine.Compare uses
)

// TestParityExplanation: when the per-combo trade limit is the only
// condition that fires, the report explains it; when another fires too,
// it does not.
func TestParityExplanation(t *testing.T) {
	n := 50
	bars := &engine.Bars{Time: make([]int64, n), Close: make([]float64, n)}
	h := make([]float64, n)
	h3 := make([]float64, n)
	for i := range h {
		bars.Close[i] = 100
		h[i], h3[i] = 100, 100 // equal everywhere: no flips, no indicator error
	}
	g := engine.Grid{HMA: engine.Range{Start: 2, Stop: 2, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 6, Step: 1}}
	ind := &engine.Indicators[float64]{H: map[int][]float64{2: h}, H3: map[int][]float64{6: h3}}
	run := func(trades int, ret float64) *engine.Run {
		return &engine.Run{Status: engine.StatusComplete, Results: []engine.ComboResult{{Index: 0, Combo: g.At(0),
			Metrics: engine.Metrics{TotalTrades: trades, TotalReturn: ret}}}}
	}
	for _, c := range []struct {
		name      string
		test      *engine.Run
		explained bool
	}{
		{"only the trade limit", run(105, 0.1), true},
		{"trade limit and pnl", run(105, 0.3), false},
		{"nothing fires", run(101, 0.1), false},
	} {
		p, err := engine.Compare(context.Background(), engine.ParityInput[float64, float64]{Bars: bars, Grid: g, Ref: run(100, 0.1), Test: c.test, RefInd: ind, TestInd: ind})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Explanation != ""; got != c.explained {
			t.Errorf("%s: explanation %q (verdict %s, reasons %q)", c.name, p.Explanation, p.Verdict, p.Reasons)
		}
		if c.explained && !strings.Contains(p.Explanation, "every flip is borderline") {
			t.Errorf("%s: explanation %q does not say the flips are borderline", c.name, p.Explanation)
		}
	}
}
