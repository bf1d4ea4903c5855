package strategy

import (
	"fmt"
	"math"
)

// Cross runs SPEC Part 2's `cross` state machine (docs/SPEC.md
// "Families", `cross`) over the already computed series fast and slow
// (len n, in F, NaN before their first valid bars) from bar first, which
// the caller gives as max(F_fast, F_slow). State after bar i >= first: +1
// if fast[i] > slow[i], -1 if fast[i] < slow[i], unchanged if equal (and
// if either is NaN: no comparison holds); 0 before first. pos (len n)
// receives the state before the mode.
//
// margin (nil, or len n; SPEC computes it on the fp64 run) receives
// |fast[i] - slow[i]| / close[i], a fraction of the price, computed in
// float64 from the F values; NaN before first. close has len n.
//
// Errors: a plain error when a slice is not of fast's length (margin may
// be nil) or first < 0. first >= n leaves every state 0.
func Cross[F Float](fast, slow, close []F, first int, pos []State, margin []float64) error {
	n := len(fast)
	if len(slow) != n || len(close) != n || len(pos) != n || (margin != nil && len(margin) != n) {
		return fmt.Errorf("strategy.Cross: fast %d, slow %d, close %d, pos %d, margin %d: want one length (margin may be nil)",
			n, len(slow), len(close), len(pos), len(margin))
	}
	if first < 0 {
		return fmt.Errorf("strategy.Cross: first valid bar %d < 0", first)
	}
	var st State
	warmup(pos, margin, first)
	for i := max(first, 0); i < n; i++ {
		fa, sl := fast[i], slow[i]
		if fa > sl {
			st = 1
		} else if fa < sl {
			st = -1
		}
		pos[i] = st
		if margin != nil {
			margin[i] = math.Abs(float64(fa)-float64(sl)) / float64(close[i])
		}
	}
	return nil
}

// crossEval is cross's evaluator: fast and slow legs on the source.
type crossEval struct{}

func (crossEval) eval64(in *Inputs[float64], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float64]) (int, error) {
	return evalCross(in, c, f, pos, margin, sc)
}
func (crossEval) eval32(in *Inputs[float32], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float32]) (int, error) {
	return evalCross(in, c, f, pos, margin, sc)
}

// evalCross reads each leg's moving average by (kind, length) through sc.
func evalCross[F Float](in *Inputs[F], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[F]) (int, error) {
	fa, sl, first, err := crossLegs(in, c, f, sc)
	if err != nil {
		return 0, err
	}
	return first, Cross(fa, sl, in.Close, first, pos, margin)
}

// legsEvaluator is an evaluator whose state machine is Part 1's
// crossover of two series (long while a > b, short while a < b, unchanged
// on a tie or a NaN): cross (a fast, b slow) and hull (a HMA3, b HMA). Its
// kernel hands the two series to reference.BacktestBlocks, which decides
// the positions inside the backtest loop, and its parity walks both
// precisions' crossovers side by side (reference.PositionFlips) without
// writing positions, as hull's engine path does. legs returns the series
// (through sc) and the first bar both are defined.
type legsEvaluator interface {
	legs64(in *Inputs[float64], c Combo, f Formulation, sc *seriesCache[float64]) (a, b []float64, first int, err error)
	legs32(in *Inputs[float32], c Combo, f Formulation, sc *seriesCache[float32]) (a, b []float32, first int, err error)
}

var (
	_ legsEvaluator = crossEval{}
	_ legsEvaluator = hullEval{}
)

func (crossEval) legs64(in *Inputs[float64], c Combo, f Formulation, sc *seriesCache[float64]) ([]float64, []float64, int, error) {
	return crossLegs(in, c, f, sc)
}
func (crossEval) legs32(in *Inputs[float32], c Combo, f Formulation, sc *seriesCache[float32]) ([]float32, []float32, int, error) {
	return crossLegs(in, c, f, sc)
}
func (hullEval) legs64(in *Inputs[float64], c Combo, f Formulation, sc *seriesCache[float64]) ([]float64, []float64, int, error) {
	return hullLegs(in, c, f, sc)
}
func (hullEval) legs32(in *Inputs[float32], c Combo, f Formulation, sc *seriesCache[float32]) ([]float32, []float32, int, error) {
	return hullLegs(in, c, f, sc)
}

// crossLegs is cross's fast and slow moving averages and their first
// common valid bar.
func crossLegs[F Float](in *Inputs[F], c Combo, f Formulation, sc *seriesCache[F]) ([]F, []F, int, error) {
	return legs(leg[F]{in.Src, "src", c.Kinds[0], length(c.Values[0])}, leg[F]{in.Src, "src", c.Kinds[1], length(c.Values[1])}, f, sc)
}

// hullLegs is hull's HMA3 of the close and HMA of the source.
func hullLegs[F Float](in *Inputs[F], c Combo, f Formulation, sc *seriesCache[F]) ([]F, []F, int, error) {
	return legs(leg[F]{in.Close, "close", HMA3, length(c.Values[1])}, leg[F]{in.Src, "src", HMA, length(c.Values[0])}, f, sc)
}

// hullEval is hull's evaluator (SPEC Part 1): HMA3 of the close as the
// fast leg against HMA of the source, through the same Cross machine
// (long while h3 > h). The sweep engine runs hull through its own
// optimised path (reference.Backtest); this one is the plain statement
// of it, checked against that path in the tests.
type hullEval struct{}

func (hullEval) eval64(in *Inputs[float64], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float64]) (int, error) {
	return evalHull(in, c, f, pos, margin, sc)
}
func (hullEval) eval32(in *Inputs[float32], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float32]) (int, error) {
	return evalHull(in, c, f, pos, margin, sc)
}

// evalHull reads HMA3(close) and HMA(source) by length through sc.
func evalHull[F Float](in *Inputs[F], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[F]) (int, error) {
	h3, h, first, err := hullLegs(in, c, f, sc)
	if err != nil {
		return 0, err
	}
	return first, Cross(h3, h, in.Close, first, pos, margin)
}
