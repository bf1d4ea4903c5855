package reference

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"sweepbench/engine"
)

// TestPositionFlips: the one-pass walk of both precisions flags exactly the
// bars where Positions over the fp64 series and Positions over the fp32
// series differ, with their positions, on random series that cross often
// (fp32 rounding of the fp64 values plus noise near the crossings), with
// NaN warm-ups and exact ties, long-short and long-only, from several
// first bars.
func TestPositionFlips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	n := 5000
	h, h3 := make([]float64, n), make([]float64, n)
	g, g3 := make([]float32, n), make([]float32, n)
	for i := range h {
		h[i] = 100 + rng.NormFloat64()
		h3[i] = h[i] + rng.NormFloat64()*0.01
		g[i], g3[i] = float32(h[i]), float32(h3[i]+rng.NormFloat64()*1e-3)
		switch {
		case i < 40:
			h[i], g3[i] = math.NaN(), float32(math.NaN())
		case i%97 == 0:
			h3[i], g3[i] = h[i], g[i] // ties keep the state
		}
	}
	for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
		for _, first := range []int{0, 40, 1234} {
			p64, p32 := make([]int8, n), make([]int8, n)
			Positions(h, h3, first, mode, 0, p64)
			Positions(g, g3, first, mode, 0, p32)
			var want, got []int
			for i := first; i < n-1; i++ {
				if p64[i] != p32[i] {
					want = append(want, i)
				}
			}
			PositionFlips(h, h3, g, g3, first, n-1, mode, func(i int, a, b int8) {
				if a != p64[i] || b != p32[i] {
					t.Fatalf("%s from %d, bar %d: positions %d, %d; want %d, %d", mode, first, i, a, b, p64[i], p32[i])
				}
				got = append(got, i)
			})
			if len(want) < 50 || !slices.Equal(got, want) {
				t.Errorf("%s from %d: %d flips %v..., want %d", mode, first, len(got), got[:min(len(got), 5)], len(want))
			}
		}
	}
}
