package strategy

import (
	"math"
	"math/rand/v2"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// familyParity runs combo c of g over bars in fp64 (with margins) and in
// fp32 with formulation f, and judges the fp32 positions by SPEC Part 2's
// divergences at tolerance engine.DefaultBorderline.
func familyParity(t *testing.T, g Grid, c Combo, bars *engine.Bars, f Formulation) (ComboParity, []State) {
	t.Helper()
	n := bars.Len()
	in64, in32 := NewInputs[float64](bars, engine.SourceClose), NewInputs[float32](bars, engine.SourceClose)
	p64, p32, m64 := make([]State, n), make([]State, n), make([]float64, n)
	if _, err := Evaluate(g, c, in64, Direct, p64, m64); err != nil {
		t.Fatalf("%s %v fp64: %v", g, c.Values, err)
	}
	if _, err := Evaluate(g, c, in32, f, p32, nil); err != nil {
		t.Fatalf("%s %v fp32: %v", g, c.Values, err)
	}
	return JudgeCombo(Divergences(p64, p32, m64, engine.DefaultBorderline)), p64
}

// TestFamiliesParityBTC is SPEC Part 2's contrast on real minute data
// (btcusdt-1m, 43,208 bars, prices ~100,000), fp32 against fp64 for one
// combo of every family, through Evaluate (the families' one entry):
// the trap formulations collapse (a non-borderline divergence), the
// direct ones do not, and breakout, exact in fp32, moves nothing.
// Measured when written: zscore prefix 22,799 bars apart in 1,542
// divergences; zscore direct 2 bars, both borderline (margins 4.8e-9,
// 1.1e-7); cross sma prefix collapses, direct holds; breakout 0 bars;
// rsi 0 bars; hull direct 0 non-borderline.
func TestFamiliesParityBTC(t *testing.T) {
	bars := btcBars(t)
	cases := []struct {
		family   string
		params   map[string]string
		f        Formulation
		collapse bool
	}{
		{"zscore", map[string]string{"length": "20", "entry": "2", "exit": "0"}, Prefix, true},
		{"zscore", map[string]string{"length": "20", "entry": "2", "exit": "0"}, Direct, false},
		{"cross", map[string]string{"fast": "sma:10", "slow": "sma:50"}, Prefix, true},
		{"cross", map[string]string{"fast": "sma:10", "slow": "sma:50"}, Direct, false},
		{"cross", map[string]string{"fast": "ema:12", "slow": "sma:100"}, Direct, false},
		{"breakout", map[string]string{"entry": "20", "exit": "10"}, Direct, false},
		{"rsi", map[string]string{"length": "14", "lower": "30", "upper": "70"}, Direct, false},
		// Short RSI lengths: differencing prices rounded to fp32 (the prefix
		// form) moves decisions non-borderline near 107,000 (2^-7 spacing
		// against cent moves); the moves rounded once (direct) do not.
		{"rsi", map[string]string{"length": "2", "lower": "30", "upper": "70"}, Prefix, true},
		{"rsi", map[string]string{"length": "2", "lower": "30", "upper": "70"}, Direct, false},
		{"hull", map[string]string{"hma": "50", "hma3": "60"}, Direct, false},
	}
	for _, tc := range cases {
		g, err := NewGrid(tc.family, tc.params, false)
		if err != nil {
			t.Fatal(err)
		}
		if g.Len() != 1 {
			t.Fatalf("%s: %d combos, want 1", g, g.Len())
		}
		cp, p64 := familyParity(t, g, g.At(0), bars, tc.f)
		changes := 0
		for i := 1; i < len(p64); i++ {
			if p64[i] != p64[i-1] {
				changes++
			}
		}
		if changes < 20 {
			t.Fatalf("%s: the fp64 run changes state %d times: too quiet to judge", g, changes)
		}
		t.Logf("%s formulation %v: %d state changes, %d bars apart in %d divergences, %d non-borderline", g, tc.f, changes, cp.FlipBars, cp.Divergences, cp.NonBorderline)
		if cp.Collapsed != tc.collapse {
			t.Errorf("%s formulation %v: collapsed %v, want %v (%d bars apart, %d divergences, %d non-borderline)",
				g, tc.f, cp.Collapsed, tc.collapse, cp.FlipBars, cp.Divergences, cp.NonBorderline)
		}
		// rsi's trap is small (2 non-borderline divergences, 3 bars, when
		// written); the running-sum traps move hundreds of bars.
		if tc.collapse && tc.family != "rsi" && cp.FlipBars < 100 {
			t.Errorf("%s: the trap moved only %d bars", g, cp.FlipBars)
		}
	}
}

// TestEvaluateHullIsTheSweepPath: hull through Evaluate (the plain
// statement: Cross of HMA3(close) against HMA(source)) gives the states
// of the sweep's optimised path (reference.HMA, HMA3, Positions) bit for
// bit, and BacktestPositions over them the metrics of reference.Backtest,
// in both precisions, on fresh random bars.
func TestEvaluateHullIsTheSweepPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	n := 3000
	bars := &engine.Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n), Low: make([]float64, n), Close: make([]float64, n)}
	p := 100.0
	for i := range n {
		o := p
		p *= math.Exp(0.01 * rng.NormFloat64())
		bars.Time[i], bars.Open[i], bars.Close[i] = int64(i)*60, o, p
		bars.High[i], bars.Low[i] = max(o, p)*(1+0.002*rng.Float64()), min(o, p)*(1-0.002*rng.Float64())
	}
	for _, src := range []engine.Source{engine.SourceClose, engine.SourceHLC3} {
		for _, lens := range [][2]string{{"20", "30"}, {"55", "11"}, {"9", "100"}} {
			g, err := NewGrid("hull", map[string]string{"hma": lens[0], "hma3": lens[1]}, false)
			if err != nil {
				t.Fatal(err)
			}
			checkHull[float64](t, g, bars, src)
			checkHull[float32](t, g, bars, src)
		}
	}
}

func checkHull[F Float](t *testing.T, g Grid, bars *engine.Bars, src engine.Source) {
	t.Helper()
	c := g.At(0)
	n := bars.Len()
	in := NewInputs[F](bars, src)
	st := make([]State, n)
	first, err := Evaluate(g, c, in, Direct, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	lh, l3 := int(c.Values[0].Int()), int(c.Values[1].Int())
	h, h3 := make([]F, n), make([]F, n)
	if err := reference.HMA(in.Src, lh, engine.Direct, h); err != nil {
		t.Fatal(err)
	}
	if err := reference.HMA3(in.Close, l3, engine.Direct, h3); err != nil {
		t.Fatal(err)
	}
	if w := max(engine.HMAWarmup(lh), engine.HMA3Warmup(l3)); first != w {
		t.Fatalf("%s: first valid bar %d, Part 1's max(W, W3) %d", g, first, w)
	}
	want := make([]State, n)
	reference.Positions(h, h3, first, engine.LongShort, 0, want)
	trades := 0
	for i := range st {
		if st[i] != want[i] {
			t.Fatalf("%s %T source %v bar %d: state %d, the sweep's %d", g, F(0), src, i, st[i], want[i])
		}
		if i > 0 && st[i] != st[i-1] {
			trades++
		}
	}
	if trades < 5 {
		t.Fatalf("%s: %d state changes: too quiet", g, trades)
	}
	r := kernels.BarReturns[F](bars)
	prm := engine.Params{Fee: 0.001, Mode: engine.LongShort, BarsPerYear: 525600}
	var sc reference.Scratch[F]
	got, ref := reference.BacktestPositions(st, r, first, prm, &sc), reference.Backtest(h, h3, r, first, prm, &sc)
	if got != ref {
		t.Fatalf("%s %T: metrics %+v, Backtest's %+v", g, F(0), got, ref)
	}
}
