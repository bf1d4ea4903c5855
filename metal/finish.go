package metal

import (
	"fmt"
	"math"

	"sweepbench/engine"
)

// rawCombo is what sweep_f32 writes for one combo: the float32
// accumulators of engine.Backtest's loop and its counts (the fields of
// cuda's OF_* and OI_*, in that order).
type rawCombo struct {
	E, MinRatio, Sum, SSD, Neg2, Gains, Losses, VaR, CVaRSum   float32
	Trades, Wins, Long, Short, Flat, CVaRCount, Refine, Status int32
}

// rawAt reads combo j of a dispatch of count combos from the kernel's
// structure-of-arrays outputs: outF[f*count + j], outI[f*count + j].
func rawAt(outF []float32, outI []int32, count, j int) rawCombo {
	f := func(k int) float32 { return outF[k*count+j] }
	i := func(k int) int32 { return outI[k*count+j] }
	return rawCombo{
		E: f(0), MinRatio: f(1), Sum: f(2), SSD: f(3), Neg2: f(4), Gains: f(5), Losses: f(6), VaR: f(7), CVaRSum: f(8),
		Trades: i(0), Wins: i(1), Long: i(2), Short: i(3), Flat: i(4), CVaRCount: i(5), Refine: i(6), Status: i(7),
	}
}

// written reports whether the kernel wrote the combo: the int outputs are
// filled with 0xFF bytes (-1) before each dispatch and every count is >= 0.
func (r *rawCombo) written() bool {
	return r.Trades >= 0 && r.Wins >= 0 && r.Long >= 0 && r.Short >= 0 && r.Flat >= 0 &&
		r.CVaRCount >= 0 && r.Refine >= 0 && r.Status >= 0
}

// finishAll checks and finishes the count combos of one dispatch into out.
func finishAll(outF []float32, outI []int32, count, first, n int, p engine.Params, out []engine.Metrics) error {
	for j := 0; j < count; j++ {
		r := rawAt(outF, outI, count, j)
		if !r.written() {
			return fmt.Errorf("kernel %s left combo %d unwritten (dispatch of combos %d..%d)", fnSweep, first+j, first, first+count-1)
		}
		out[j] = finish(r, n, p)
	}
	return nil
}

// finish computes one combo's Metrics over n bars from its raw float32
// accumulators: the closing block of engine.Backtest statement for
// statement (SPEC "Metrics per combo"; cuda/finish.go is the same code for
// both float types): sqrt, pow and the annualising factor in float64 from
// the float32 accumulators, rounded back to float32.
func finish(r rawCombo, n int, p engine.Params) engine.Metrics {
	type F = float32
	var m engine.Metrics
	if n < 2 {
		return m
	}
	mf := F(n - 1)
	mean := r.Sum / mf
	std := F(math.Sqrt(float64(r.SSD / mf)))
	down := F(math.Sqrt(float64(r.Neg2 / mf)))
	ann := math.Sqrt(p.BarsPerYear)

	m.TotalReturn = float64(r.E - 1)
	m.CAGR = float64(F(math.Pow(float64(r.E), p.BarsPerYear/float64(n-1)) - 1))
	if std > 0 {
		m.Sharpe = float64(F(float64(mean/std) * ann))
	}
	switch {
	case down > 0:
		m.Sortino = float64(F(float64(mean/down) * ann))
	case mean > 0:
		m.Sortino = math.Inf(1)
	}
	m.MaxDrawdown = float64(1 - r.MinRatio)
	if m.MaxDrawdown > 0 {
		m.Calmar = float64(F(m.CAGR / m.MaxDrawdown))
	}
	m.TotalTrades = int(r.Trades)
	if r.Trades > 0 {
		m.WinRate = float64(F(r.Wins) / F(r.Trades))
	}
	switch {
	case r.Losses > 0:
		m.Omega = float64(r.Gains / r.Losses)
	case r.Gains > 0:
		m.Omega = math.Inf(1)
	}
	m.LongBars, m.ShortBars, m.FlatBars = int(r.Long), int(r.Short), int(r.Flat)
	m.VaR95 = float64(r.VaR)
	m.CVaR95 = float64(r.CVaRSum / F(r.CVaRCount))
	return m
}
