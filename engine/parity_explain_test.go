package engine

import (
	"context"
	"strings"
	"testing"
)

// TestParityExplanation: when the per-combo trade limit is the only
// condition that fires, the report explains it; when another fires too,
// it does not.
func TestParityExplanation(t *testing.T) {
	n := 50
	bars := &Bars{Time: make([]int64, n), Close: make([]float64, n)}
	h := make([]float64, n)
	h3 := make([]float64, n)
	for i := range h {
		bars.Close[i] = 100
		h[i], h3[i] = 100, 100 // equal everywhere: no flips, no indicator error
	}
	g := Grid{HMA: Range{2, 2, 1}, HMA3: Range{6, 6, 1}}
	ind := &Indicators[float64]{H: map[int][]float64{2: h}, H3: map[int][]float64{6: h3}}
	run := func(trades int, ret float64) *Run {
		return &Run{Status: StatusComplete, Results: []ComboResult{{Index: 0, Combo: g.At(0),
			Metrics: Metrics{TotalTrades: trades, TotalReturn: ret}}}}
	}
	for _, c := range []struct {
		name      string
		test      *Run
		explained bool
	}{
		{"only the trade limit", run(105, 0.1), true},
		{"trade limit and pnl", run(105, 0.3), false},
		{"nothing fires", run(101, 0.1), false},
	} {
		p, err := Compare(context.Background(), ParityInput[float64, float64]{bars, g, Params{}, run(100, 0.1), c.test, ind, ind, 0})
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
