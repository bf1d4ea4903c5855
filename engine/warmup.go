package engine

import "math"

// Minimum lengths (SPEC "Indicators"): below them a component WMA would
// have length 0. They are input errors, never clamped (Grid.Validate).
const (
	MinHMA  = 2
	MinHMA3 = 6
)

// HMASqrtLen is round(sqrt(L)), the length of HMA's outer WMA. sqrt of an
// integer is never exactly k+0.5, so the rounding convention cannot matter.
func HMASqrtLen(L int) int { return int(math.Floor(math.Sqrt(float64(L)) + 0.5)) }

// HMAWarmup is W = (L-1) + (round(sqrt(L))-1), the first defined index of
// HMA(x, L) when x is defined from 0 (SPEC "How many bars are enough").
func HMAWarmup(L int) int { return (L - 1) + (HMASqrtLen(L) - 1) }

// HMA3Warmup is W3 = 2*(p-1) with p = floor(L/2), the first defined index of
// HMA3(x, L) when x is defined from 0.
func HMA3Warmup(L int) int { p := L / 2; return 2 * (p - 1) }

// ComboWarmup is max(W, W3): the first bar at which both of a combo's series
// are defined, where its backtest starts (SPEC "Signal, position, fills").
func ComboWarmup(c Combo) int { return max(HMAWarmup(c.HMA), HMA3Warmup(c.HMA3)) }
