package reference

import (
	"fmt"

	"sweepbench/engine"
)

// hullBuffers are the scratch series of one HMA or HMA3 evaluation, reused
// across lengths by one worker.
type hullBuffers[F Float] struct {
	a, b, c, scratch []F
}

func newHullBuffers[F Float](n int, f engine.Formulation) *hullBuffers[F] {
	hb := &hullBuffers[F]{a: make([]F, n), b: make([]F, n), c: make([]F, n)}
	if f == engine.Prefix {
		hb.scratch = make([]F, 2*(n+1))
	}
	return hb
}

// HMA writes the Hull moving average (TradingView "Hull Suite"):
//
//	HMA(x, L) = WMA(2*WMA(x, floor(L/2)) - WMA(x, L), round(sqrt(L)))
//
// x is defined from index 0; out (len(x)) is NaN before engine.HMAWarmup(L).
// 2*a - b is evaluated left to right in F, each operation rounded.
// Returns an error when L < engine.MinHMA.
func HMA[F Float](x []F, L int, f engine.Formulation, out []F) error {
	if L < engine.MinHMA {
		return fmt.Errorf("HMA length %d is below the minimum %d", L, engine.MinHMA)
	}
	hmaInto(x, L, f, out, newHullBuffers[F](len(x), f))
	return nil
}

func hmaInto[F Float](x []F, L int, f engine.Formulation, out []F, hb *hullBuffers[F]) {
	n := len(x)
	a, b := hb.a, hb.b
	wmaForm(f, x, L/2, 0, a, hb.scratch)
	wmaForm(f, x, L, 0, b, hb.scratch)
	for i := range a {
		a[i] = F(F(2)*a[i]) - b[i]
	}
	wmaForm(f, a, engine.HMASqrtLen(L), min(L-1, n), out, hb.scratch)
}

// HMA3 writes the three-WMA Hull variant of the "Hull Suite":
//
//	HMA3(x, L) = WMA(3*WMA(x, floor(p/3)) - WMA(x, floor(p/2)) - WMA(x, p), p),  p = floor(L/2)
//
// x is defined from index 0; out is NaN before engine.HMA3Warmup(L).
// 3*a - b - c is evaluated left to right in F, each operation rounded.
// Error when L < engine.MinHMA3.
func HMA3[F Float](x []F, L int, f engine.Formulation, out []F) error {
	if L < engine.MinHMA3 {
		return fmt.Errorf("HMA3 length %d is below the minimum %d", L, engine.MinHMA3)
	}
	hma3Into(x, L, f, out, newHullBuffers[F](len(x), f))
	return nil
}

func hma3Into[F Float](x []F, L int, f engine.Formulation, out []F, hb *hullBuffers[F]) {
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
