package reference

import (
	"context"
	"fmt"
	"runtime"
	"sort"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// BuildIndicators computes h for every Lh and h3 for every L3 of the grid
// in F. h uses the chosen source, h3 always close (SPEC: h = HMA(x, Lh),
// h3 = HMA3(close, L3)). Each unique length is computed once and shared by
// all combos that use it, and each h3 once per p = floor(L3/2): the slice
// is H3's under both lengths of its p (L3 and engine.HMA3Twin(L3), in the
// grid or not), so the series serve the grid and its Distinct grid alike
// (one study's IndicatorCache holds them for both). The series are spread
// over every core, longest
// first. Each worker reuses its own buffers for the component WMAs: with
// the vectorised WMA the arithmetic is cheap and first-touch memory is not
// (about 2.5 ms per MB on a small VM), so memory is kept to the outputs plus
// four buffers per worker. The result is bit-identical to HMA and HMA3.
// It stops early with ctx.Err() when ctx is cancelled.
func BuildIndicators[F Float](ctx context.Context, b *engine.Bars, g engine.Grid, src engine.Source, f engine.Formulation) (*engine.Indicators[F], error) {
	return BuildIndicatorsN[F](ctx, b, g, src, f, runtime.GOMAXPROCS(0))
}

// BuildIndicatorsN is BuildIndicators on at most workers goroutines (1 for
// the serial rungs of the bench ladder).
func BuildIndicatorsN[F Float](ctx context.Context, b *engine.Bars, g engine.Grid, src engine.Source, f engine.Formulation, workers int) (*engine.Indicators[F], error) {
	n := b.Len()
	x := kernels.SourceSeries[F](b, src)
	cl := x
	if src != engine.SourceClose {
		cl = kernels.SourceSeries[F](b, engine.SourceClose)
	}
	ind := &engine.Indicators[F]{H: map[int][]F{}, H3: map[int][]F{}, R: kernels.BarReturns[F](b), Form: f}
	type task struct {
		hma3 bool
		L    int
		out  []F
	}
	var tasks []task
	for _, L := range g.HMA.Values() {
		if L < engine.MinHMA {
			return nil, fmt.Errorf("HMA length %d is below the minimum %d", L, engine.MinHMA)
		}
		if _, ok := ind.H[L]; !ok {
			ind.H[L] = make([]F, n)
			tasks = append(tasks, task{false, L, ind.H[L]})
		}
	}
	for _, L := range g.HMA3.Values() {
		if L < engine.MinHMA3 {
			return nil, fmt.Errorf("HMA3 length %d is below the minimum %d", L, engine.MinHMA3)
		}
		if _, ok := ind.H3[L]; !ok {
			// One series per p = floor(L/2), under both its lengths.
			s := make([]F, n)
			ind.H3[L], ind.H3[engine.HMA3Twin(L)] = s, s
			tasks = append(tasks, task{true, L, s})
		}
	}
	cost := func(t task) int { // terms per bar
		if t.hma3 {
			p := t.L / 2
			return p/3 + p/2 + 2*p
		}
		return t.L/2 + t.L + engine.HMASqrtLen(t.L)
	}
	sort.SliceStable(tasks, func(i, j int) bool { return cost(tasks[i]) > cost(tasks[j]) })
	workers = max(1, min(workers, len(tasks)))
	bufs := make([]*hullBuffers[F], workers)
	err := engine.Parallel(ctx, len(tasks), workers, func(w, i int) {
		if bufs[w] == nil {
			bufs[w] = newHullBuffers[F](n, f)
		}
		t := tasks[i]
		if t.hma3 {
			hma3Into(cl, t.L, f, t.out, bufs[w])
		} else {
			hmaInto(x, t.L, f, t.out, bufs[w])
		}
	})
	if err != nil {
		return nil, err
	}
	return ind, nil
}
