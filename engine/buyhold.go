package engine

import (
	"math"

	"sweepbench/engine/data"
)

// BuyHoldReturn is the return of holding the study's bars from the first
// close to the last, close[n-1]/close[0] - 1, a fraction, with no fee
// (SPEC Part 2 "New metrics": buy_hold_return, backtesting.py's "Buy &
// Hold Return"): one number per dataset and window, the benchmark a
// combo's total_return is read against, not a per-combo metric. NaN for
// no bars; 0 for one.
func BuyHoldReturn(b *data.Bars) float64 {
	n := b.Len()
	if n == 0 {
		return math.NaN()
	}
	return b.Close[n-1]/b.Close[0] - 1
}
