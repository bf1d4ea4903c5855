package cuda

import (
	"sweepbench/engine"
)

// rawCombo is what the sweep kernel returns for one combo: the F
// accumulators of engine.Backtest's loop and its counts. The ratios are
// finished on the host (finish), in float64, exactly as engine.Backtest
// finishes them, so the GPU and CPU share one definition of each metric.
type rawCombo[F engine.Float] struct {
	E, MinRatio, Sum, SSD, Neg2, Gains, Losses, VaR, CVaRSum   F
	Trades, Wins, Long, Short, Flat, CVaRCount, Refine, Status int32
}

// rawAt reads combo j of a launch of count combos from the kernel's
// structure-of-arrays outputs (sweep.cu OF_* and OI_* fields).
func rawAt[F engine.Float](outF []F, outI []int32, count, j int) rawCombo[F] {
	f := func(k int) F { return outF[k*count+j] }
	i := func(k int) int32 { return outI[k*count+j] }
	return rawCombo[F]{
		E: f(0), MinRatio: f(1), Sum: f(2), SSD: f(3), Neg2: f(4), Gains: f(5), Losses: f(6), VaR: f(7), CVaRSum: f(8),
		Trades: i(0), Wins: i(1), Long: i(2), Short: i(3), Flat: i(4), CVaRCount: i(5), Refine: i(6), Status: i(7),
	}
}

// written reports whether the kernel wrote combo j: the outputs are poisoned
// with 0xFF bytes (int -1) before each launch and every count is >= 0.
func (r *rawCombo[F]) written() bool {
	return r.Trades >= 0 && r.Wins >= 0 && r.Long >= 0 && r.Short >= 0 && r.Flat >= 0 && r.CVaRCount >= 0 && r.Refine >= 0 && r.Status >= 0
}

// finish computes the Metrics of one combo over n bars from its raw
// accumulators through engine.Finish, the one definition every backend
// shares (SPEC "Metrics per combo").
func finish[F engine.Float](r rawCombo[F], n int, p engine.Params) engine.Metrics {
	return engine.Finish(engine.Accumulators[F]{E: r.E, MinRatio: r.MinRatio, Sum: r.Sum, SSD: r.SSD, Neg2: r.Neg2,
		Gains: r.Gains, Losses: r.Losses, VaR: r.VaR, CVaRSum: r.CVaRSum, Trades: int(r.Trades), Wins: int(r.Wins),
		Long: int(r.Long), Short: int(r.Short), Flat: int(r.Flat), CVaRCount: int(r.CVaRCount)}, n, p)
}
