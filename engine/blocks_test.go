package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFrexp: for normal positive numbers Frexp is math.Frexp (the mantissa
// in [0.5, 1), the exponent added); zero, negatives, subnormals, infinities
// and NaN come back as they are; LogGrowth of the split is the log of the
// number.
func TestFrexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		x := math.Exp(rng.NormFloat64() * 200)
		m, e := Frexp(x, 5)
		wm, we := math.Frexp(x)
		if m != wm || e != we+5 {
			t.Fatalf("Frexp(%g) = %g, %d; math.Frexp %g, %d (+5)", x, m, e, wm, we)
		}
		if l := LogGrowth(m, e-5); math.Abs(l-math.Log(x)) > 1e-12*math.Max(1, math.Abs(math.Log(x))) {
			t.Fatalf("LogGrowth(%g, %d) = %g, log(x) %g", m, e-5, l, math.Log(x))
		}
	}
	for _, x := range []float64{0, -1.5, 5e-324, math.Inf(1), math.NaN()} {
		if m, e := Frexp(x, 3); math.Float64bits(m) != math.Float64bits(x) || e != 3 {
			t.Errorf("Frexp(%g) = %g, %d: want it unchanged", x, m, e)
		}
	}
	if l := LogGrowth(0, 0); !math.IsInf(l, -1) {
		t.Errorf("LogGrowth after a total loss = %g, want -Inf", l)
	}
}

// TestBlockBounds: n-1 returns in s blocks, edge b at floor(b*(n-1)/s)
// (SPEC); too many blocks refused naming --blocks.
func TestBlockBounds(t *testing.T) {
	b, err := BlockBounds(11, 3) // 10 returns: 3, 3, 4
	if err != nil || len(b) != 4 || b[0] != 0 || b[1] != 3 || b[2] != 6 || b[3] != 10 {
		t.Errorf("BlockBounds(11, 3) = %v, %v; want [0 3 6 10]", b, err)
	}
	if _, err := BlockBounds(5, 5); err == nil || FieldErrors(err)[0].Field != FieldBlocks {
		t.Errorf("5 blocks of 4 returns: %v, want a --blocks error", err)
	}
}
