package reference_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
)

// TestWMASIMDBitIdentical checks that the AVX2 blocks give the same bits as
// the scalar loop, for both precisions, over lengths and sizes that hit the
// block edges, on fresh random prices (seed logged).
func TestWMASIMDBitIdentical(t *testing.T) {
	if !reference.HasAVX2() {
		t.Skip("no AVX2 on this CPU: only the scalar path runs")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, n := range []int{1, 31, 32, 33, 64, 65, 100, 1000, 4099} {
		for _, p := range []int{1, 2, 3, 7, 16, 33, 100, 250} {
			x := make([]float64, n)
			v := 100 + 50*rng.Float64()
			for i := range x {
				v *= 1 + 0.01*rng.NormFloat64()
				x[i] = v
			}
			x32 := make([]float32, n)
			for i := range x {
				x32[i] = float32(x[i])
			}
			for _, s := range []int{0, 3} {
				if s >= n {
					continue
				}
				checkSame(t, x, p, s)
				checkSame(t, x32, p, s)
			}
		}
	}
}

func checkSame[F engine.Float](t *testing.T, x []F, p, s int) {
	t.Helper()
	n := len(x)
	a, b := make([]F, n), make([]F, n)
	was := reference.SetAVX2(true)
	defer reference.SetAVX2(was)
	reference.WMA(x, p, s, a)
	reference.SetAVX2(false)
	reference.WMA(x, p, s, b)
	for i := range a {
		if math.Float64bits(float64(a[i])) != math.Float64bits(float64(b[i])) && !(math.IsNaN(float64(a[i])) && math.IsNaN(float64(b[i]))) {
			t.Fatalf("%T n=%d p=%d s=%d: out[%d] avx2 %v scalar %v", x[0], n, p, s, i, a[i], b[i])
		}
	}
}
