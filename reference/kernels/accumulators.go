package kernels

import (
	"math"

	"sweepbench/engine"
)

// Accumulators are what a backtest loop over n bars leaves for one combo,
// in F: the final equity, the smallest E/peak ratio, the sums over rs
// (sum, squared deviations from the mean, min(rs,0)^2, gains, losses), the
// VaR element and the sum and count of rs <= VaR, and the counts. The CPU
// loop (reference.Backtest) and the GPU kernels (Raw.Finish) both end
// here, so every backend finishes the metrics with one definition.
type Accumulators[F engine.Float] struct {
	E, MinRatio, Sum, SSD, Neg2, Gains, Losses, VaR, CVaRSum F
	Trades, Wins, Long, Short, Flat, CVaRCount               int
}

// Finish turns a combo's accumulators over n bars into its Metrics (SPEC
// "Metrics per combo"): the ratios in F, sqrt, pow and the annualising
// factor evaluated in float64 from the F values and rounded back to F, as
// a GPU's correctly rounded sqrtf would give.
func Finish[F engine.Float](a Accumulators[F], n int, p engine.Params) engine.Metrics {
	var m engine.Metrics
	if n < 2 {
		return m
	}
	mf := F(n - 1)
	mean := a.Sum / mf
	std := F(math.Sqrt(float64(a.SSD / mf)))
	down := F(math.Sqrt(float64(a.Neg2 / mf)))
	ann := math.Sqrt(p.BarsPerYear)

	m.TotalReturn = float64(a.E - 1)
	m.CAGR = float64(F(math.Pow(float64(a.E), p.BarsPerYear/float64(n-1)) - 1))
	if std > 0 {
		m.Sharpe = float64(F(float64(mean/std) * ann))
	}
	switch {
	case down > 0:
		m.Sortino = float64(F(float64(mean/down) * ann))
	case mean > 0:
		m.Sortino = math.Inf(1)
	}
	m.MaxDrawdown = float64(1 - a.MinRatio)
	if m.MaxDrawdown > 0 {
		m.Calmar = float64(F(m.CAGR / m.MaxDrawdown))
	}
	m.TotalTrades = a.Trades
	if a.Trades > 0 {
		m.WinRate = float64(F(a.Wins) / F(a.Trades))
	}
	switch {
	case a.Losses > 0:
		m.Omega = float64(a.Gains / a.Losses)
	case a.Gains > 0:
		m.Omega = math.Inf(1)
	}
	m.LongBars, m.ShortBars, m.FlatBars = a.Long, a.Short, a.Flat
	m.VaR95 = float64(a.VaR)
	m.CVaR95 = float64(a.CVaRSum / F(a.CVaRCount))
	return m
}
