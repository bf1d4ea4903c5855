package engine_test

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/engine/text"
)

// verdictCase is a two-combo grid (hma 2 and 3, hma3 6) whose indicator
// series are one flat series in both precisions (no flip, no indicator
// error), with the trade counts and total returns given per combo for
// the fp64 and the fp32 run.
func verdictCase(t *testing.T, trades64, trades32 [2]int, ret64, ret32 [2]float64, sides ...string) *engine.Parity {
	t.Helper()
	n := 50
	bars := &engine.Bars{Time: make([]int64, n), Close: make([]float64, n)}
	flat := make([]float64, n)
	for i := range flat {
		bars.Close[i], flat[i] = 100, 100
	}
	g := engine.Grid{HMA: engine.Range{Start: 2, Stop: 3, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 6, Step: 1}}
	ind := &engine.Indicators[float64]{H: map[int][]float64{2: flat, 3: flat}, H3: map[int][]float64{6: flat}}
	run := func(tr [2]int, ret [2]float64) *engine.Run {
		r := &engine.Run{Status: engine.StatusComplete, Grid: g}
		for k := range 2 {
			r.Results = append(r.Results, engine.ComboResult{Index: k, Combo: g.At(k), Metrics: engine.Metrics{TotalTrades: tr[k], TotalReturn: ret[k]}})
		}
		return r
	}
	in := engine.ParityInput[float64, float64]{Bars: bars, Grid: g,
		Ref: run(trades64, ret64), Test: run(trades32, ret32), RefInd: ind, TestInd: ind}
	if len(sides) == 2 {
		in.RefLabel, in.TestLabel = sides[0], sides[1]
	}
	p, err := engine.Compare(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParityReasonsNameTheGivenSides (trial 2, item 7): a diff of two
// sessions compares A against B, not fp64 against fp32, and its collapse
// reasons say so; without labels they stay fp64 and fp32.
func TestParityReasonsNameTheGivenSides(t *testing.T) {
	tr64, tr32 := [2]int{100, 418}, [2]int{100, 2729}
	ret64, ret32 := [2]float64{0.01, -0.2310}, [2]float64{0.01, -0.9263}
	for _, c := range []struct {
		sides []string
		want  [2]string
	}{
		{nil, [2]string{
			"max |dPnL| 69.53 pp > 5 pp on (hma 3, hma3 6): return -23.10% fp64, -92.63% fp32; trades 418 fp64, 2,729 fp32",
			"1 combo with |dn| > max(1% of fp64 trades, 2); worst (hma 3, hma3 6): dn +2311 of 418"}},
		{[]string{"A", "B"}, [2]string{
			"max |dPnL| 69.53 pp > 5 pp on (hma 3, hma3 6): return -23.10% A, -92.63% B; trades 418 A, 2,729 B",
			"1 combo with |dn| > max(1% of A trades, 2); worst (hma 3, hma3 6): dn +2311 of 418"}},
	} {
		p := verdictCase(t, tr64, tr32, ret64, ret32, c.sides...)
		if len(p.Reasons) != 2 || p.Reasons[0] != c.want[0] || p.Reasons[1] != c.want[1] {
			t.Errorf("sides %q: reasons\n got %q\nwant %q", c.sides, p.Reasons, c.want)
		}
	}
}

// TestParityDPnLCollapseNamesItsCombo (issue 25, item 19): a collapse
// that only max |dPnL| fires, on a combo whose trades and positions agree
// (the FIL case: 355x312, -63.86% vs -69.26%, 1,376 trades in both), names
// the condition and the combo with both returns, and is explained.
func TestParityDPnLCollapseNamesItsCombo(t *testing.T) {
	p := verdictCase(t, [2]int{100, 1376}, [2]int{100, 1376}, [2]float64{0.01, -0.6386}, [2]float64{0.03, -0.6926})
	if p.Verdict != engine.VerdictCollapse || len(p.Reasons) != 1 {
		t.Fatalf("verdict %s, reasons %q: want a collapse with one reason", p.Verdict, p.Reasons)
	}
	// 100*(-0.6926 - -0.6386) = -5.40 pp on combo 1 (hma 3, hma3 6).
	want := "max |dPnL| 5.4 pp > 5 pp on (hma 3, hma3 6): return -63.86% fp64, -69.26% fp32; 1,376 trades in both"
	if p.Reasons[0] != want {
		t.Errorf("reason\n got %q\nwant %q", p.Reasons[0], want)
	}
	for _, s := range []string{"only max |dPnL| fired", "(hma 3, hma3 6)", "1,376 trades", "no flip",
		"compounded", "no non-borderline flip"} {
		if !strings.Contains(p.Explanation, s) {
			t.Errorf("explanation %q does not say %q", p.Explanation, s)
		}
	}
}

// TestParityDPnLCollapseThroughBorderlineFlips: the same collapse on a
// combo whose positions differ on some bars (every flip borderline) is
// explained by those bars, which it counts.
func TestParityDPnLCollapseThroughBorderlineFlips(t *testing.T) {
	f := newParityFixture(2000, 3)
	f.runs()
	// Three bars that fp64 decides by a margin of 5e-6 (under the 1e-5
	// tolerance) and fp32 the other way, h3 moving by 1e-5 relative
	// (under the 1e-4 indicator limit).
	for _, b := range []int{300, 301, 900} {
		side := math.Copysign(1, f.h364[b]-f.h64[b])
		f.h364[b] = f.h64[b] * (1 + side*5e-6)
		f.h332[b] = float32(f.h64[b] * (1 - side*5e-6))
	}
	f.ref.Results[0].TotalTrades, f.test.Results[0].TotalTrades = 120, 120
	f.ref.Results[0].TotalReturn, f.test.Results[0].TotalReturn = -0.5, -0.56
	p := f.compare(t, 0)
	if p.FlipCount != 3 || p.NonBorderlineFlips != 0 {
		t.Fatalf("flips %d (%d non-borderline), want 3 borderline", p.FlipCount, p.NonBorderlineFlips)
	}
	if len(p.Reasons) != 1 || !strings.HasPrefix(p.Reasons[0], "max |dPnL| 6 pp > 5 pp on (hma 2, hma3 6): return -50.00% fp64, -56.00% fp32; 120 trades in both") {
		t.Fatalf("reasons %q", p.Reasons)
	}
	for _, s := range []string{"only max |dPnL| fired", "(hma 2, hma3 6)", "3 of its bars", "every flip is borderline"} {
		if !strings.Contains(p.Explanation, s) {
			t.Errorf("explanation %q does not say %q", p.Explanation, s)
		}
	}
	if strings.Contains(p.Explanation, "no flip") {
		t.Errorf("explanation %q says there is no flip", p.Explanation)
	}
}

// TestParityReasonsNameTheirCombo: the indicator-error and the
// non-borderline-flip conditions name the series and the combo behind
// them.
func TestParityReasonsNameTheirCombo(t *testing.T) {
	f := newParityFixture(2000, 3)
	f.runs()
	f.h332[500] = float32(f.h364[500] * (1 + 3e-4))
	side := math.Copysign(1, f.h364[700]-f.h64[700])
	f.h364[700] = f.h64[700] * (1 + side*2e-5)
	f.h332[700] = float32(f.h64[700] * (1 - side*2e-5))
	p := f.compare(t, 0)
	if len(p.Reasons) != 2 {
		t.Fatalf("reasons %q, want the indicator error and the flip", p.Reasons)
	}
	if !strings.HasSuffix(p.Reasons[0], "(series h3 6 at bar 500: the combos with hma3 6)") {
		t.Errorf("indicator reason %q does not name its series and bar", p.Reasons[0])
	}
	if !strings.HasPrefix(p.Reasons[1], "1 non-borderline flips (margin >= 1e-05); worst (hma 2, hma3 6) at bar 700, margin 2") {
		t.Errorf("flip reason %q does not name its combo and bar", p.Reasons[1])
	}
}

// TestParitySummaryNamesEachFiguresCombo (issue 25, item 20): max |dPnL|
// and its relative maximum come from different combos (SPY: 1.09 pp from
// 100x120, 113.88% from 40x108); each figure names its own.
func TestParitySummaryNamesEachFiguresCombo(t *testing.T) {
	// combo 0 (hma 2): dn -1 of 10 (rel 10%), dPnL +2 pp on 1% (rel 2);
	// combo 1 (hma 3): dn +2 of 1,000 (rel 0.2%), dPnL -4 pp on 50% (rel 0.08).
	p := verdictCase(t, [2]int{10, 1000}, [2]int{9, 1002}, [2]float64{0.01, 0.5}, [2]float64{0.03, 0.46})
	w := p.Worst()
	if w.Dn.Combo != (engine.Combo{HMA: 3, HMA3: 6}) || w.RelDn.Combo != (engine.Combo{HMA: 2, HMA3: 6}) ||
		w.DPnL.Combo != (engine.Combo{HMA: 3, HMA3: 6}) || w.RelDPnL.Combo != (engine.Combo{HMA: 2, HMA3: 6}) {
		t.Errorf("worst combos %+v", w)
	}
	var b bytes.Buffer
	bw := text.NewErrWriter(&b)
	output.WriteParitySummary(bw, p, output.ParityLabels{Title: "Parity fp32 vs fp64", Ref: "fp64", Test: "fp32", Verdict: true})
	out := b.String()
	for _, s := range []string{
		"max |dn| 2 (hma 3, hma3 6); max relative |dn| 10% (hma 2, hma3 6)",
		"max |dPnL| 4 pp (hma 3, hma3 6); max relative 2.00e+00 (hma 2, hma3 6)",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("summary does not say %q:\n%s", s, out)
		}
	}
	// Nothing differs: no combo is named.
	p = verdictCase(t, [2]int{10, 10}, [2]int{10, 10}, [2]float64{0.1, 0.1}, [2]float64{0.1, 0.1})
	if d, r := p.MaxFigures(); strings.Contains(d+r, "hma") {
		t.Errorf("a report where nothing differs names a combo: %q, %q", d, r)
	}
}
