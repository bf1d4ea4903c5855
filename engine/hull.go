package engine

import (
	"fmt"
	"math"
)

// Minimum lengths (SPEC "Indicators"): below them a component WMA would
// have length 0. They are input errors, never clamped.
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

// hullBuffers are the scratch series of one HMA or HMA3 evaluation, reused
// across lengths by one worker.
type hullBuffers[F Float] struct {
	a, b, c, scratch []F
}

func newHullBuffers[F Float](n int, f Formulation) *hullBuffers[F] {
	hb := &hullBuffers[F]{a: make([]F, n), b: make([]F, n), c: make([]F, n)}
	if f == Prefix {
		hb.scratch = make([]F, 2*(n+1))
	}
	return hb
}

// HMA writes the Hull moving average (TradingView "Hull Suite"):
//
//	HMA(x, L) = WMA(2*WMA(x, floor(L/2)) - WMA(x, L), round(sqrt(L)))
//
// x is defined from index 0; out (len(x)) is NaN before HMAWarmup(L).
// 2*a - b is evaluated left to right in F, each operation rounded.
// Returns an error when L < MinHMA.
func HMA[F Float](x []F, L int, f Formulation, out []F) error {
	if L < MinHMA {
		return fmt.Errorf("HMA length %d is below the minimum %d", L, MinHMA)
	}
	hmaInto(x, L, f, out, newHullBuffers[F](len(x), f))
	return nil
}

func hmaInto[F Float](x []F, L int, f Formulation, out []F, hb *hullBuffers[F]) {
	n := len(x)
	a, b := hb.a, hb.b
	wmaForm(f, x, L/2, 0, a, hb.scratch)
	wmaForm(f, x, L, 0, b, hb.scratch)
	for i := range a {
		a[i] = F(F(2)*a[i]) - b[i]
	}
	wmaForm(f, a, HMASqrtLen(L), min(L-1, n), out, hb.scratch)
}

// HMA3 writes the three-WMA Hull variant of the "Hull Suite":
//
//	HMA3(x, L) = WMA(3*WMA(x, floor(p/3)) - WMA(x, floor(p/2)) - WMA(x, p), p),  p = floor(L/2)
//
// x is defined from index 0; out is NaN before HMA3Warmup(L). 3*a - b - c is
// evaluated left to right in F, each operation rounded. Error when L < MinHMA3.
func HMA3[F Float](x []F, L int, f Formulation, out []F) error {
	if L < MinHMA3 {
		return fmt.Errorf("HMA3 length %d is below the minimum %d", L, MinHMA3)
	}
	hma3Into(x, L, f, out, newHullBuffers[F](len(x), f))
	return nil
}

func hma3Into[F Float](x []F, L int, f Formulation, out []F, hb *hullBuffers[F]) {
	n := len(x)
	p := L / 2
	a, b, c := hb.a, hb.b, hb.c
	wmaForm(f, x, p/3, 0, a, hb.scratch)
	wmaForm(f, x, p/2, 0, b, hb.scratch)
	wmaForm(f, x, p, 0, c, hb.scratch)
	for i := range a {
		a[i] = F(F(F(3)*a[i])-b[i]) - c[i]
	}
	wmaForm(f, a, p, min(p-1, n), out, hb.scratch)
}
