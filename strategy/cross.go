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
	for i := 0; i < n; i++ {
		if i < first {
			pos[i] = 0
			if margin != nil {
				margin[i] = math.NaN()
			}
			continue
		}
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
