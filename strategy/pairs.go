package strategy

// A strategy grid on the GPU (engine.PairStrategy): cross's combos are
// Part 1's comparison of two series, which the engine's hull kernels run
// given the legs' series; zscore's, rsi's and breakout's are one
// three-state machine over a value and four levels (engine.Pairs). The
// series are the sweep's own (the job's series cache, computed in F by
// the families' code), so a GPU lane reads the same bits as the reference
// lane and the parity report (Compare) reuses them.

import (
	"context"
	"math"
	"runtime"

	"sweepbench/engine"
)

// PairsOK: cross (two axes, without --fast-below-slow: its combos are
// then fast-major, combo a*NB + b), zscore, rsi and breakout, each without
// stops and with fill close.
func (e *engineGrid) PairsOK(p engine.Params) bool {
	if e.g.HasStops() || p.Fill == engine.FillNextOpen {
		return false
	}
	switch e.g.Family {
	case "cross":
		return len(e.g.Axes) == 2 && !e.g.FastBelowSlow
	case "zscore", "rsi":
		return len(e.g.Axes) == 3
	case "breakout":
		return len(e.g.Axes) == 2
	}
	return false
}

func (e *engineGrid) Pairs64(ctx context.Context, job *engine.Job) (*engine.Pairs[float64], error) {
	d := e.data(job, engine.FP64, Direct)
	return pairs(ctx, e.g, d.in64, Direct, d.sc64)
}

func (e *engineGrid) Pairs32(ctx context.Context, job *engine.Job) (*engine.Pairs[float32], error) {
	d := e.data(job, engine.FP32, job.WMA)
	return pairs(ctx, e.g, d.in32, job.WMA, d.sc32)
}

// pairs computes g's series through sc (engine.Pairs for g's family), on
// all cores: one column per value of the first axis (cross, zscore, rsi,
// breakout) and, for cross and breakout, of the last.
func pairs[F Float](ctx context.Context, g Grid, in *Inputs[F], f Formulation, sc *seriesCache[F]) (*engine.Pairs[F], error) {
	na := g.Axes[0].Range.Len()
	p := &engine.Pairs[F]{A: make([][]F, na), FirstA: make([]int, na)}
	nb := 0 // the columns of B (and B2) computed with A's
	switch g.Family {
	case "cross":
		nb = g.Axes[1].Range.Len()
		p.B, p.FirstB = make([][]F, nb), make([]int, nb)
	case "breakout":
		nb = g.Axes[1].Range.Len()
		p.Machine = engine.MachineChannel
		p.B, p.FirstB = make([][]F, nb), make([]int, nb)
		p.A2, p.B2 = make([][]F, na), make([][]F, nb)
		p.V = in.Close
	default: // zscore, rsi: (entry, exit) or (lower, upper) pairs
		p.Machine = engine.MachineBands
		p.Levels = bandLevels[F](g)
		p.FirstB = make([]int, len(p.Levels))
	}
	var z F
	_, margins := any(z).(float64)
	margins = margins && g.Family == "zscore"
	if margins {
		p.D, p.SD = make([][]F, na), make([][]F, na)
		for i := range g.Axes[1].Range.Len() {
			for j := range g.Axes[2].Range.Len() {
				p.Thresholds = append(p.Thresholds, [2]F{value[F](g.Axes[1].Range.At(i)), value[F](g.Axes[2].Range.At(j))})
			}
		}
	}
	errs := make([]error, na+nb)
	err := engine.Parallel(ctx, na+nb, runtime.GOMAXPROCS(0), func(_, k int) {
		if k >= na {
			j := k - na
			L := length(g.Axes[1].Range.At(j))
			if g.Family == "breakout" {
				p.B[j], p.B2[j], p.FirstB[j] = channelCached(in, L, false, sc), channelCached(in, L, true, sc), L
				return
			}
			l := leg[F]{in.Src, "src", g.Axes[1].Leg.Kind, L}
			p.B[j], errs[k] = maSeries(l, f, sc)
			p.FirstB[j] = FirstValid(l.k, l.L, 0)
			return
		}
		L := length(g.Axes[0].Range.At(k))
		switch g.Family {
		case "cross":
			l := leg[F]{in.Src, "src", g.Axes[0].Leg.Kind, L}
			p.A[k], errs[k] = maSeries(l, f, sc)
			p.FirstA[k] = FirstValid(l.k, l.L, 0)
		case "zscore":
			v := zscoreCached(in, L, f, sc)
			p.A[k], p.FirstA[k] = zBands(v), L-1
			if margins {
				d := make([]F, len(in.Src))
				for i, x := range in.Src {
					d[i] = x - v[0][i]
				}
				p.D[k], p.SD[k] = d, v[1]
			}
		case "rsi":
			p.A[k], p.FirstA[k] = rsiCached(in, L, f, sc), L
		case "breakout":
			p.A[k], p.A2[k], p.FirstA[k] = channelCached(in, L, true, sc), channelCached(in, L, false, sc), L
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

// zBands is zscore's value for engine.MachineBands from its cached series
// (mean, sd, z): z, NaN where sd = 0 (the state is kept: zSeries), -0
// where sd is undefined (the state goes to 0: zscoreStatesZ).
func zBands[F Float](v [][]F) []F {
	sd, z := v[1], v[2]
	out := make([]F, len(z))
	negZero := F(math.Copysign(0, -1))
	for i, s := range sd {
		if s != s {
			out[i] = negZero
		} else {
			out[i] = z[i]
		}
	}
	return out
}

// bandLevels is the four levels (engine.Pairs.Levels) of each combination
// of g's last two axes, the last varying fastest: zscore (entry, exit) ->
// (-entry, entry, the largest F below -exit, the smallest F above exit),
// so that z >= -exit is z > the third and z <= exit is z < the fourth;
// rsi (lower, upper) -> (lower, upper, upper, lower). Each threshold is
// its decimal's nearest F (value).
func bandLevels[F Float](g Grid) [][4]F {
	r1, r2 := g.Axes[1].Range, g.Axes[2].Range
	out := make([][4]F, 0, r1.Len()*r2.Len())
	for i := range r1.Len() {
		t1 := value[F](r1.At(i))
		for j := range r2.Len() {
			t2 := value[F](r2.At(j))
			if g.Family == "zscore" {
				out = append(out, [4]F{-t1, t1, nextToward(-t2, math.Inf(-1)), nextToward(t2, math.Inf(1))})
			} else {
				out = append(out, [4]F{t1, t2, t2, t1})
			}
		}
	}
	return out
}

// nextToward is the F next to x in the direction of to (math.Nextafter in
// F's own precision).
func nextToward[F Float](x F, to float64) F {
	if _, ok := any(x).(float32); ok {
		return F(math.Nextafter32(float32(x), float32(to)))
	}
	return F(math.Nextafter(float64(x), to))
}

var _ engine.PairStrategy = (*engineGrid)(nil)
