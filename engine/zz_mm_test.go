package engine

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkMinMax(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 150000)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	var s1, s2, s3 float64
	for b.Loop() {
		for _, v := range x {
			lo := min(v, 0)
			s1 += max(v, 0)
			s2 += lo
			s3 += lo * lo
		}
	}
	_ = s1 + s2 + s3
}
