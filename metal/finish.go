package metal

import (
	"fmt"

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
// accumulators through engine.Finish, the definition every backend shares
// (SPEC "Metrics per combo").
func finish(r rawCombo, n int, p engine.Params) engine.Metrics {
	return engine.Finish(engine.Accumulators[float32]{E: r.E, MinRatio: r.MinRatio, Sum: r.Sum, SSD: r.SSD, Neg2: r.Neg2,
		Gains: r.Gains, Losses: r.Losses, VaR: r.VaR, CVaRSum: r.CVaRSum, Trades: int(r.Trades), Wins: int(r.Wins),
		Long: int(r.Long), Short: int(r.Short), Flat: int(r.Flat), CVaRCount: int(r.CVaRCount)}, n, p)
}
