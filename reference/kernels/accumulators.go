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
//
// The trade accumulators (SPEC Part 2 "New metrics") are in F over the
// trades' returns R in the order they close: WinSum and LossSum the sums
// of R > 0 and of R < 0, Best and Worst the extremes, TMean and TM2
// Welford's running mean and sum of squared deviations (TMean +=
// (R-TMean)/k; TM2 += (R-TMean_old)*(R-TMean_new)), Losers the count of
// R < 0, DDBars the longest run of bars below an earlier equity peak.
// NoTrades marks accumulators without them (a GPU lane of today): Finish
// then leaves the trade metrics NaN (engine.Metrics.NoTradeMetrics).
type Accumulators[F engine.Float] struct {
	E, MinRatio, Sum, SSD, Neg2, Gains, Losses, VaR, CVaRSum F
	Trades, Wins, Long, Short, Flat, CVaRCount               int

	WinSum, LossSum, Best, Worst, TMean, TM2 F
	Losers, DDBars                           int
	NoTrades                                 bool
}

// AddTrade folds one closed trade's return R into a's trade accumulators
// (Trades and Wins are counted by the loop itself).
func (a *Accumulators[F]) AddTrade(R F, k int) {
	if R > 0 {
		a.WinSum += R
	} else if R < 0 {
		a.LossSum += R
		a.Losers++
	}
	if k == 1 {
		a.Best, a.Worst = R, R
	} else {
		a.Best, a.Worst = max(a.Best, R), min(a.Worst, R)
	}
	d := R - a.TMean
	a.TMean += d / F(k)
	a.TM2 += F(d * (R - a.TMean))
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
	// Sharpe and Sortino over rs - rf per bar (SPEC Part 2 "New metrics"):
	// the mean less rf (the std does not move); Neg2 is already over
	// min(rs - rf, 0). With rf = 0 the subtraction is exact.
	excess := mean - F(p.RiskFreePerBar())

	m.TotalReturn = float64(a.E - 1)
	m.CAGR = float64(F(math.Pow(float64(a.E), p.BarsPerYear/float64(n-1)) - 1))
	if std > 0 {
		m.Sharpe = float64(F(float64(excess/std) * ann))
	}
	switch {
	case down > 0:
		m.Sortino = float64(F(float64(excess/down) * ann))
	case excess > 0:
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
	if a.NoTrades {
		m.NoTradeMetrics(n)
		return m
	}
	finishTrades(&m, a, n)
	return m
}

// finishTrades sets m's Part 2 trade metrics from a (SPEC Part 2 "New
// metrics"): the ratios in F, the square roots in float64 rounded to F.
func finishTrades[F engine.Float](m *engine.Metrics, a Accumulators[F], n int) {
	m.AvgTradeBars, m.Exposure = engine.BarShares(a.Long, a.Short, a.Trades, n)
	m.MaxDrawdownBars = float64(a.DDBars)
	switch {
	case a.LossSum < 0:
		m.ProfitFactor = float64(a.WinSum / -a.LossSum)
	case a.WinSum > 0:
		m.ProfitFactor = math.Inf(1)
	}
	if a.Trades == 0 {
		return
	}
	m.Expectancy = float64(a.TMean)
	m.BestTrade, m.WorstTrade = float64(a.Best), float64(a.Worst)
	if a.Wins > 0 {
		m.AvgWin = float64(a.WinSum / F(a.Wins))
	}
	if a.Losers > 0 {
		m.AvgLoss = float64(a.LossSum / F(a.Losers))
	}
	if a.Trades >= 2 {
		if sd := F(math.Sqrt(float64(a.TM2 / F(a.Trades)))); sd > 0 {
			m.SQN = float64(F(math.Sqrt(float64(a.Trades)) * float64(a.TMean/sd)))
		}
	}
}
