package reference_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// TestSourceSeriesAndReturnsHand: the swept series and the bar returns on
// a three-bar example.
//
//	high = 3, 5, 4; low = 2, 4, 3; close = 2.5, 5, 4; open = 2, 4, 4
//	hl2   = (3+2)/2, (5+4)/2, (4+3)/2           = 2.5, 4.5, 3.5
//	hlc3  = (3+2+2.5)/3, (5+4+5)/3, (4+3+4)/3    = 2.5, 14/3, 11/3
//	ohlc4 = (2+3+2+2.5)/4, (4+5+4+5)/4, (4+4+3+4)/4 = 2.375, 4.5, 3.75
//	r     = 0, 5/2.5 - 1, 4/5 - 1                 = 0, 1, -0.2
func TestSourceSeriesAndReturnsHand(t *testing.T) {
	b := &engine.Bars{Open: []float64{2, 4, 4}, High: []float64{3, 5, 4}, Low: []float64{2, 4, 3}, Close: []float64{2.5, 5, 4}}
	for _, c := range []struct {
		src  engine.Source
		want []float64
	}{
		{engine.SourceClose, []float64{2.5, 5, 4}},
		{engine.SourceHL2, []float64{2.5, 4.5, 3.5}},
		{engine.SourceHLC3, []float64{2.5, 14.0 / 3, 11.0 / 3}},
		{engine.SourceOHLC4, []float64{2.375, 4.5, 3.75}},
	} {
		got := kernels.SourceSeries[float64](b, c.src)
		for i := range got {
			if !conformance.Near(got[i], c.want[i], 1e-15, 0) {
				t.Errorf("%s[%d] = %v, want %v", c.src, i, got[i], c.want[i])
			}
		}
		got32 := kernels.SourceSeries[float32](b, c.src)
		for i := range got32 {
			if !conformance.Near(float64(got32[i]), c.want[i], 1e-7, 0) {
				t.Errorf("fp32 %s[%d] = %v, want %v", c.src, i, got32[i], c.want[i])
			}
		}
	}
	r := kernels.BarReturns[float64](b)
	if r[0] != 0 || r[1] != 1 || !conformance.Near(r[2], -0.2, 1e-15, 0) {
		t.Errorf("BarReturns = %v, want [0 1 -0.2]", r)
	}
	// fp32: each close rounded to float32 first, then divided in float32.
	r32 := kernels.BarReturns[float32](b)
	if want := float32(4)/float32(5) - 1; r32[2] != want {
		t.Errorf("fp32 BarReturns[2] = %v, want %v", r32[2], want)
	}
}

// TestBuildIndicatorsMatchesPerLength: the shared, parallel build gives the
// same bits as calling HMA and HMA3 once per length, for the close and the
// hl2 source (h from the source, h3 always from close), direct and prefix,
// float32 and float64; each h3 is built once per p = floor(L/2) and held
// under both lengths of its p (an HMA3 range of step 1 has both in it).
func TestBuildIndicatorsMatchesPerLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	b := datatest.AroundCloses(rng, datatest.Closes(rng, 1500, 30000, 0.002))
	grids := map[string]engine.Grid{
		"hma3 step 6": {HMA: engine.Range{Start: 2, Stop: 44, Step: 3}, HMA3: engine.Range{Start: 6, Stop: 66, Step: 6}},
		"hma3 step 1": {HMA: engine.Range{Start: 2, Stop: 44, Step: 14}, HMA3: engine.Range{Start: 7, Stop: 20, Step: 1}},
	}
	for name, g := range grids {
		for _, src := range []engine.Source{engine.SourceClose, engine.SourceHL2} {
			for _, form := range []engine.Formulation{engine.Direct, engine.Prefix} {
				t.Run(fmt.Sprintf("%s/%s/%s", name, src, form), func(t *testing.T) {
					checkBuild[float64](t, b, g, src, form)
					checkBuild[float32](t, b, g, src, form)
				})
			}
		}
	}
}

func checkBuild[F engine.Float](t *testing.T, b *engine.Bars, g engine.Grid, src engine.Source, form engine.Formulation) {
	t.Helper()
	ind, err := reference.BuildIndicators[F](context.Background(), b, g, src, form)
	if err != nil {
		t.Fatal(err)
	}
	if ind.Form != form {
		t.Errorf("Form = %v, want %v", ind.Form, form)
	}
	// One h3 per p (hma3 7:20 has p 3..10: 8), each under two lengths.
	ps := map[int]bool{}
	for _, L := range g.HMA3.Values() {
		ps[L/2] = true
	}
	slices := map[*F]bool{}
	for _, s := range ind.H3 {
		slices[&s[0]] = true
	}
	if len(ind.H) != g.HMA.Len() || len(ind.H3) != 2*len(ps) || len(slices) != len(ps) {
		t.Fatalf("%d h and %d h3 entries (%d series), want %d and %d (%d series)", len(ind.H), len(ind.H3), len(slices),
			g.HMA.Len(), 2*len(ps), len(ps))
	}
	x := kernels.SourceSeries[F](b, src)
	cl := kernels.SourceSeries[F](b, engine.SourceClose)
	want := make([]F, b.Len())
	for _, L := range g.HMA.Values() {
		if err := reference.HMA(x, L, form, want); err != nil {
			t.Fatal(err)
		}
		assertSameSeries(t, fmt.Sprintf("%s h(%d)", precName[F](), L), ind.H[L], want)
	}
	for _, L := range g.HMA3.Values() {
		for _, L := range []int{L, L ^ 1} { // the length and its twin
			if err := reference.HMA3(cl, L, form, want); err != nil {
				t.Fatal(err)
			}
			assertSameSeries(t, fmt.Sprintf("%s h3(%d)", precName[F](), L), ind.H3[L], want)
		}
	}
	assertSameSeries(t, precName[F]()+" r", ind.R, kernels.BarReturns[F](b))
	if src != engine.SourceClose {
		// h3 must not follow the source: HMA3 of hl2 differs from HMA3 of close.
		L := g.HMA3.Start
		if err := reference.HMA3(x, L, form, want); err != nil {
			t.Fatal(err)
		}
		if _, same := conformance.SameSeries(ind.H3[L], want); same {
			t.Errorf("%s h3(%d) equals HMA3(%s): h3 must be HMA3(close)", precName[F](), L, src)
		}
	}
}

func assertSameSeries[F engine.Float](t *testing.T, what string, got, want []F) {
	t.Helper()
	if i, same := conformance.SameSeries(got, want); !same {
		if len(got) != len(want) {
			t.Errorf("%s: len %d, want %d", what, len(got), len(want))
			return
		}
		t.Errorf("%s[%d] = %v, per-length computation %v (not bit-identical)", what, i, got[i], want[i])
	}
}

// TestBuildIndicatorsCancelled: a cancelled context stops the build with
// ctx.Err().
func TestBuildIndicatorsCancelled(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	b := datatest.AroundCloses(rng, datatest.Closes(rng, 500, 100, 0.01))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := reference.BuildIndicators[float64](ctx, b, engine.Grid{HMA: engine.Range{Start: 2, Stop: 100, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 100, Step: 1}}, engine.SourceClose, engine.Direct)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestIndicatorCache: a study's cache builds each (precision, formulation)
// once and hands the same series to every caller, and a build stopped by a
// cancelled context does not stay in the cache.
func TestIndicatorCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	b := datatest.AroundCloses(rng, datatest.Closes(rng, 600, 100, 0.01))
	job := &engine.Job{Bars: b, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 24, Step: 12}}, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600},
		Precision: engine.FP32, WMA: engine.Direct, Cache: &engine.IndicatorCache{}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := reference.GetIndicators[float32](cancelled, job); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: err %v", err)
	}
	a, err := reference.GetIndicators[float32](context.Background(), job)
	if err != nil {
		t.Fatalf("build after a cancelled one: %v (the cancelled build poisoned the cache)", err)
	}
	again, _ := reference.GetIndicators[float32](context.Background(), job)
	if &a.H[10][0] != &again.H[10][0] {
		t.Error("second call rebuilt the series instead of sharing them")
	}
	want, _ := reference.BuildIndicators[float32](context.Background(), b, job.Grid, engine.SourceClose, engine.Direct)
	assertSameSeries(t, "cached h(20)", a.H[20], want.H[20])
	pj := *job
	pj.WMA = engine.Prefix
	p, _ := reference.GetIndicators[float32](context.Background(), &pj)
	if _, same := conformance.SameSeries(p.H[30], a.H[30]); same {
		t.Error("prefix and direct share a cache entry")
	}
	d64, _ := reference.GetIndicators[float64](context.Background(), job)
	if len(d64.H) != 3 {
		t.Errorf("fp64 entry has %d h series", len(d64.H))
	}
}
