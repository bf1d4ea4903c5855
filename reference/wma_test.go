package reference_test

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
)

// ---- hand-computed cases ---------------------------------------------------

// TestWMAHandComputed checks WMA on inputs small enough to do on paper.
// Every expected value is an integer sum divided by p(p+1)/2: the engine
// adds exact integer products (no rounding for these inputs) and divides
// once, so the result must be the correctly rounded quotient, bit for bit,
// in either precision.
func TestWMAHandComputed(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		x    []float64
		p, s int
		num  []float64 // expected sums (NaN: undefined); value = num/den
		den  float64   // p(p+1)/2
	}{
		{
			// x = 1,2,3,4,5, p = 3, den = 3*4/2 = 6; first defined at s+p-1 = 2.
			//   i=2: (1*1 + 2*2 + 3*3)/6 = 14/6
			//   i=3: (1*2 + 2*3 + 3*4)/6 = 20/6
			//   i=4: (1*3 + 2*4 + 3*5)/6 = 26/6
			name: "ramp p=3", x: []float64{1, 2, 3, 4, 5}, p: 3,
			num: []float64{nan, nan, 14, 20, 26}, den: 6,
		},
		{
			// p = 1: den = 1, WMA(x, 1) = x, defined from 0.
			name: "p=1 is the identity", x: []float64{7, 3, 9}, p: 1,
			num: []float64{7, 3, 9}, den: 1,
		},
		{
			// x defined from s = 2 (x[0], x[1] are NaN), p = 2, den = 3;
			// first defined at s+p-1 = 3:
			//   i=3: (1*3 + 2*1)/3 = 5/3
			//   i=4: (1*1 + 2*4)/3 = 9/3
			//   i=5: (1*4 + 2*1)/3 = 6/3
			//   i=6: (1*1 + 2*5)/3 = 11/3
			name: "offset start s=2", x: []float64{nan, nan, 3, 1, 4, 1, 5}, p: 2, s: 2,
			num: []float64{nan, nan, nan, 5, 9, 6, 11}, den: 3,
		},
		{
			// p = n = 4, den = 10: only the last output exists,
			// (1*1 + 2*2 + 3*3 + 4*4)/10 = 30/10.
			name: "p equals n", x: []float64{1, 2, 3, 4}, p: 4,
			num: []float64{nan, nan, nan, 30}, den: 10,
		},
		{
			// p > n: nothing is defined.
			name: "p above n", x: []float64{1, 2, 3}, p: 5,
			num: []float64{nan, nan, nan}, den: 15,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkWMAHand[float64](t, c.x, c.p, c.s, c.num, c.den)
			checkWMAHand[float32](t, c.x, c.p, c.s, c.num, c.den)
		})
	}
}

func checkWMAHand[F engine.Float](t *testing.T, x []float64, p, s int, num []float64, den float64) {
	t.Helper()
	out := make([]F, len(x))
	reference.WMA(toF[F](x), p, s, out)
	for i := range out {
		want := F(math.NaN())
		if !math.IsNaN(num[i]) {
			want = F(num[i]) / F(den) // one correctly rounded division in F
		}
		if !conformance.SameFloat(out[i], want) {
			t.Errorf("%s WMA p=%d s=%d: out[%d] = %v, want %v/%v = %v", precName[F](), p, s, i, out[i], num[i], den, want)
		}
	}
}

// TestHMAHandComputed works HMA(x, 4) through by hand.
//
//	x = 2, 4, 3, 5, 7, 6;  L = 4: floor(L/2) = 2, round(sqrt 4) = 2, W = 3 + 1 = 4
//	WMA(x,2)[i] = (x[i-1] + 2x[i])/3:        i=1..5: 10/3, 10/3, 13/3, 19/3, 19/3
//	WMA(x,4)[i] = (x[i-3]+2x[i-2]+3x[i-1]+4x[i])/10:
//	                                          i=3: 39/10, i=4: 53/10, i=5: 58/10
//	d = 2*WMA2 - WMA4:  i=3: 26/3-39/10 = 143/30, i=4: 38/3-53/10 = 221/30,
//	                    i=5: 38/3-58/10 = 206/30
//	HMA = WMA(d, 2) = (d[i-1] + 2d[i])/3:
//	                    i=4: (143 + 442)/90 = 585/90 = 6.5
//	                    i=5: (221 + 412)/90 = 633/90
func TestHMAHandComputed(t *testing.T) {
	x := []float64{2, 4, 3, 5, 7, 6}
	want := []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN(), 585.0 / 90, 633.0 / 90}
	checkHull[float64](t, "HMA", x, 4, want, 1e-15)
	checkHull[float32](t, "HMA", x, 4, want, 1e-6)
}

// TestHMA3HandComputed works HMA3(x, 6) through by hand.
//
//	L = 6: p = 3, floor(p/3) = 1, floor(p/2) = 1, W3 = 2*(3-1) = 4
//	HMA3 = WMA(3*WMA(x,1) - WMA(x,1) - WMA(x,3), 3) = WMA(2x - WMA(x,3), 3)
//	WMA(x,3) = (x[i-2]+2x[i-1]+3x[i])/6:  i=2: 19/6, i=3: 25/6, i=4: 34/6, i=5: 37/6
//	d = 2x - WMA3:  i=2: 6-19/6 = 17/6, i=3: 10-25/6 = 35/6,
//	                i=4: 14-34/6 = 50/6, i=5: 12-37/6 = 35/6
//	HMA3 = WMA(d,3) = (d[i-2]+2d[i-1]+3d[i])/6:
//	                i=4: (17 + 70 + 150)/36 = 237/36
//	                i=5: (35 + 100 + 105)/36 = 240/36
func TestHMA3HandComputed(t *testing.T) {
	x := []float64{2, 4, 3, 5, 7, 6}
	want := []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN(), 237.0 / 36, 240.0 / 36}
	checkHull[float64](t, "HMA3", x, 6, want, 1e-15)
	checkHull[float32](t, "HMA3", x, 6, want, 1e-6)
}

// TestHullOnALine uses the lag algebra of a linear series x[i] = a + b*i:
// WMA(x, p) = x - b(p-1)/3. Hence for HMA with L = 4 (floor 2, sqrt 2):
// 2(x - b/3) - (x - b) = x + b/3, then WMA(., 2) = x + b/3 - b/3 = x;
// for L = 9 (floor 4, sqrt 3): 2(x - b) - (x - 8b/3) = x + 2b/3, then
// WMA(., 3) = x. For HMA3 with L = 6 (p = 3: 1, 1, 3): 3x - x - (x - 2b/3)
// = x + 2b/3, WMA(., 3) = x; with L = 12 (p = 6: 2, 3, 6):
// 3(x - b/3) - (x - 2b/3) - (x - 5b/3) = x + 4b/3, WMA(., 6) = x - b/3.
func TestHullOnALine(t *testing.T) {
	const n, a, b = 60, 100.0, 0.25
	x := make([]float64, n)
	for i := range x {
		x[i] = a + b*float64(i)
	}
	for _, c := range []struct {
		kind  string
		L     int
		shift float64 // HMA - x on the defined bars
	}{{"HMA", 4, 0}, {"HMA", 9, 0}, {"HMA3", 6, 0}, {"HMA3", 12, -b / 3}} {
		want := make([]float64, n)
		first := engine.HMAWarmup(c.L)
		if c.kind == "HMA3" {
			first = engine.HMA3Warmup(c.L)
		}
		for i := range want {
			want[i] = math.NaN()
			if i >= first {
				want[i] = x[i] + c.shift
			}
		}
		checkHull[float64](t, c.kind, x, c.L, want, 1e-13)
		checkHull[float32](t, c.kind, x, c.L, want, 1e-6)
	}
}

// checkHull runs both formulations. rel is the direct form's tolerance; the
// prefix form's running sums lose digits even at n = 60 (S2 ~ 2e5 at price
// ~100: ~1e-13 relative in fp64, ~2e-5 in fp32), so it gets 1e-11 and 1e-4.
func checkHull[F engine.Float](t *testing.T, kind string, x []float64, L int, want []float64, rel float64) {
	t.Helper()
	for _, form := range []engine.Formulation{engine.Direct, engine.Prefix} {
		tol := rel
		if form == engine.Prefix {
			tol = 1e-11
			if precName[F]() == "fp32" {
				tol = 1e-4
			}
		}
		out := make([]F, len(x))
		var err error
		if kind == "HMA" {
			err = reference.HMA(toF[F](x), L, form, out)
		} else {
			err = reference.HMA3(toF[F](x), L, form, out)
		}
		if err != nil {
			t.Fatalf("%s(%d): %v", kind, L, err)
		}
		for i := range out {
			if !conformance.Near(float64(out[i]), want[i], tol, 0) {
				t.Errorf("%s %s %s(x, %d)[%d] = %v, want %v (rel %g)", precName[F](), form, kind, L, i, out[i], want[i], tol)
			}
		}
	}
}

// TestHullWarmupEdges checks that HMA and HMA3 are NaN exactly before
// HMAWarmup / HMA3Warmup (SPEC "How many bars are enough": W = (L-1) +
// (round(sqrt L)-1), W3 = 2*(floor(L/2)-1)) and finite from there on, for
// every length in a range, both precisions, both formulations, and for
// series shorter than the warm-up (all NaN, no panic).
func TestHullWarmupEdges(t *testing.T) {
	// The warm-ups themselves, by hand: L=2: 1+0 = 1; L=4: 3+1 = 4;
	// L=10: 9+2 = 11 (round(3.16) = 3); L=13: 12+3 = 15 (round(3.61) = 4).
	// HMA3 L=6: p=3, 2*2 = 4; L=7: p=3, 4; L=30: p=15, 28.
	for _, c := range []struct{ L, w int }{{2, 1}, {4, 4}, {10, 11}, {13, 15}, {200, 212}} {
		if got := engine.HMAWarmup(c.L); got != c.w {
			t.Errorf("HMAWarmup(%d) = %d, want %d", c.L, got, c.w)
		}
	}
	for _, c := range []struct{ L, w int }{{6, 4}, {7, 4}, {30, 28}, {240, 238}} {
		if got := engine.HMA3Warmup(c.L); got != c.w {
			t.Errorf("HMA3Warmup(%d) = %d, want %d", c.L, got, c.w)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	x := datatest.Closes(rng, 150, 100, 0.01)
	for _, n := range []int{150, 20, 3} {
		checkWarmups[float64](t, x[:n])
		checkWarmups[float32](t, x[:n])
	}
}

func checkWarmups[F engine.Float](t *testing.T, x64 []float64) {
	t.Helper()
	x := toF[F](x64)
	out := make([]F, len(x))
	for _, form := range []engine.Formulation{engine.Direct, engine.Prefix} {
		for L := engine.MinHMA; L <= 60; L++ {
			if err := reference.HMA(x, L, form, out); err != nil {
				t.Fatal(err)
			}
			checkFirstDefined(t, fmt.Sprintf("%s %s HMA(%d) n=%d", precName[F](), form, L, len(x)), out, engine.HMAWarmup(L))
		}
		for L := engine.MinHMA3; L <= 80; L++ {
			if err := reference.HMA3(x, L, form, out); err != nil {
				t.Fatal(err)
			}
			checkFirstDefined(t, fmt.Sprintf("%s %s HMA3(%d) n=%d", precName[F](), form, L, len(x)), out, engine.HMA3Warmup(L))
		}
	}
}

func checkFirstDefined[F engine.Float](t *testing.T, what string, out []F, first int) {
	t.Helper()
	for i, v := range out {
		if undefined := math.IsNaN(float64(v)); undefined != (i < first) {
			t.Errorf("%s: out[%d] = %v, want first defined index %d", what, i, v, first)
			return
		}
		if i >= first && math.IsInf(float64(v), 0) {
			t.Errorf("%s: out[%d] = %v", what, i, v)
			return
		}
	}
}

// TestHullMinimumLengths: lengths below the minimum are input errors, never
// clamped (SPEC "Indicators": L >= 2 for HMA, L >= 6 for HMA3), and the
// grid's error names the flag.
func TestHullMinimumLengths(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	out := make([]float64, len(x))
	for _, L := range []int{1, 0, -3} {
		if err := reference.HMA(x, L, engine.Direct, out); err == nil || !strings.Contains(err.Error(), fmt.Sprint(L)) {
			t.Errorf("HMA(x, %d): err = %v, want an error naming the length", L, err)
		}
	}
	for _, L := range []int{5, 1} {
		if err := reference.HMA3(x, L, engine.Direct, out); err == nil || !strings.Contains(err.Error(), fmt.Sprint(L)) {
			t.Errorf("HMA3(x, %d): err = %v, want an error naming the length", L, err)
		}
	}
	x32 := toF[float32](x)
	out32 := make([]float32, len(x))
	if err := reference.HMA(x32, 1, engine.Prefix, out32); err == nil {
		t.Error("float32 HMA(x, 1): no error")
	}
	if err := reference.HMA3(x32, 5, engine.Prefix, out32); err == nil {
		t.Error("float32 HMA3(x, 5): no error")
	}
	if err := reference.HMA(x, engine.MinHMA, engine.Direct, out); err != nil {
		t.Errorf("HMA(x, 2): %v", err)
	}
	if err := reference.HMA3(x, engine.MinHMA3, engine.Direct, out); err != nil {
		t.Errorf("HMA3(x, 6): %v", err)
	}
	for _, c := range []struct {
		g    engine.Grid
		want []string
	}{
		{engine.Grid{HMA: engine.Range{Start: 1, Stop: 10, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 12, Step: 6}}, []string{"hma ", "below the minimum 2"}},
		{engine.Grid{HMA: engine.Range{Start: 2, Stop: 10, Step: 1}, HMA3: engine.Range{Start: 5, Stop: 12, Step: 1}}, []string{"hma3 ", "below the minimum 6"}},
	} {
		err := c.g.Validate(0)
		if err == nil {
			t.Errorf("Grid %v x %v: no error", c.g.HMA, c.g.HMA3)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Grid %v x %v: error %q does not contain %q", c.g.HMA, c.g.HMA3, err, w)
			}
		}
	}
	b := datatest.CloseBars(x)
	if _, err := reference.BuildIndicators[float64](t.Context(), b, engine.Grid{HMA: engine.Range{Start: 1, Stop: 2, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 6, Step: 1}}, engine.SourceClose, engine.Direct); err == nil {
		t.Error("BuildIndicators with HMA length 1: no error")
	}
	if _, err := reference.BuildIndicators[float32](t.Context(), b, engine.Grid{HMA: engine.Range{Start: 2, Stop: 2, Step: 1}, HMA3: engine.Range{Start: 5, Stop: 6, Step: 1}}, engine.SourceClose, engine.Direct); err == nil {
		t.Error("BuildIndicators with HMA3 length 5: no error")
	}
}

// ---- against exact rational arithmetic ------------------------------------

// ratOf converts exactly (every finite float is a dyadic rational).
func ratOf[F engine.Float](x []F) []*big.Rat {
	out := make([]*big.Rat, len(x))
	for i, v := range x {
		out[i] = new(big.Rat).SetFloat64(float64(v))
	}
	return out
}

// exactWMA is SPEC's WMA in exact arithmetic: nil where undefined (i < s+p-1).
func exactWMA(x []*big.Rat, p, s int) []*big.Rat {
	out := make([]*big.Rat, len(x))
	den := new(big.Rat).SetInt64(int64(p * (p + 1) / 2))
	term := new(big.Rat)
	for i := s + p - 1; i < len(x); i++ {
		acc := new(big.Rat)
		for k := 1; k <= p; k++ {
			acc.Add(acc, term.Mul(big.NewRat(int64(k), 1), x[i-p+k]))
		}
		out[i] = acc.Quo(acc, den)
	}
	return out
}

// lin returns sum c_j * a_j where every a_j is defined, else nil.
func lin(cs []int64, as ...[]*big.Rat) []*big.Rat {
	out := make([]*big.Rat, len(as[0]))
	t := new(big.Rat)
	for i := range out {
		acc := new(big.Rat)
		for j, a := range as {
			if a[i] == nil {
				acc = nil
				break
			}
			acc.Add(acc, t.Mul(big.NewRat(cs[j], 1), a[i]))
		}
		out[i] = acc
	}
	return out
}

// exactHMA composes exact component WMAs: WMA(2*WMA(x,L/2) - WMA(x,L), round(sqrt L)).
func exactHMA(x []*big.Rat, L int) []*big.Rat {
	d := lin([]int64{2, -1}, exactWMA(x, L/2, 0), exactWMA(x, L, 0))
	return exactWMA(d, engine.HMASqrtLen(L), L-1)
}

// exactHMA3 composes WMA(3*WMA(x,p/3) - WMA(x,p/2) - WMA(x,p), p), p = L/2.
func exactHMA3(x []*big.Rat, L int) []*big.Rat {
	p := L / 2
	d := lin([]int64{3, -1, -1}, exactWMA(x, p/3, 0), exactWMA(x, p/2, 0), exactWMA(x, p, 0))
	return exactWMA(d, p, p-1)
}

func ratF(r *big.Rat) float64 { f, _ := r.Float64(); return f }

// TestWMAAgainstExact compares WMA with the exact rational value on random
// prices. For positive terms the direct sum's relative error is at most
// (p+1)u to first order (p rounded products, p-1 additions, one division;
// u = 2^-53 or 2^-24), so the bound asserted is (p+2)u: about 1e-14 for
// fp64 (well inside SPEC's 1e-12) and up to ~4e-6 for fp32 at p = 64.
func TestWMAAgainstExact(t *testing.T) {
	for _, seed := range datatest.Seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 11))
		x := datatest.Closes(rng, 240, 50+100*rng.Float64(), 0.02)
		ps := []int{1, 2, 3, 7, 8, 9, 31, 64}
		for range 2 {
			ps = append(ps, 1+rng.IntN(100))
		}
		for _, p := range ps {
			s := rng.IntN(5)
			worst64 := checkWMAExact[float64](t, seed, x, p, s)
			worst32 := checkWMAExact[float32](t, seed, x, p, s)
			if p == 64 {
				t.Logf("seed %d p=%d: max rel error fp64 %.2e (%.2f u), fp32 %.2e (%.2f u)",
					seed, p, worst64, worst64/0x1p-53, worst32, worst32/0x1p-24)
			}
		}
	}
}

func checkWMAExact[F engine.Float](t *testing.T, seed uint64, x64 []float64, p, s int) float64 {
	t.Helper()
	x := toF[F](x64)
	for i := 0; i < s; i++ {
		x[i] = F(math.NaN())
	}
	got := make([]F, len(x))
	reference.WMA(x, p, s, got)
	xr := ratOf(x[s:])
	exact := exactWMA(append(make([]*big.Rat, s), xr...), p, s)
	bound := float64(p+2) * unitRoundoff[F]()
	if _, ok := any(got[0]).(float64); ok && bound > 1e-12 {
		t.Fatalf("test bound %g above SPEC's 1e-12", bound)
	}
	worst := 0.0
	for i := range got {
		if exact[i] == nil {
			if !math.IsNaN(float64(got[i])) {
				t.Errorf("seed %d %s p=%d s=%d: out[%d] = %v, want NaN", seed, precName[F](), p, s, i, got[i])
			}
			continue
		}
		e := ratF(exact[i])
		rel := math.Abs(float64(got[i])-e) / math.Abs(e)
		worst = max(worst, rel)
		if !(rel <= bound) {
			t.Errorf("seed %d %s p=%d s=%d: out[%d] = %v, exact %v, rel error %.3g > %.3g",
				seed, precName[F](), p, s, i, got[i], e, rel, bound)
			return worst
		}
	}
	return worst
}

// TestWMAPrefixAgreesWithDirect: on a short series (n = 300, price ~100,
// so S2 ~ 5e6 and its ulp ~ 1e-9) the prefix form in fp64 agrees with the
// direct sum to ~1e-9 relative. It is the large-n, fp32 case that breaks
// (TestStudyFIL in study_test.go).
func TestWMAPrefixAgreesWithDirect(t *testing.T) {
	for _, seed := range datatest.Seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 12))
		x := datatest.Closes(rng, 300, 100, 0.01)
		for _, p := range []int{1, 2, 5, 20, 77, 150} {
			for _, s := range []int{0, 4} {
				a, b := make([]float64, len(x)), make([]float64, len(x))
				xs := append([]float64(nil), x...)
				for i := 0; i < s; i++ {
					xs[i] = math.NaN()
				}
				reference.WMA(xs, p, s, a)
				reference.WMAPrefix(xs, p, s, b, nil)
				worst := 0.0
				for i := range a {
					if math.IsNaN(a[i]) != math.IsNaN(b[i]) {
						t.Fatalf("seed %d p=%d s=%d: out[%d] direct %v prefix %v", seed, p, s, i, a[i], b[i])
					}
					if !math.IsNaN(a[i]) {
						worst = max(worst, math.Abs(a[i]-b[i])/math.Abs(a[i]))
					}
				}
				if worst > 1e-9 {
					t.Errorf("seed %d p=%d s=%d: prefix vs direct max rel diff %.3g > 1e-9", seed, p, s, worst)
				}
			}
		}
	}
}

// TestHullAgainstExactComposition compares HMA and HMA3 in fp64 with the
// exact rational composition of exact component WMAs. HMA subtracts, so the
// error is measured against the price scale (the mean |x|, ~100), not the
// value: |got - exact| / scale <= 1e-12.
func TestHullAgainstExactComposition(t *testing.T) {
	for _, seed := range datatest.Seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 13))
		x := datatest.Closes(rng, 160, 100, 0.01)
		scale := 0.0
		for _, v := range x {
			scale += v / float64(len(x))
		}
		xr := ratOf(x)
		got := make([]float64, len(x))
		hmaLs := []int{2, 3, 4, 9, 16, 20 + rng.IntN(40)}
		hma3Ls := []int{6, 7, 12, 30, 13 + rng.IntN(60)}
		worst := 0.0
		for _, L := range hmaLs {
			if err := reference.HMA(x, L, engine.Direct, got); err != nil {
				t.Fatal(err)
			}
			worst = max(worst, compareExact(t, fmt.Sprintf("seed %d HMA(%d)", seed, L), got, exactHMA(xr, L), scale))
		}
		for _, L := range hma3Ls {
			if err := reference.HMA3(x, L, engine.Direct, got); err != nil {
				t.Fatal(err)
			}
			worst = max(worst, compareExact(t, fmt.Sprintf("seed %d HMA3(%d)", seed, L), got, exactHMA3(xr, L), scale))
		}
		t.Logf("seed %d: max |HMA/HMA3 - exact| / price scale = %.2e", seed, worst)
	}
}

func compareExact(t *testing.T, what string, got []float64, exact []*big.Rat, scale float64) float64 {
	t.Helper()
	worst := 0.0
	for i := range got {
		if exact[i] == nil {
			if !math.IsNaN(got[i]) {
				t.Errorf("%s[%d] = %v, want NaN (warm-up)", what, i, got[i])
			}
			continue
		}
		e := ratF(exact[i])
		d := math.Abs(got[i]-e) / scale
		worst = max(worst, d)
		if !(d <= 1e-12) {
			t.Errorf("%s[%d] = %v, exact %v: error / scale %.3g > 1e-12", what, i, got[i], e, d)
			return worst
		}
	}
	return worst
}

// naiveWMA is SPEC's evaluation order written as plainly as possible: for
// each output, sum k*x oldest bar first, each product rounded to F, then
// divide by p(p+1)/2. GPU kernels reproduce exactly this.
func naiveWMA[F engine.Float](x []F, p, s int) []F {
	out := make([]F, len(x))
	den := F(p * (p + 1) / 2)
	for i := range x {
		if i < s+p-1 {
			out[i] = F(math.NaN())
			continue
		}
		var acc F
		for k := 1; k <= p; k++ {
			prod := F(k) * x[i-p+k]
			acc = acc + F(prod)
		}
		out[i] = acc / den
	}
	return out
}

// TestWMABitIdenticalToNaiveLoop: reference.WMA (vector blocks, eight-wide
// loop and scalar tail alike) gives the bits of the naive sequential loop,
// in float32 and float64. Sizes straddle the 8-output and 32/64-output
// block edges; on amd64 it runs once with and once without AVX2.
func TestWMABitIdenticalToNaiveLoop(t *testing.T) {
	paths := []bool{false}
	if reference.HasAVX2() {
		paths = []bool{true, false}
	}
	defer reference.SetAVX2(reference.HasAVX2())
	for _, seed := range datatest.Seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 14))
		x := datatest.Closes(rng, 1100, 1+1000*rng.Float64(), 0.02)
		for _, avx := range paths {
			reference.SetAVX2(avx)
			for _, n := range []int{1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 257, 1100} {
				for _, p := range []int{1, 2, 3, 5, 8, 13, 50, 200} {
					for _, s := range []int{0, 1, 5} {
						if s >= n {
							continue
						}
						checkNaive[float64](t, seed, avx, x[:n], p, s)
						checkNaive[float32](t, seed, avx, x[:n], p, s)
					}
				}
			}
		}
	}
}

func checkNaive[F engine.Float](t *testing.T, seed uint64, avx bool, x64 []float64, p, s int) {
	t.Helper()
	x := toF[F](x64)
	for i := 0; i < s; i++ {
		x[i] = F(math.NaN())
	}
	got := make([]F, len(x))
	reference.WMA(x, p, s, got)
	want := naiveWMA(x, p, s)
	for i := range got {
		if !conformance.SameFloat(got[i], want[i]) {
			t.Errorf("seed %d avx2=%v %s n=%d p=%d s=%d: WMA[%d] = %v, naive loop %v", seed, avx, precName[F](), len(x), p, s, i, got[i], want[i])
			return
		}
	}
}

// naiveHMA and naiveHMA3 compose naiveWMA as SPEC writes it: 2*a - b and
// 3*a - b - c left to right, each operation rounded to F.
func naiveHMA[F engine.Float](x []F, L int) []F {
	a, b := naiveWMA(x, L/2, 0), naiveWMA(x, L, 0)
	d := make([]F, len(x))
	for i := range d {
		twoA := F(2) * a[i]
		d[i] = twoA - b[i]
	}
	return naiveWMA(d, engine.HMASqrtLen(L), min(L-1, len(x)))
}

func naiveHMA3[F engine.Float](x []F, L int) []F {
	p := L / 2
	a, b, c := naiveWMA(x, p/3, 0), naiveWMA(x, p/2, 0), naiveWMA(x, p, 0)
	d := make([]F, len(x))
	for i := range d {
		threeA := F(3) * a[i]
		ab := threeA - b[i]
		d[i] = ab - c[i]
	}
	return naiveWMA(d, p, min(p-1, len(x)))
}

// TestHullBitIdenticalToNaiveComposition: HMA and HMA3 (direct) give the
// bits of the naive composition, in float32 and float64: the contract a GPU
// kernel reproduces (SPEC "Indicators": fp64 on the GPU equals the fp64
// reference bit for bit, fp32 equals the fp32 CPU path).
func TestHullBitIdenticalToNaiveComposition(t *testing.T) {
	for _, seed := range datatest.Seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 15))
		x := datatest.Closes(rng, 700, 1+30000*rng.Float64(), 0.01)
		checkNaiveHull[float64](t, seed, x)
		checkNaiveHull[float32](t, seed, x)
	}
}

func checkNaiveHull[F engine.Float](t *testing.T, seed uint64, x64 []float64) {
	t.Helper()
	x := toF[F](x64)
	got := make([]F, len(x))
	for _, L := range []int{2, 3, 4, 9, 16, 20, 37, 100, 200} {
		if err := reference.HMA(x, L, engine.Direct, got); err != nil {
			t.Fatal(err)
		}
		if _, same := conformance.SameSeries(got, naiveHMA(x, L)); !same {
			t.Errorf("seed %d %s: HMA(%d) is not bit-identical to the naive composition", seed, precName[F](), L)
		}
	}
	for _, L := range []int{6, 7, 12, 13, 30, 61, 120, 240} {
		if err := reference.HMA3(x, L, engine.Direct, got); err != nil {
			t.Fatal(err)
		}
		if _, same := conformance.SameSeries(got, naiveHMA3(x, L)); !same {
			t.Errorf("seed %d %s: HMA3(%d) is not bit-identical to the naive composition", seed, precName[F](), L)
		}
	}
}
