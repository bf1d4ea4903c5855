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
// series differ, with their positions, with the AVX2 scan and without it:
// on random series that cross often (fp32 rounding of the fp64 values plus
// noise near the crossings: flips every few bars), on series whose fp32
// copy is the fp64 one rounded (flips rare: the scan skips long runs), with
// NaN warm-ups and exact ties, long-short and long-only, from several
// first bars, up to held bars that are not a multiple of the scan's block.
func TestPositionFlips(t *testing.T) {
	for _, avx := range []bool{true, false} {
		if avx && !useAVX2 {
			t.Log("no AVX2 on this CPU: the Go scan only")
			continue
		}
		was := useAVX2
		useAVX2 = avx
		for _, noisy := range []bool{true, false} {
			testPositionFlips(t, noisy)
		}
		useAVX2 = was
	}
}

func testPositionFlips(t *testing.T, noisy bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	n := 5003
	h, h3 := make([]float64, n), make([]float64, n)
	g, g3 := make([]float32, n), make([]float32, n)
	for i := range h {
		h[i] = 100 + rng.NormFloat64()
		h3[i] = h[i] + rng.NormFloat64()*0.01
		g[i], g3[i] = float32(h[i]), float32(h3[i]+rng.NormFloat64()*1e-3)
		if !noisy {
			// Mostly well apart, now and then within fp32's rounding.
			h3[i] = h[i] + rng.NormFloat64()
			if i%61 == 0 {
				h3[i] = h[i] * (1 + rng.NormFloat64()*1e-8)
			}
			g3[i] = float32(h3[i])
		}
		switch {
		case i < 40:
			h[i], g3[i] = math.NaN(), float32(math.NaN())
		case i%97 == 0:
			h3[i], g3[i] = h[i], g[i] // ties keep the state
		case i%701 == 0:
			h[i] = math.NaN() // a NaN in fp64 only keeps its state
		}
	}
	if !noisy {
		// Flips that only a tie or a NaN in one precision makes: both
		// high at bar i-1, then fp64 goes low while fp32 keeps its state.
		for i := 389; i < n; i += 389 {
			h3[i-1], h3[i] = h[i-1]+1, h[i]-1
			g3[i-1], g3[i] = float32(h3[i-1]), g[i] // an fp32 tie
			if i%2 == 1 {
				g3[i] = float32(math.NaN()) // an fp32 NaN
			}
		}
	}
	minFlips := 50
	if !noisy {
		minFlips = 5
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
					t.Fatalf("avx %v noisy %v, %s from %d, bar %d: positions %d, %d; want %d, %d", useAVX2, noisy, mode, first, i, a, b, p64[i], p32[i])
				}
				got = append(got, i)
			})
			if len(want) < minFlips || !slices.Equal(got, want) {
				t.Errorf("avx %v noisy %v, %s from %d: %d flips %v..., want %d %v...", useAVX2, noisy, mode, first, len(got), got[:min(len(got), 5)], len(want), want[:min(len(want), 5)])
			}
			if !noisy && len(want) > n/20 {
				t.Errorf("quiet series: %d flips, want rare ones", len(want))
			}
		}
	}
}
