package reference

import (
	"math"

	"sweepbench/engine"
)

// The bench ladder's baseline (M0, Arithmetic.NaiveSweep) recomputes every
// combo's series with the textbook loops below: one output at a time, one
// accumulator, no vector path, fresh buffers per call. They give the bits
// of WMA, HMA and HMA3 (fp64, direct): the same evaluation order.

// scalarWMA is WMA(x, p) for x defined from s, one output at a time.
func scalarWMA(x []float64, p, s int, out []float64) {
	den := float64(p) * float64(p+1) / 2
	for i := range out {
		if i < s+p-1 {
			out[i] = math.NaN()
			continue
		}
		var acc float64
		for k := 1; k <= p; k++ {
			acc += float64(float64(k) * x[i-p+k])
		}
		out[i] = acc / den
	}
}

// scalarHMA is HMA(x, L) composed from scalarWMA.
func scalarHMA(x []float64, L int, out []float64) {
	n := len(x)
	a, b := make([]float64, n), make([]float64, n)
	scalarWMA(x, L/2, 0, a)
	scalarWMA(x, L, 0, b)
	for i := range a {
		a[i] = float64(2*a[i]) - b[i]
	}
	scalarWMA(a, engine.HMASqrtLen(L), min(L-1, n), out)
}

// scalarHMA3 is HMA3(x, L) composed from scalarWMA.
func scalarHMA3(x []float64, L int, out []float64) {
	n := len(x)
	p := L / 2
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	scalarWMA(x, p/3, 0, a)
	scalarWMA(x, p/2, 0, b)
	scalarWMA(x, p, 0, c)
	for i := range a {
		a[i] = float64(float64(3*a[i])-b[i]) - c[i]
	}
	scalarWMA(a, p, min(p-1, n), out)
}
