package strategy

// A crossover grid on the GPU (engine.PairStrategy): cross's combos are
// Part 1's comparison of two series, which the engine's hull kernels run
// given the legs' series. The series are the sweep's own (the job's
// series cache, computed in F by MA), so a GPU lane reads the same bits
// as the reference lane and the parity report (compareLegs) reuses them.

import (
	"context"
	"runtime"

	"sweepbench/engine"
)

// PairsOK: cross without stops, without --fast-below-slow (its combos are
// then fast-major over the two axes: combo a*NB + b) and with fill close.
func (e *engineGrid) PairsOK(p engine.Params) bool {
	return e.g.Family == "cross" && len(e.g.Axes) == 2 && !e.g.HasStops() && !e.g.FastBelowSlow &&
		p.Fill != engine.FillNextOpen
}

func (e *engineGrid) Pairs64(ctx context.Context, job *engine.Job) (*engine.Pairs[float64], error) {
	d := e.data(job, engine.FP64, Direct)
	return pairs(ctx, e.g, d.in64, Direct, d.sc64)
}

func (e *engineGrid) Pairs32(ctx context.Context, job *engine.Job) (*engine.Pairs[float32], error) {
	d := e.data(job, engine.FP32, job.WMA)
	return pairs(ctx, e.g, d.in32, job.WMA, d.sc32)
}

// pairs computes g's fast series (one per value of axis 0) and slow
// series (axis 1) through sc, with their first valid bars, on all cores.
func pairs[F Float](ctx context.Context, g Grid, in *Inputs[F], f Formulation, sc *seriesCache[F]) (*engine.Pairs[F], error) {
	na, nb := g.Axes[0].Range.Len(), g.Axes[1].Range.Len()
	p := &engine.Pairs[F]{A: make([][]F, na), B: make([][]F, nb), FirstA: make([]int, na), FirstB: make([]int, nb)}
	errs := make([]error, na+nb)
	err := engine.Parallel(ctx, na+nb, runtime.GOMAXPROCS(0), func(_, k int) {
		ax, j := 0, k
		if k >= na {
			ax, j = 1, k-na
		}
		l := leg[F]{in.Src, "src", g.Axes[ax].Leg.Kind, length(g.Axes[ax].Range.At(j))}
		s, err := maSeries(l, f, sc)
		if err != nil {
			errs[k] = err
			return
		}
		if ax == 0 {
			p.A[j], p.FirstA[j] = s, FirstValid(l.k, l.L, 0)
		} else {
			p.B[j], p.FirstB[j] = s, FirstValid(l.k, l.L, 0)
		}
	})
	if err != nil {
		return nil, err
	}
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return p, nil
}

var _ engine.PairStrategy = (*engineGrid)(nil)
