package kernels

import (
	"fmt"
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
	for f, v := range []int32{3, 2, 4, 3, 3, 1, 0, 0, 1, 5} {
		outI[f*2+0] = v
	}
	outF[8*2+0] = -0.02
	// The trade accumulators: trades +0.2, +0.1, -0.1 (WinSum 0.3, LossSum
	// -0.1, best 0.2, worst -0.1, mean 0.2/3, TM2 as Welford leaves it).
	for f, v := range []float32{0.3, -0.1, 0.2, -0.1, 0.2 / 3, 0.0466667} {
		outF[(9+f)*2+0] = v
	}
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
	// The trade metrics from the trade fields: profit factor 0.3/0.1,
	// average win 0.3/2 wins, average loss -0.1/1 loser, SQN sqrt(3) *
	// mean/sqrt(TM2/3), each ratio in float32; exposure and avg_trade_bars
	// from the bar counts: (4+3)/10 and (4+3)/3 trades.
	sd := float32(math.Sqrt(float64(float32(0.0466667) / 3)))
	if !m.HasTradeMetrics() || m.ProfitFactor != float64(float32(0.3)/float32(0.1)) || m.AvgWin != float64(float32(0.3)/2) ||
		m.AvgLoss != float64(float32(-0.1)) || m.BestTrade != float64(float32(0.2)) || m.WorstTrade != float64(float32(-0.1)) ||
		m.Expectancy != float64(float32(0.2/3)) || m.MaxDrawdownBars != 5 || m.Exposure != 0.7 || m.AvgTradeBars != 7.0/3 ||
		m.SQN != float64(float32(math.Sqrt(3)*float64(float32(0.2/3)/sd))) {
		t.Errorf("finish of the trade fields: %+v", m)
	}
	// A kernel that writes Part 1's fields only (CUDA's bar-parallel
	// sweep_seg): the trade metrics are NaN, the trade fields unread (their
	// poison is not "unwritten").
	o.NoTrades = true
	for f := 9; f < NF; f++ {
		outF[f*2+0] = float32(math.NaN())
	}
	outI[8*2+0], outI[9*2+0] = -1, -1
	if _, err := o.Finish(11, engine.Params{Fee: engine.DefaultFee, BarsPerYear: 10}, out[:1], 1); err == nil {
		t.Errorf("NoTrades: combo 1 is still unwritten, want an error")
	}
	if m := out[0]; m.HasTradeMetrics() || !math.IsNaN(m.ProfitFactor) || !math.IsNaN(m.SQN) || !math.IsNaN(m.MaxDrawdownBars) ||
		m.Exposure != 0.7 || m.TotalTrades != 3 {
		t.Errorf("finish without the trade fields: %+v", m)
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

// TestFinishTradeMetrics: SPEC Part 2's trade metrics from trades folded in
// by AddTrade, on returns that are binary fractions (every sum, mean and
// Welford step exact), in both precisions:
//
//   - R = 0.5, -0.25, 0.25, 0 (the last neither a win nor a loss): wins sum
//     0.75, losses -0.25: profit_factor 3; expectancy 0.5/4 = 0.125;
//     avg_win 0.75/2 = 0.375; avg_loss -0.25/1 (negative; the R = 0 trade
//     is not a loser); best 0.5, worst -0.25; deviations from the mean
//     0.375, -0.375, 0.125, -0.125: TM2 = 0.3125, population std
//     sqrt(0.078125), sqn = sqrt(4) * 0.125 / sqrt(0.078125) = sqrt(0.8);
//     6 + 2 bars held over n = 11 bars: avg_trade_bars 8/4 = 2, exposure
//     8/10; max_drawdown_bars is the loop's count, 3.
//   - R = 0.5, 0.25: no loss: profit_factor +Inf, avg_loss 0; sqn =
//     sqrt(2) * 0.375 / 0.125 = 3 sqrt(2).
//   - R = 0, 0: neither: profit_factor 0, avg_win = avg_loss = 0, std 0: sqn 0.
//   - R = 0.5 alone: sqn 0 (N < 2).
//   - no trade: every trade metric 0 (profit_factor 0: neither).
func TestFinishTradeMetrics(t *testing.T) {
	testFinishTrades[float64](t)
	testFinishTrades[float32](t)
}

func testFinishTrades[F engine.Float](t *testing.T) {
	p := engine.Params{Fee: engine.DefaultFee, BarsPerYear: 10}
	for _, c := range []struct {
		name                               string
		R                                  []float64
		long, short, ddBars                int
		pf, exp, win, loss, best, worst, q float64
	}{
		{"mixed", []float64{0.5, -0.25, 0.25, 0}, 6, 2, 3, 3, 0.125, 0.375, -0.25, 0.5, -0.25, math.Sqrt(0.8)},
		{"no loss", []float64{0.5, 0.25}, 3, 0, 0, math.Inf(1), 0.375, 0.375, 0, 0.5, 0.25, 3 * math.Sqrt2},
		{"neither", []float64{0, 0}, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0},
		{"one trade", []float64{0.5}, 1, 0, 0, math.Inf(1), 0.5, 0.5, 0, 0.5, 0.5, 0},
		{"no trade", nil, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0},
	} {
		a := Accumulators[F]{E: 1, MinRatio: 1, Long: c.long, Short: c.short, Flat: 10 - c.long - c.short, CVaRCount: 1, DDBars: c.ddBars}
		for k, R := range c.R {
			a.Trades++
			if R > 0 {
				a.Wins++
			}
			a.AddTrade(F(R), k+1)
		}
		m := Finish(a, 11, p)
		label := fmt.Sprintf("%T %s", F(0), c.name)
		tol := 1e-15
		if _, f32 := any(F(0)).(float32); f32 {
			tol = 1e-6
		}
		near := func(g, w float64) bool { return g == w || math.Abs(g-w) <= tol*math.Abs(w) }
		held := float64(c.long + c.short)
		wantBars := 0.0
		if len(c.R) > 0 {
			wantBars = held / float64(len(c.R))
		}
		if m.ProfitFactor != c.pf || m.Expectancy != c.exp || m.AvgWin != c.win || m.AvgLoss != c.loss ||
			m.BestTrade != c.best || m.WorstTrade != c.worst || !near(m.SQN, c.q) || m.MaxDrawdownBars != float64(c.ddBars) ||
			m.AvgTradeBars != wantBars || m.Exposure != held/10 || !m.HasTradeMetrics() {
			t.Errorf("%s: profit_factor %v expectancy %v avg_win %v avg_loss %v best %v worst %v sqn %v dd bars %v avg bars %v exposure %v;\n"+
				"want %v %v %v %v %v %v %v %v %v %v", label, m.ProfitFactor, m.Expectancy, m.AvgWin, m.AvgLoss, m.BestTrade, m.WorstTrade,
				m.SQN, m.MaxDrawdownBars, m.AvgTradeBars, m.Exposure, c.pf, c.exp, c.win, c.loss, c.best, c.worst, c.q, c.ddBars, wantBars, held/10)
		}
		if c.name == "mixed" && (a.TM2 != 0.3125 || a.TMean != 0.125 || a.Losers != 1) {
			t.Errorf("%s: Welford TMean %v TM2 %v, losers %d; want 0.125, 0.3125, 1", label, a.TMean, a.TM2, a.Losers)
		}
	}
}
