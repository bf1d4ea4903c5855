package engine

import "context"

// PBODevice is implemented by backends that run the two passes of PBO
// (engine/robust's CSCV, SPEC "Robustness") for the Sharpe key on their
// device, from the per-block statistics they computed. It lives here, not
// in engine/robust, so that a GPU backend can offer it without importing
// the statistics; engine/robust uses it when the study's backend is one
// (robust.AnalyseStudy).
//
// sum (sign-adjusted: negated when the objective is minimised) and sumSq
// are block-major, [b*combos + c]; bars the per-block bar counts; sets the
// in-sample sets as bit masks (bit b for block b, block 0 the earliest;
// robust.PBOResult.ISBlocks' order), comp[k] the index of set k's
// complement. It returns, per set k, sel[k] the best combo with set k in
// sample (sharpeFrac keys compared by cross-multiplication, ties to the
// lowest index), and less[k], equal[k] the combos whose key over set k is
// below and equal to that of sel[comp[k]], the combo chosen in the split
// whose out-of-sample set is k.
type PBODevice interface {
	PBOSharpe(ctx context.Context, sum, sumSq []float64, combos, blocks int, bars []float64, sets []uint64, comp []int32) (sel, less, equal []int32, err error)
}
