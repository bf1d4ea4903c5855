package engine

import (
	"math/rand/v2"
	"testing"
)

func rw(n int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n)
	v := 4.0
	for i := range x {
		v *= 1 + 0.001*r.NormFloat64()
		x[i] = v
	}
	return x
}

func BenchmarkWMA100(b *testing.B) {
	x := rw(150000)
	out := make([]float64, len(x))
	for b.Loop() {
		WMA(x, 100, 0, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/150000/100, "ns/term")
}

func BenchmarkBacktest(b *testing.B) {
	x := rw(150000)
	h := make([]float64, len(x))
	h3 := make([]float64, len(x))
	HMA(x, 100, Direct, h)
	HMA3(x, 120, Direct, h3)
	bb := Bars{Close: x}
	r := BarReturns[float64](&bb)
	var sc Scratch[float64]
	p := Params{Fee: DefaultFee, BarsPerYear: 525600}
	for b.Loop() {
		Backtest(h, h3, r, 200, p, &sc)
	}
}

func BenchmarkSelect(b *testing.B) {
	x := rw(150000)
	y := make([]float64, len(x))
	for b.Loop() {
		copy(y, x)
		Select(y, 7000)
	}
}
