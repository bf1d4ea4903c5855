package kernels

import (
	"context"
	"fmt"

	"sweepbench/engine"
)

// Raw is what a sweep kernel writes for one combo: the F accumulators of
// reference.Backtest's loop and its counts, in the order of sweep.cu's OF_*
// and OI_* fields (sweep.metal writes the same): Part 1's first (NFBase,
// NIBase), then the trade accumulators of SPEC Part 2 "New metrics"
// (kernels.Accumulators: WinSum..TM2, Losers, DDBars). The ratios are
// finished on the host (Finish), in float64, exactly as reference.Backtest
// finishes them, so the GPUs and the CPU share one definition of each
// metric. NoTrades marks a combo of a kernel that writes Part 1's fields
// only (its trade metrics are NaN).
type Raw[F engine.Float] struct {
	E, MinRatio, Sum, SSD, Neg2, Gains, Losses, VaR, CVaRSum   F
	Trades, Wins, Long, Short, Flat, CVaRCount, Refine, Status int32

	WinSum, LossSum, Best, Worst, TMean, TM2 F
	Losers, DDBars                           int32
	NoTrades                                 bool
}

// Written reports whether the kernel wrote the combo: the int outputs are
// filled with 0xFF bytes (int32 -1) before each launch and every count the
// kernel writes is >= 0.
func (r *Raw[F]) Written() bool {
	return r.Trades >= 0 && r.Wins >= 0 && r.Long >= 0 && r.Short >= 0 && r.Flat >= 0 &&
		r.CVaRCount >= 0 && r.Refine >= 0 && r.Status >= 0 && (r.NoTrades || r.Losers >= 0 && r.DDBars >= 0)
}

// Finish computes one combo's Metrics over n bars from its raw accumulators
// through Finish (SPEC "Metrics per combo"), as reference.Backtest does.
func (r *Raw[F]) Finish(n int, p engine.Params) engine.Metrics {
	return Finish(Accumulators[F]{E: r.E, MinRatio: r.MinRatio, Sum: r.Sum, SSD: r.SSD, Neg2: r.Neg2,
		Gains: r.Gains, Losses: r.Losses, VaR: r.VaR, CVaRSum: r.CVaRSum, Trades: int(r.Trades), Wins: int(r.Wins),
		Long: int(r.Long), Short: int(r.Short), Flat: int(r.Flat), CVaRCount: int(r.CVaRCount),
		WinSum: r.WinSum, LossSum: r.LossSum, Best: r.Best, Worst: r.Worst, TMean: r.TMean, TM2: r.TM2,
		Losers: int(r.Losers), DDBars: int(r.DDBars), NoTrades: r.NoTrades}, n, p)
}

// Outputs are the raw outputs of one launch of Count combos from First, as
// the kernels lay them out, structure of arrays: float field k of combo j
// at F[k*Count+j] (NF fields), int field k at I[k*Count+j] (NI fields).
// Kernel names the kernel for messages. NoTrades: the kernel writes the
// first NFBase and NIBase fields only (Raw.NoTrades).
type Outputs[F engine.Float] struct {
	F            []F
	I            []int32
	Count, First int
	Kernel       string
	NoTrades     bool
}

// At reads combo j (0 <= j < Count) of the launch.
func (o *Outputs[F]) At(j int) Raw[F] {
	f := func(k int) F { return o.F[k*o.Count+j] }
	i := func(k int) int32 { return o.I[k*o.Count+j] }
	r := Raw[F]{
		E: f(0), MinRatio: f(1), Sum: f(2), SSD: f(3), Neg2: f(4), Gains: f(5), Losses: f(6), VaR: f(7), CVaRSum: f(8),
		Trades: i(0), Wins: i(1), Long: i(2), Short: i(3), Flat: i(4), CVaRCount: i(5), Refine: i(6), Status: i(7),
		NoTrades: o.NoTrades,
	}
	if !o.NoTrades {
		r.WinSum, r.LossSum, r.Best, r.Worst, r.TMean, r.TM2 = f(9), f(10), f(11), f(12), f(13), f(14)
		r.Losers, r.DDBars = i(8), i(9)
	}
	return r
}

// Finish checks and finishes every combo of the launch over n bars into
// out (len Count), in blocks spread over at most workers goroutines. It
// returns how many combos needed VaR refinement passes, or an error naming
// the first combo (in its block) the kernel left unwritten.
func (o *Outputs[F]) Finish(n int, p engine.Params, out []engine.Metrics, workers int) (refined int, err error) {
	const block = 1024
	blocks := (o.Count + block - 1) / block
	workers = max(1, min(workers, blocks))
	errs := make([]error, blocks)
	counts := make([]int, workers)
	_ = engine.Parallel(context.Background(), blocks, workers, func(w, b int) { // no ctx: nothing to stop
		for j := b * block; j < min((b+1)*block, o.Count); j++ {
			r := o.At(j)
			if !r.Written() {
				errs[b] = fmt.Errorf("kernel %s left combo %d unwritten (launch of combos %d..%d)", o.Kernel, o.First+j, o.First, o.First+o.Count-1)
				return
			}
			if r.Refine > 0 {
				counts[w]++
			}
			out[j] = r.Finish(n, p)
		}
	})
	for _, e := range errs {
		if e != nil {
			return 0, e
		}
	}
	for _, c := range counts {
		refined += c
	}
	return refined, nil
}
