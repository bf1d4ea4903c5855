package engine

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"sweepbench/engine/data"
)

// Bars is the OHLCV type every side speaks; it lives in engine/data with
// the loaders.
type Bars = data.Bars

// SourceSeries returns the swept series x in F (SPEC "Input"): close, hl2,
// hlc3 or ohlc4. Each price is rounded to F first and the average evaluated
// in F, left to right, as a GPU holding F prices would.
func SourceSeries[F Float](b *Bars, src Source) []F {
	n := b.Len()
	x := make([]F, n)
	switch src {
	case SourceHL2:
		for i := range x {
			x[i] = (F(b.High[i]) + F(b.Low[i])) / 2
		}
	case SourceHLC3:
		for i := range x {
			x[i] = (F(b.High[i]) + F(b.Low[i]) + F(b.Close[i])) / 3
		}
	case SourceOHLC4:
		for i := range x {
			x[i] = (F(b.Open[i]) + F(b.High[i]) + F(b.Low[i]) + F(b.Close[i])) / 4
		}
	default:
		for i := range x {
			x[i] = F(b.Close[i])
		}
	}
	return x
}

// BarReturns returns r with r[0] = 0 and r[i] = close[i]/close[i-1] - 1 in F
// (fraction per bar), SPEC "Signal, position, fills".
func BarReturns[F Float](b *Bars) []F {
	r := make([]F, b.Len())
	for i := 1; i < len(r); i++ {
		r[i] = F(b.Close[i])/F(b.Close[i-1]) - 1
	}
	return r
}

// Indicators holds every series a grid needs in one precision: h per unique
// HMA length, h3 per unique HMA3 length, and the bar returns. Each unique
// length is computed once and shared by all combos that use it.
type Indicators[F Float] struct {
	H    map[int][]F // HMA(x, Lh), len n
	H3   map[int][]F // HMA3(close, L3), len n
	R    []F         // bar returns, r[0] = 0
	Form Formulation
}

// BuildIndicators computes h for every Lh and h3 for every L3 of the grid
// in F. h uses the chosen source, h3 always close (SPEC: h = HMA(x, Lh),
// h3 = HMA3(close, L3)). Work is shared twice over: each unique length is
// computed once for all combos, and each component WMA(x, p) once for every
// HMA and HMA3 that needs it (WMA(x, 20) serves HMA(20) and HMA(40)). Both
// phases (component WMAs, then the compositions) run on every core, longest
// first. The result is bit-identical to calling HMA and HMA3 per length.
// It stops early with ctx.Err() when ctx is cancelled.
func BuildIndicators[F Float](ctx context.Context, b *Bars, g Grid, src Source, f Formulation) (*Indicators[F], error) {
	n := b.Len()
	x := SourceSeries[F](b, src)
	cl := x
	if src != SourceClose {
		cl = SourceSeries[F](b, SourceClose)
	}
	ind := &Indicators[F]{H: map[int][]F{}, H3: map[int][]F{}, R: BarReturns[F](b), Form: f}
	for _, L := range g.HMA.Values() {
		if L < MinHMA {
			return nil, fmt.Errorf("HMA length %d is below the minimum %d", L, MinHMA)
		}
	}
	for _, L := range g.HMA3.Values() {
		if L < MinHMA3 {
			return nil, fmt.Errorf("HMA3 length %d is below the minimum %d", L, MinHMA3)
		}
	}

	// Phase 1: the component WMAs of x and of close, each length once.
	type base struct {
		close bool // of close (for HMA3) rather than x
		p     int
	}
	comps := map[base][]F{}
	var order []base
	need := func(k base) {
		if src == SourceClose {
			k.close = false // x is close: one family
		}
		if _, ok := comps[k]; !ok {
			comps[k] = make([]F, n)
			order = append(order, k)
		}
	}
	for _, L := range g.HMA.Values() {
		need(base{false, L / 2})
		need(base{false, L})
	}
	for _, L := range g.HMA3.Values() {
		p := L / 2
		need(base{true, p / 3})
		need(base{true, p / 2})
		need(base{true, p})
	}
	comp := func(closeSeries bool, p int) []F {
		if src == SourceClose {
			closeSeries = false
		}
		return comps[base{closeSeries, p}]
	}
	sort.Slice(order, func(i, j int) bool { return order[i].p > order[j].p })
	err := parallel(ctx, len(order), func(i int) {
		k := order[i]
		in := x
		if k.close {
			in = cl
		}
		wmaForm(f, in, k.p, 0, comps[k], nil)
	})
	if err != nil {
		return nil, err
	}

	// Phase 2: the compositions and their outer WMAs, longest first.
	type outer struct {
		hma3 bool
		L    int
	}
	var outs []outer
	for _, L := range g.HMA.Values() {
		if _, ok := ind.H[L]; !ok {
			ind.H[L] = make([]F, n)
			outs = append(outs, outer{false, L})
		}
	}
	for _, L := range g.HMA3.Values() {
		if _, ok := ind.H3[L]; !ok {
			ind.H3[L] = make([]F, n)
			outs = append(outs, outer{true, L})
		}
	}
	cost := func(o outer) int {
		if o.hma3 {
			return o.L / 2
		}
		return HMASqrtLen(o.L)
	}
	sort.Slice(outs, func(i, j int) bool { return cost(outs[i]) > cost(outs[j]) })
	err = parallel(ctx, len(outs), func(i int) {
		o := outs[i]
		d := make([]F, n)
		if o.hma3 {
			p := o.L / 2
			a, bb, c := comp(true, p/3), comp(true, p/2), comp(true, p)
			for j := range d {
				d[j] = F(F(F(3)*a[j])-bb[j]) - c[j]
			}
			wmaForm(f, d, p, min(p-1, n), ind.H3[o.L], nil)
			return
		}
		a, bb := comp(false, o.L/2), comp(false, o.L)
		for j := range d {
			d[j] = F(F(2)*a[j]) - bb[j]
		}
		wmaForm(f, d, HMASqrtLen(o.L), min(o.L-1, n), ind.H[o.L], nil)
	})
	if err != nil {
		return nil, err
	}
	return ind, nil
}

// parallel runs do(0..n-1) on GOMAXPROCS goroutines, in index order of
// start, and returns ctx.Err() if ctx was cancelled before all ran.
func parallel(ctx context.Context, n int, do func(i int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				do(i)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}
