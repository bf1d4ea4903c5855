package robust

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"sweepbench/engine"
)

// EquityPoint is one point of the walk-forward's stitched out-of-sample
// equity curve: Equity is the growth of 1 invested at the start of the
// first out-of-sample block, after the close of bar Bar (0-based, the
// study's bars; Time is that bar's open time, UTC).
type EquityPoint struct {
	Bar    int       `json:"bar"`
	Time   time.Time `json:"time"`
	Equity float64   `json:"equity"`
}

// MaxEquityPoints is the most points of the stitched curve a Summary
// carries (Downsample): enough for any terminal or plot, a few kB of JSON.
const MaxEquityPoints = 512

// minNormal is the smallest normal float64: an equity below it has lost
// the precision its block's growth ratio needs.
const minNormal = 0x1p-1022

// StitchedEquity is the stitched out-of-sample equity curve of a
// walk-forward, bar by bar: for each fold, in time order, its chosen combo's
// equity over its out-of-sample block, as that combo traded it in its
// continuous run over the whole history (warm-up, positions and fees carry
// across block edges: docs/SPEC.md "Blocks"), each block starting where the
// one before it ended. Point 0 is the bar before the first out-of-sample
// block, at 1; then one point per bar of each fold's block.
//
// The combos' runs are recomputed on the CPU through engine.InspectIndex
// (the registered Arithmetic's trace of the reference sweep's own backtest,
// bit for bit its equity E), once per distinct combo chosen, in precision
// prec and formulation form (those of the run the block statistics came
// from: the block's growth is then E[hi]/E[lo] of the run whose block
// statistics chose it); a strategy family's combo (g.Strategy) by its
// own Trace, the path its reference kernel runs, bit for bit too. bars and p are the study's; bounds its S+1 block
// edges over the n-1 bar returns (engine.BlockBounds); folds a WFResult's
// (their combos grid indexes of g). The curve's last value is the product
// of the folds' out-of-sample growths, 1 + WFResult.TotalReturn up to the
// rounding of two orders of one product (relative ~1e-14).
//
// Errors: an *InputError for bars, bounds or folds that do not fit each
// other (ErrLength, ErrBlocks) or a combo whose equity is 0 (or below the
// smallest normal number) at the start of its block, where the ratio of
// the block's growth means nothing (ErrValue); InspectCombo's (ctx's,
// engine.ErrNoArithmetic).
func StitchedEquity(ctx context.Context, bars *engine.Bars, p engine.Params, prec engine.Precision, form engine.Formulation,
	g engine.Grid, bounds []int, folds []Fold) ([]EquityPoint, error) {
	if len(folds) == 0 {
		return nil, inputErr(ErrEmpty, "folds", "no fold: nothing to stitch")
	}
	n := bars.Len()
	s := len(bounds) - 1
	if s < 1 || bounds[s] != n-1 || len(bars.Time) != n {
		return nil, inputErr(ErrLength, "bars", "%d bars for %d block edges ending at %d: want the study's bars (bar returns = last edge)",
			n, len(bounds), bounds[max(s, 0)])
	}
	// The distinct chosen combos, in order of first use, traced side by
	// side: per combo its equity E.
	first := map[int]int{} // combo -> the first fold that chose it
	var combos []int
	for i, f := range folds {
		if f.OOSBlock < 0 || f.OOSBlock >= s || (i > 0 && f.OOSBlock <= folds[i-1].OOSBlock) {
			return nil, inputErr(ErrBlocks, "folds", "fold %d: out-of-sample block %d of %d, after block %d", i+1, f.OOSBlock, s, folds[max(i-1, 0)].OOSBlock)
		}
		if f.Combo < 0 || f.Combo >= g.Len() {
			return nil, inputErr(ErrLength, "folds", "fold %d: combo %d of a grid of %d", i+1, f.Combo, g.Len())
		}
		if _, ok := first[f.Combo]; !ok {
			first[f.Combo] = i
			combos = append(combos, f.Combo)
		}
	}
	curves := make([][]float64, len(combos))
	errs := make([]error, len(combos))
	if err := engine.Parallel(ctx, len(combos), min(runtime.GOMAXPROCS(0), len(combos)), func(_, j int) {
		d, err := engine.InspectIndex(ctx, bars, g, combos[j], p, prec, form)
		if err != nil {
			errs[j] = fmt.Errorf("stitched equity, fold %d: %w", first[combos[j]]+1, err)
			return
		}
		curves[j] = d.Equity
	}); err != nil {
		return nil, err
	}
	equity := map[int][]float64{} // per distinct chosen combo, its E
	for j, c := range combos {
		if errs[j] != nil {
			return nil, errs[j]
		}
		equity[c] = curves[j]
	}
	out := []EquityPoint{}
	level := 1.0
	for i, f := range folds {
		e := equity[f.Combo]
		// Block b holds the returns rs[k] with bounds[b] <= k < bounds[b+1]
		// (engine.BlockStats), rs[k] = E[k+1]/E[k] - 1: its growth after bar
		// j is E[j]/E[lo].
		lo, hi := bounds[f.OOSBlock], bounds[f.OOSBlock+1]
		if !(e[lo] >= minNormal) { // 0, subnormal or NaN
			return nil, inputErr(ErrValue, "equity", "fold %d: combo %s has equity %g at the start of block %d: its growth over the block cannot be read from its equity",
				i+1, g.Label(f.Combo), e[lo], f.OOSBlock)
		}
		if len(out) == 0 {
			out = append(out, EquityPoint{Bar: lo, Time: time.Unix(0, bars.Time[lo]).UTC(), Equity: 1})
		}
		for j := lo + 1; j <= hi; j++ {
			out = append(out, EquityPoint{Bar: j, Time: time.Unix(0, bars.Time[j]).UTC(), Equity: level * (e[j] / e[lo])})
		}
		level = out[len(out)-1].Equity
	}
	return out, nil
}

// Downsample keeps at most limit points of a curve, evenly spaced by index,
// the first and the last always among them (so its end value stays exact);
// the curve itself when it is short enough. A limit below 2 is taken as 2.
func Downsample(pts []EquityPoint, limit int) []EquityPoint {
	limit = max(limit, 2)
	if len(pts) <= limit {
		return pts
	}
	out := make([]EquityPoint, limit)
	last := len(pts) - 1
	for k := range out {
		out[k] = pts[int(math.Round(float64(k)*float64(last)/float64(limit-1)))]
	}
	return out
}
