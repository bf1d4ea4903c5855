package strategy

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// rsiRun runs RSI with every output and fails the test on an error.
func rsiRun[F Float](t testing.TB, x []F, L int, lower, upper F) (int, []State, []float64, []F) {
	t.Helper()
	pos, margin, r := make([]State, len(x)), make([]float64, len(x)), make([]F, len(x))
	first, err := RSI(x, L, lower, upper, pos, margin, r)
	if err != nil {
		t.Fatal(err)
	}
	return first, pos, margin, r
}

func rsiNear(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}

// TestRSIHand checks hand-computed cases, L = 2, lower 30, upper 70.
func TestRSIHand(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name         string
		x            []float64
		lower, upper float64
		pos          []State
		rsi, margin  []float64
	}{{
		// d = -, +2, -1, 0, +3, -6.
		// i=2 (Wilder's seed at i = L, from d[1], d[2]): ag = (2+0)/2 = 1,
		//   al = (0+1)/2 = 0.5, ag/al = 2, RSI = 100 - 100/3 = 66.67: flat;
		//   margin from flat min(36.67, 3.33)/100 = 0.0333.
		// i=3: d = 0: ag = (1*1+0)/2 = 0.5, al = 0.25, RSI 66.67 again: flat.
		// i=4: d = +3: ag = (0.5+3)/2 = 1.75, al = 0.125, ag/al = 14,
		//   RSI = 100 - 100/15 = 93.33 > 70: -1; margin (93.33-70)/100.
		// i=5: d = -6: ag = 0.875, al = (0.125+6)/2 = 3.0625, ag/al = 2/7,
		//   RSI = 100 - 700/9 = 200/9 = 22.22 < 30: +1 (reversal); margin
		//   from -1 |22.22-30|/100.
		name: "seed and reversals", x: []float64{10, 12, 11, 11, 14, 8}, lower: 30, upper: 70,
		pos:    []State{0, 0, 0, 0, -1, 1},
		rsi:    []float64{nan, nan, 200.0 / 3, 200.0 / 3, 1400.0 / 15, 200.0 / 9},
		margin: []float64{nan, nan, (70 - 200.0/3) / 100, (70 - 200.0/3) / 100, (1400.0/15 - 70) / 100, (30 - 200.0/9) / 100},
	}, {
		// al = 0 < ag: RSI 100. i=2: ag = 1, al = 0: 100 > 70: -1, margin
		// from flat (100-70)/100 = 0.3; i=3: ag = (1+1)/2 = 1, al = 0: 100,
		// from -1 only lower counts: (100-30)/100 = 0.7.
		name: "al = 0", x: []float64{1, 2, 3, 4}, lower: 30, upper: 70,
		pos: []State{0, 0, -1, -1}, rsi: []float64{nan, nan, 100, 100}, margin: []float64{nan, nan, 0.3, 0.7},
	}, {
		// Both averages 0 at the seed: no comparison, state 0 kept, RSI
		// NaN, margin 0. i=3: d = -1: ag = 0, al = 0.5: RSI = 100 - 100/1
		// = 0 < 30: +1, margin (30-0)/100 from flat.
		name: "both zero at seed", x: []float64{5, 5, 5, 4}, lower: 30, upper: 70,
		pos: []State{0, 0, 0, 1}, rsi: []float64{nan, nan, nan, 0}, margin: []float64{nan, nan, 0, 0.3},
	}, {
		// Both averages 0 after a short: d[1] = 2 ulp of the smallest
		// subnormal; i=2: ag = (1e-323 + 0)/2 = 5e-324 (exact), al = 0:
		// RSI 100: -1. i=3: ag = (5e-324*1 + 0)/2 rounds to 0 (half to
		// even), al = 0: no comparison, -1 kept (TA-Lib's RSI of 0 there
		// would reverse to +1), margin 0.
		name: "both zero keeps -1", x: []float64{0, 2 * math.SmallestNonzeroFloat64, 2 * math.SmallestNonzeroFloat64, 2 * math.SmallestNonzeroFloat64},
		lower: 30, upper: 70,
		pos: []State{0, 0, -1, -1}, rsi: []float64{nan, nan, 100, nan}, margin: []float64{nan, nan, 0.3, 0},
	}, {
		// RSI exactly at a threshold does not cross it (strict <, >):
		// i=2: ag = al = 0.5: RSI = 100 - 100/2 = 50 = lower: flat, margin
		// 0. i=3: d = -1: ag = 0.25, al = 0.75, ag/al = 1/3, RSI = 100 - 75
		// = 25 < 50: +1, margin 0.25. i=4: d = +3: ag = 1.625, al = 0.375,
		// ag/al = 13/3, RSI = 100 - 300/16 = 81.25 > 60: -1, margin from +1
		// (81.25-60)/100. i=5: d = 0: ag = 0.8125, al = 0.1875, RSI 81.25
		// again: -1 kept, from -1 the margin is lower's (81.25-50)/100.
		name: "at the threshold", x: []float64{10, 11, 10, 9, 12, 12}, lower: 50, upper: 60,
		pos: []State{0, 0, 0, 1, -1, -1}, rsi: []float64{nan, nan, 50, 25, 81.25, 81.25},
		margin: []float64{nan, nan, 0, 0.25, 0.2125, 0.3125},
	}}
	for _, c := range cases {
		first, pos, margin, r := rsiRun(t, c.x, 2, c.lower, c.upper)
		if first != 2 {
			t.Errorf("%s: first %d, want 2", c.name, first)
		}
		for i := range c.x {
			if pos[i] != c.pos[i] || !rsiNear(r[i], c.rsi[i], 1e-12) || !rsiNear(margin[i], c.margin[i], 1e-14) {
				t.Errorf("%s: bar %d: pos %d rsi %v margin %v, want %d %v %v", c.name, i, pos[i], r[i], margin[i], c.pos[i], c.rsi[i], c.margin[i])
			}
		}
	}
	// Fewer than L+1 bars: no valid bar, every state 0.
	pos := []State{7, 7}
	if first, err := RSI([]float64{1, 2}, 2, 30, 70, pos, nil, nil); err != nil || first != 2 || pos[0] != 0 || pos[1] != 0 {
		t.Errorf("2 bars: first %d err %v pos %v, want 2, nil, [0 0]", first, err, pos)
	}
}

func TestRSIErrors(t *testing.T) {
	x := make([]float64, 10)
	pos := make([]State, 10)
	for _, c := range []struct {
		L            int
		lower, upper float64
		param        string
	}{
		{1, 30, 70, "length"}, {0, 30, 70, "length"}, {14, 0, 70, "lower"}, {14, -5, 70, "lower"},
		{14, 100, 70, "lower"}, {14, math.NaN(), 70, "lower"}, {14, 30, 30, "upper"}, {14, 30, 20, "upper"},
		{14, 30, 100, "upper"}, {14, 30, math.NaN(), "upper"},
	} {
		_, err := RSI(x, c.L, c.lower, c.upper, pos, nil, nil)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != c.param || !errors.Is(err, ErrParam) {
			t.Errorf("RSI(L %d, %v, %v): %v, want a *ParamError for %s", c.L, c.lower, c.upper, err, c.param)
		}
	}
	var pe *ParamError
	if _, err := RSI(x, 2, 30, 70, pos[:9], nil, nil); err == nil || errors.As(err, &pe) {
		t.Errorf("short pos: %v, want a plain error", err)
	}
	if _, err := RSI(x, 2, 30, 70, pos, make([]float64, 3), nil); err == nil {
		t.Error("short margin: no error")
	}
	if _, err := RSI(x, 2, 30, 70, pos, nil, make([]float64, 11)); err == nil {
		t.Error("long rsiOut: no error")
	}
}

// rsiWalk is a random walk of n prices from 100, relative steps of about
// 1e-3, a tenth of them unchanged (d = 0).
func rsiWalk(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, n)
	x[0] = 100
	for i := 1; i < n; i++ {
		x[i] = x[i-1]
		if rng.IntN(10) != 0 {
			x[i] *= 1 + 1e-3*rng.NormFloat64()
		}
	}
	return x
}

// rsiRef is an independent fp64 RSI: gains and losses as arrays, the
// seed as a mean, Pine's ta.rma step a*g + (1-a)*prev with a = 1/L, and
// TA-Lib's 100*ag/(ag+al); NaN where both are 0 and before L.
func rsiRef(x []float64, L int) []float64 {
	n := len(x)
	g, l := make([]float64, n), make([]float64, n)
	for i := 1; i < n; i++ {
		g[i] = math.Max(x[i]-x[i-1], 0)
		l[i] = math.Max(x[i-1]-x[i], 0)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	var ag, al float64
	a := 1 / float64(L)
	for i := L; i < n; i++ {
		if i == L {
			for k := 1; k <= L; k++ {
				ag, al = ag+g[k], al+l[k]
			}
			ag, al = ag/float64(L), al/float64(L)
		} else {
			ag, al = a*g[i]+(1-a)*ag, a*l[i]+(1-a)*al
		}
		if ag+al > 0 {
			out[i] = 100 * ag / (ag + al)
		}
	}
	return out
}

// rsiMachine is the state machine written as a plain switch on the state.
func rsiMachine(r []float64, lower, upper float64) []State {
	pos := make([]State, len(r))
	var st State
	for i, v := range r {
		if !math.IsNaN(v) {
			switch st {
			case 0:
				if v < lower {
					st = 1
				} else if v > upper {
					st = -1
				}
			case 1:
				if v > upper {
					st = -1
				}
			case -1:
				if v < lower {
					st = 1
				}
			}
		}
		pos[i] = st
	}
	return pos
}

// TestRSIReference checks the fp64 RSI against rsiRef (1e-10) and the
// positions against rsiMachine over the RSI returned, exactly, and the
// margins against their definition, on random walks; the fp32 run's
// arithmetic against a float32 recomputation written out step by step,
// bit for bit.
func TestRSIReference(t *testing.T) {
	x := rsiWalk(1, 5000)
	x32 := make([]float32, len(x))
	for i, v := range x {
		x32[i] = float32(v)
	}
	for _, c := range []struct {
		L            int
		lower, upper float64
	}{{2, 30, 70}, {3, 20, 80}, {14, 30, 70}, {14, 45, 55}, {50, 48, 52}} {
		first, pos, margin, r := rsiRun(t, x, c.L, c.lower, c.upper)
		if first != c.L {
			t.Fatalf("L %d: first %d", c.L, first)
		}
		ref := rsiRef(x, c.L)
		worst := 0.0
		for i := range x {
			if !rsiNear(r[i], ref[i], 1e-10) {
				t.Fatalf("L %d bar %d: rsi %v, reference %v", c.L, i, r[i], ref[i])
			}
			if !math.IsNaN(r[i]) {
				worst = max(worst, math.Abs(r[i]-ref[i]))
			}
		}
		want := rsiMachine(r, c.lower, c.upper)
		flips := 0
		for i := range x {
			if pos[i] != want[i] {
				t.Fatalf("L %d bar %d: pos %d, machine %d", c.L, i, pos[i], want[i])
			}
			if i > 0 && pos[i] != pos[i-1] {
				flips++
			}
			if i >= first {
				var m float64
				switch prev := pos[i-1]; prev {
				case 0:
					m = math.Min(math.Abs(r[i]-c.lower), math.Abs(r[i]-c.upper)) / 100
				case 1:
					m = math.Abs(r[i]-c.upper) / 100
				default:
					m = math.Abs(r[i]-c.lower) / 100
				}
				if margin[i] != m {
					t.Fatalf("L %d bar %d: margin %v, want %v", c.L, i, margin[i], m)
				}
			}
		}
		if flips < 10 {
			t.Errorf("L %d (%v, %v): %d state changes over %d bars: the case tests little", c.L, c.lower, c.upper, flips, len(x))
		}
		t.Logf("L %d (%v, %v): %d state changes, max |rsi - reference| %.2g", c.L, c.lower, c.upper, flips, worst)

		// fp32: the same arithmetic in float32, written out.
		_, _, _, r32 := rsiRun(t, x32, c.L, float32(c.lower), float32(c.upper))
		var ag, al float32
		fL, fL1 := float32(c.L), float32(c.L-1)
		for i := 1; i < len(x32); i++ {
			d := x32[i] - x32[i-1]
			g, l := float32(math.Max(float64(d), 0)), float32(math.Max(float64(-d), 0))
			switch {
			case i < c.L:
				ag, al = ag+g, al+l
				continue
			case i == c.L:
				ag, al = (ag+g)/fL, (al+l)/fL
			default:
				p, q := ag*fL1, al*fL1
				ag, al = (p+g)/fL, (q+l)/fL
			}
			q := ag / al
			q1 := 1 + q
			q2 := float32(100) / q1
			want := float32(100) - q2
			if r32[i] != want {
				t.Fatalf("fp32 L %d bar %d: rsi %v, step by step %v", c.L, i, r32[i], want)
			}
		}
	}
}

// rsiBTC is the embedded btcusdt-1m dataset's close.
func rsiBTC(t testing.TB) []float64 { return btcBars(t).Close }

// TestRSIParityBTC runs RSI(14, 30, 70) over btcusdt-1m's close in fp32
// and fp64 and judges the divergences at tol 1e-5: none may be
// non-borderline. Measured (43,208 bars): 384 fp64 state changes, max
// |rsi32 - rsi64| 0.0503 (RSI points: float32's ulp at BTC's ~1e5 is
// 2^-7, near a cent, so d = x[i]-x[i-1] of a one-cent move is off by up to
// half), 0 divergences. (Over L = 2..60 with (30, 70), (20, 80), (45, 55),
// (40, 60), 236 combos: 24 divergences over 52 bars, 11 non-borderline,
// root margins 1.06e-5 to 0.0294, 6 of them at L = 2: tol 1e-5 is tight for
// the RSI scale in fp32; not asserted here.)
func TestRSIParityBTC(t *testing.T) {
	x := rsiBTC(t)
	x32 := make([]float32, len(x))
	for i, v := range x {
		x32[i] = float32(v)
	}
	_, p64, m64, r64 := rsiRun(t, x, 14, 30, 70)
	p32 := make([]State, len(x))
	r32 := make([]float32, len(x))
	if _, err := RSI(x32, 14, 30, 70, p32, nil, r32); err != nil {
		t.Fatal(err)
	}
	worst, changes := 0.0, 0
	for i := range x {
		if !math.IsNaN(r64[i]) {
			worst = max(worst, math.Abs(float64(r32[i])-r64[i]))
		}
		if i > 0 && p64[i] != p64[i-1] {
			changes++
		}
	}
	ds := Divergences(p64, p32, m64, 1e-5)
	cp := JudgeCombo(ds)
	t.Logf("%d bars, %d fp64 state changes, max |rsi32 - rsi64| %.3g; %d divergences over %d bars, %d non-borderline; %+v",
		len(x), changes, worst, cp.Divergences, cp.FlipBars, cp.NonBorderline, ds)
	if worst == 0 || worst > 0.1 {
		t.Errorf("max |rsi32 - rsi64| %g, measured 0.0503 (0: the fp32 run is not fp32)", worst)
	}
	if changes != 384 {
		t.Errorf("%d fp64 state changes, measured 384", changes)
	}
	if cp.NonBorderline != 0 || cp.Collapsed {
		t.Errorf("non-borderline divergences: %+v", ds)
	}
}

func BenchmarkRSI(b *testing.B) {
	x := rsiBTC(b)
	x32 := make([]float32, len(x))
	for i, v := range x {
		x32[i] = float32(v)
	}
	pos, margin, r := make([]State, len(x)), make([]float64, len(x)), make([]float64, len(x))
	b.Run("fp64", func(b *testing.B) {
		for b.Loop() {
			if _, err := RSI(x, 14, 30, 70, pos, margin, r); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/bar")
	})
	b.Run("fp32", func(b *testing.B) {
		r32 := make([]float32, len(x))
		for b.Loop() {
			if _, err := RSI(x32, 14, 30, 70, pos, nil, r32); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/bar")
	})
}
