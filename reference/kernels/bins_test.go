package kernels

import (
	"math"
	"testing"
)

// TestBins: the fp32 keys round-trip and keep the order of the floats, and
// Bin(v) is the number of edges <= v, counted independently, on and beside
// every edge of bins built from a synthetic close series.
func TestBins(t *testing.T) {
	for _, v := range []float32{-1, -1e-3, -1e-30, float32(math.Copysign(0, -1)), 0, 1e-30, 2} {
		if ValHi[float32](KeyHi(v)) != v {
			t.Errorf("ValHi(KeyHi(%v)) = %v", v, ValHi[float32](KeyHi(v)))
		}
	}
	vals := []float32{-0.5, -0.01, -0.002, -1e-4, -1e-7, 0, 1e-9, 0.003}
	for i := 1; i < len(vals); i++ {
		if KeyHi(vals[i-1]) >= KeyHi(vals[i]) {
			t.Errorf("KeyHi not increasing at %v, %v", vals[i-1], vals[i])
		}
	}
	closes := make([]float64, 5000)
	px := 100.0
	for i := range closes {
		px *= 1 + 0.003*math.Sin(float64(i)*0.7)*math.Cos(float64(i)*0.013)
		closes[i] = px
	}
	spec := BinsFromCloses[float32](closes)
	if len(spec.Edges) != NumBins-1 {
		t.Fatalf("%d edges", len(spec.Edges))
	}
	// bin(v) must be the number of edges <= v: an independent count.
	probe := append([]float32{}, spec.Edges...)
	for _, e := range spec.Edges {
		probe = append(probe, math.Nextafter32(e, -1), math.Nextafter32(e, 1))
	}
	probe = append(probe, -1, -0.05, -1e-6, 0, 1e-6, 0.05)
	for _, v := range probe {
		want := 0
		for _, e := range spec.Edges {
			if e <= v {
				want++
			}
		}
		if got := spec.Bin(v); got != want {
			t.Errorf("bin(%v) = %d, edges <= v: %d", v, got, want)
		}
	}
}
