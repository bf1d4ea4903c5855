package strategy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// sweepCase is a small grid of one family and the formulation to sweep it
// with.
type sweepCase struct {
	family        string
	params        map[string]string
	fastBelowSlow bool
	f             Formulation
}

var sweepCases = []sweepCase{
	{"hull", map[string]string{"hma": "20:60:20", "hma3": "30:90:30"}, false, Direct},
	{"cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}, false, Direct},
	{"cross", map[string]string{"fast": "sma:5:15:5", "slow": "wma:20:40:10"}, false, Prefix},
	{"cross", map[string]string{"fast": "sma:10:40:10", "slow": "hma:20:50:10"}, true, Direct},
	{"cross", map[string]string{"fast": "price", "slow": "tema:10:30:10"}, false, Direct},
	{"zscore", map[string]string{"length": "10:30:10", "entry": "1.5:2.5:0.5", "exit": "0:1:0.5"}, false, Direct},
	{"zscore", map[string]string{"length": "10:30:10", "entry": "1.5:2.5:0.5", "exit": "0:1:0.5"}, false, Prefix},
	{"breakout", map[string]string{"entry": "10:30:10", "exit": "5:20:5"}, false, Direct},
	{"rsi", map[string]string{"length": "7:21:7", "lower": "25:35:5", "upper": "65:75:5"}, false, Direct},
}

var sweepParams = engine.Params{Fee: 0.00045, Mode: engine.LongShort, BarsPerYear: 525600}

// sameMetrics says whether a and b agree field by field, bit for bit (a
// NaN equal to a NaN).
func sameMetrics(a, b engine.Metrics) (string, bool) {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		fa, fb := va.Field(i), vb.Field(i)
		switch fa.Kind() {
		case reflect.Float64:
			x, y := fa.Float(), fb.Float()
			if math.Float64bits(x) != math.Float64bits(y) && !(math.IsNaN(x) && math.IsNaN(y)) {
				return fmt.Sprintf("%s %v, want %v", va.Type().Field(i).Name, x, y), false
			}
		default:
			if fa.Int() != fb.Int() {
				return fmt.Sprintf("%s %d, want %d", va.Type().Field(i).Name, fa.Int(), fb.Int()), false
			}
		}
	}
	return "", true
}

// perCombo is the metrics of combos [first, first+k) by Evaluate and
// BacktestPositions, one combo at a time.
func perCombo[F Float](t *testing.T, g Grid, in *Inputs[F], r []F, f Formulation, first, k int) []engine.Metrics {
	t.Helper()
	pos := make([]State, len(in.Close))
	var sc reference.Scratch[F]
	want := make([]engine.Metrics, k)
	for i := range want {
		fv, err := Evaluate(g, g.At(first+i), in, f, pos, nil)
		if err != nil {
			t.Fatalf("%s combo %d: %v", g, first+i, err)
		}
		want[i] = reference.BacktestPositions(pos, r, fv, sweepParams, &sc)
	}
	return want
}

func checkSweep[F Float](t *testing.T, tc sweepCase, in *Inputs[F], r []F) {
	t.Helper()
	g, err := NewGrid(tc.family, tc.params, tc.fastBelowSlow)
	if err != nil {
		t.Fatal(err)
	}
	want := perCombo(t, g, in, r, tc.f, 0, g.Len())
	traded := 0
	for _, m := range want {
		if m.TotalTrades > 5 {
			traded++
		}
	}
	if traded < g.Len()/2 {
		t.Fatalf("%s: %d of %d combos trade more than 5 times: too quiet", g, traded, g.Len())
	}
	ranges := [][2]int{{0, g.Len()}, {1, g.Len() - 1}, {g.Len() / 3, g.Len() / 2}, {g.Len() - 1, 1}}
	for _, workers := range []int{1, 3} {
		for _, rg := range ranges {
			out := make([]engine.Metrics, rg[1])
			if err := Sweep(context.Background(), g, in, r, nil, tc.f, sweepParams, rg[0], out, workers); err != nil {
				t.Fatalf("%s %T workers %d range %v: %v", g, F(0), workers, rg, err)
			}
			for k := range out {
				if why, ok := sameMetrics(out[k], want[rg[0]+k]); !ok {
					t.Fatalf("%s %T formulation %v workers %d range %v combo %d %v: %s", g, F(0), tc.f, workers, rg, rg[0]+k, g.At(rg[0]+k).Values, why)
				}
			}
		}
	}
}

// TestSweepIsEvaluate: Sweep's metrics are, field by field, those of
// Evaluate and BacktestPositions combo by combo, for a grid of every
// family (the prefix formulation for cross and zscore, the fast < slow
// restriction), fp32 and fp64, with 1 and 3 workers, over the whole grid
// and sub-ranges, on the first 5,000 bars of btcusdt-1m.
func TestSweepIsEvaluate(t *testing.T) {
	all := btcBars(t)
	bars := all.Slice(0, 5000)
	in64, in32 := NewInputs[float64](&bars, engine.SourceClose), NewInputs[float32](&bars, engine.SourceClose)
	r64, r32 := kernels.BarReturns[float64](&bars), kernels.BarReturns[float32](&bars)
	for _, tc := range sweepCases {
		checkSweep(t, tc, in64, r64)
		checkSweep(t, tc, in32, r32)
	}
	// another source
	inH := NewInputs[float32](&bars, engine.SourceHLC3)
	checkSweep(t, sweepCases[0], inH, r32)
	checkSweep(t, sweepCases[5], inH, r32)
}

// TestSweepErrors: a range outside the grid, returns of the wrong length
// and a family's refusal are errors.
func TestSweepErrors(t *testing.T) {
	all := btcBars(t)
	bars := all.Slice(0, 500)
	in := NewInputs[float64](&bars, engine.SourceClose)
	r := kernels.BarReturns[float64](&bars)
	g, err := NewGrid("rsi", map[string]string{"length": "7:14:7"}, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := Sweep(ctx, g, in, r, nil, Direct, sweepParams, 1, make([]engine.Metrics, g.Len()), 2); err == nil {
		t.Error("a range past the grid: no error")
	}
	if err := Sweep(ctx, g, in, r, nil, Direct, sweepParams, -1, make([]engine.Metrics, 1), 2); err == nil {
		t.Error("first -1: no error")
	}
	if err := Sweep(ctx, g, in, r[1:], nil, Direct, sweepParams, 0, make([]engine.Metrics, 1), 2); err == nil {
		t.Error("short returns: no error")
	}
	if err := Sweep(ctx, g, in, r, nil, Direct, sweepParams, 0, nil, 2); err != nil {
		t.Errorf("an empty range: %v", err)
	}
	inH := NewInputs[float64](&bars, engine.SourceHL2)
	gb, err := NewGrid("breakout", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var pe *ParamError
	if err := Sweep(ctx, gb, inH, r, nil, Direct, sweepParams, 0, make([]engine.Metrics, gb.Len()), 3); !errors.As(err, &pe) || pe.Param != "source" {
		t.Errorf("breakout on hl2: %v, want the source's *ParamError", err)
	}
}

// TestSweepCancel: a cancelled context is returned at once, and a
// cancellation during a long sweep (sma:5:200:1 x sma:20:400:1 on every bar
// of btcusdt-1m) stops it promptly.
func TestSweepCancel(t *testing.T) {
	bars := btcBars(t)
	in := NewInputs[float32](bars, engine.SourceClose)
	r := kernels.BarReturns[float32](bars)
	g, err := NewGrid("cross", map[string]string{"fast": "sma:5:200:1", "slow": "sma:20:400:1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]engine.Metrics, g.Len())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sweep(ctx, g, in, r, nil, Direct, sweepParams, 0, out, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	t0 := time.Now()
	go func() { done <- Sweep(ctx, g, in, r, nil, Direct, sweepParams, 0, out, 2) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled during: %v, want context.Canceled", err)
		}
		t.Logf("returned %v after the start, %d combos in the grid", time.Since(t0), g.Len())
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5 s after the cancellation")
	}
}

// BenchmarkSweep: a cross grid (fast ema:5:100:5 x slow sma:20:200:10,
// 380 combos) and hull's default grid (hma 20:200:20 x hma3 30:240:30, 80
// combos) on every bar of btcusdt-1m, fp32 and fp64, in ns per combo-bar;
// "positions" is reference.BacktestPositions alone over one combo's states
// (the floor Sweep adds its series and state machines to), and "evaluate"
// the same grid by Evaluate + BacktestPositions per combo on one worker
// (no sharing), for contrast.
func BenchmarkSweep(b *testing.B) {
	bars := btcBars(b)
	grids := []struct {
		name, family string
		params       map[string]string
	}{
		{"cross", "cross", map[string]string{"fast": "ema:5:100:5", "slow": "sma:20:200:10"}},
		{"hull", "hull", map[string]string{"hma": "20:200:20", "hma3": "30:240:30"}},
	}
	for _, gr := range grids {
		g, err := NewGrid(gr.family, gr.params, false)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(gr.name+"/fp32", func(b *testing.B) { benchSweep[float32](b, g, bars, 0) })
		b.Run(gr.name+"/fp64", func(b *testing.B) { benchSweep[float64](b, g, bars, 0) })
		b.Run(gr.name+"/fp32/workers1", func(b *testing.B) { benchSweep[float32](b, g, bars, 1) })
		b.Run(gr.name+"/fp32/evaluate", func(b *testing.B) { benchEvaluate[float32](b, g, bars) })
	}
	for _, prec := range []string{"fp32", "fp64"} {
		b.Run("positions/"+prec, func(b *testing.B) {
			g, _ := NewGrid("cross", map[string]string{"fast": "ema:20", "slow": "sma:100"}, false)
			if prec == "fp32" {
				benchPositions[float32](b, g, bars)
			} else {
				benchPositions[float64](b, g, bars)
			}
		})
	}
}

func benchSweep[F Float](b *testing.B, g Grid, bars *engine.Bars, workers int) {
	in := NewInputs[F](bars, engine.SourceClose)
	r := kernels.BarReturns[F](bars)
	out := make([]engine.Metrics, g.Len())
	b.ResetTimer()
	for b.Loop() {
		if err := Sweep(context.Background(), g, in, r, nil, Direct, sweepParams, 0, out, workers); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.Len()*bars.Len()), "ns/combo-bar")
}

func benchEvaluate[F Float](b *testing.B, g Grid, bars *engine.Bars) {
	in := NewInputs[F](bars, engine.SourceClose)
	r := kernels.BarReturns[F](bars)
	pos := make([]State, bars.Len())
	var sc reference.Scratch[F]
	b.ResetTimer()
	for b.Loop() {
		for i := range g.Len() {
			fv, err := Evaluate(g, g.At(i), in, Direct, pos, nil)
			if err != nil {
				b.Fatal(err)
			}
			reference.BacktestPositions(pos, r, fv, sweepParams, &sc)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.Len()*bars.Len()), "ns/combo-bar")
}

func benchPositions[F Float](b *testing.B, g Grid, bars *engine.Bars) {
	in := NewInputs[F](bars, engine.SourceClose)
	r := kernels.BarReturns[F](bars)
	pos := make([]State, bars.Len())
	fv, err := Evaluate(g, g.At(0), in, Direct, pos, nil)
	if err != nil {
		b.Fatal(err)
	}
	var sc reference.Scratch[F]
	b.ResetTimer()
	for b.Loop() {
		reference.BacktestPositions(pos, r, fv, sweepParams, &sc)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(bars.Len()), "ns/combo-bar")
}

// TestSweepSharesSeries: over a grid, the cache computes each series once:
// as many entries as distinct series, whatever the number of combos.
func TestSweepSharesSeries(t *testing.T) {
	all := btcBars(t)
	bars := all.Slice(0, 1000)
	in := NewInputs[float32](&bars, engine.SourceClose)
	fam := func(name string) Family { f, _ := Lookup(name); return f }
	for _, tc := range []struct {
		sweepCase
		series int
	}{
		{sweepCases[0], 3 + 3}, // hma 3 lengths, hma3 3
		{sweepCases[1], 3 + 3}, // ema 3, sma 3
		{sweepCases[5], 3},     // zscore: one entry (m, sd) per length
		{sweepCases[7], 2 * 5}, // breakout: lengths 5, 10, 15, 20, 30 on high and low
		{sweepCases[8], 3},     // rsi: per length
	} {
		g, err := NewGrid(tc.family, tc.params, tc.fastBelowSlow)
		if err != nil {
			t.Fatal(err)
		}
		sc := newSeriesCache[float32]()
		pos := make([]State, bars.Len())
		for i := range g.Len() {
			if _, err := evaluate(fam(tc.family), g.At(i), in, tc.f, pos, nil, sc); err != nil {
				t.Fatal(err)
			}
		}
		if sc.len() != tc.series {
			t.Errorf("%s: %d series cached for %d combos, want %d", g, sc.len(), g.Len(), tc.series)
		}
	}
}
