package kernels

import (
	"math"
	"strings"
	"testing"

	"sweepbench/engine"
)

// TestFinishWritten: Outputs reads the structure-of-arrays layout, a combo
// whose int outputs still hold the 0xFF poison is reported by its grid
// index, and a written one is finished by hand-checkable arithmetic.
func TestFinishWritten(t *testing.T) {
	o := Outputs[float32]{F: make([]float32, 2*NF), I: make([]int32, 2*NI), Count: 2, First: 100, Kernel: "sweep_f32"}
	outF, outI := o.F, o.I
	for i := range outI {
		outI[i] = -1
	}
	// combo 0 written (E = 1.5 over 11 bars, 3 trades, 2 wins), combo 1 not.
	outF[0*2+0], outF[1*2+0] = 1.5, 0.9
	for f, v := range []int32{3, 2, 4, 3, 3, 1, 0, 0} {
		outI[f*2+0] = v
	}
	outF[8*2+0] = -0.02
	out := make([]engine.Metrics, 2)
	_, err := o.Finish(11, engine.Params{Fee: engine.DefaultFee, BarsPerYear: 10}, out, 1)
	if err == nil || !strings.Contains(err.Error(), "kernel sweep_f32 left combo 101 unwritten (launch of combos 100..101)") {
		t.Errorf("unwritten combo: %v", err)
	}
	m := out[0]
	// 1.5^(10/10) - 1 = 0.5; win rate 2/3 in float32; drawdown 1 - 0.9 in float32.
	if m.TotalReturn != 0.5 || m.CAGR != 0.5 || m.TotalTrades != 3 || m.WinRate != float64(float32(2)/float32(3)) ||
		m.MaxDrawdown != float64(1-float32(0.9)) || m.CVaR95 != float64(float32(-0.02)) || m.FlatBars != 3 {
		t.Errorf("finish: %+v", m)
	}
	// A GPU lane keeps Part 1's accumulators only: the trade metrics are
	// NaN (issue 29 computes them), while exposure and avg_trade_bars follow
	// from the bar counts: (4+3)/10 and (4+3)/3 trades.
	if m.HasTradeMetrics() || !math.IsNaN(m.ProfitFactor) || !math.IsNaN(m.SQN) || !math.IsNaN(m.MaxDrawdownBars) ||
		!math.IsNaN(m.AvgLoss) || m.Exposure != 0.7 || m.AvgTradeBars != 7.0/3 {
		t.Errorf("finish of a GPU lane's trade metrics: %+v", m)
	}
}

// TestFinishRefinedAndParallel: combos spread over several blocks and
// workers are each finished into their own slot (the same Metrics as one
// worker gives) and the refinement counts add up.
func TestFinishRefinedAndParallel(t *testing.T) {
	const count = 2500 // three blocks of 1024
	o := Outputs[float64]{F: make([]float64, count*NF), I: make([]int32, count*NI), Count: count, Kernel: "sweep_f64"}
	wantRefined := 0
	for j := 0; j < count; j++ {
		o.F[0*count+j] = 1 + float64(j)/4096 // E: 1 + j/4096, so E-1 is exact
		o.F[1*count+j] = 0.5                 // MinRatio
		o.I[0*count+j] = int32(j % 7)        // Trades
		o.I[4*count+j] = 10                  // Flat
		o.I[5*count+j] = 1                   // CVaRCount
		if j%3 == 0 {
			o.I[6*count+j] = 2 // Refine
			wantRefined++
		}
	}
	p := engine.Params{Fee: engine.DefaultFee, BarsPerYear: 10}
	one, many := make([]engine.Metrics, count), make([]engine.Metrics, count)
	r1, err := o.Finish(11, p, one, 1)
	if err != nil {
		t.Fatal(err)
	}
	r4, err := o.Finish(11, p, many, 4)
	if err != nil {
		t.Fatal(err)
	}
	if r1 != wantRefined || r4 != wantRefined {
		t.Errorf("refined %d (1 worker), %d (4 workers), want %d", r1, r4, wantRefined)
	}
	for j := range one {
		if !sameValues(one[j], many[j]) {
			t.Fatalf("combo %d: %+v with 4 workers, %+v with one", j, many[j], one[j])
		}
		if want := float64(j) / 4096; one[j].TotalReturn != want || one[j].TotalTrades != j%7 {
			t.Fatalf("combo %d: total return %v, trades %d: want %v, %d (its own slot)", j, one[j].TotalReturn, one[j].TotalTrades, want, j%7)
		}
	}
}

// sameValues reports whether a and b hold the same metrics, bit for bit,
// a NaN (a trade metric a GPU lane leaves uncomputed) equal to a NaN.
func sameValues(a, b engine.Metrics) bool {
	var x, y [engine.NumMetrics]float64
	a.Values(&x)
	b.Values(&y)
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) && !(math.IsNaN(x[i]) && math.IsNaN(y[i])) {
			return false
		}
	}
	return true
}
