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
	fa, sl, first, err := legs(leg[F]{in.Src, "src", c.Kinds[0], length(c.Values[0])}, leg[F]{in.Src, "src", c.Kinds[1], length(c.Values[1])}, f, sc)
	if err != nil {
		return 0, err
	}
	return first, Cross(fa, sl, in.Close, first, pos, margin)
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
	h3, h, first, err := legs(leg[F]{in.Close, "close", HMA3, length(c.Values[1])}, leg[F]{in.Src, "src", HMA, length(c.Values[0])}, f, sc)
	if err != nil {
		return 0, err
	}
	return first, Cross(h3, h, in.Close, first, pos, margin)
}
