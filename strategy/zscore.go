package strategy

import (
	"fmt"
	"math"
)

// ZScore runs SPEC Part 2's `zscore` family (Bollinger-band mean
// reversion, docs/SPEC.md "Families") over the source x with length L,
// entry threshold kin and exit threshold kout, in the working precision F
// with the formulation f.
//
// Shapes: x and close have the same length n (finite prices); pos has
// length n and receives the state after each bar in long-short, before
// the mode (+1, -1, 0); margin is nil or has length n and receives each
// bar's margin as a fraction of close[i] (dimensionless), computed from
// this run's F series: callers pass it for the fp64 run only (SPEC:
// margins are computed in fp64 from the fp64 series).
//
// Series, per bar i >= L-1 (the first valid bar, s+L-1 with s = 0,
// returned as first):
//   - Direct: m = (x[i-L+1] + ... + x[i]) / L summed oldest bar first;
//     sd = sqrt(((x[i-L+1]-m)^2 + ... + (x[i]-m)^2) / L), each deviation
//     and each square rounded in F, summed oldest first (population:
//     Pine's ta.stdev(biased = true), TA-Lib's TA_STDDEV).
//   - Prefix: running sums S1 += x[j] and S2 += x[j]*x[j] in F from 0 at
//     the start; W1 = S1[i]-S1[i-L], W2 = S2[i]-S2[i-L] (S[-1] = 0);
//     m = W1/L, var = W2/L - m*m. A negative var is undefined (SPEC, not
//     TA-Lib's 0): the bar reads an undefined value, so its position is
//     0 as in the warm-up (SPEC "pos[i] ... is 0 while any value it reads
//     is undefined") and its margin NaN. A var of exactly 0 is sd = 0.
//
// z = (x[i]-m)/sd. With sd = 0 no comparison is made, the state is
// unchanged and the margin is |x[i]-m|/close[i]. Otherwise, from flat:
// z < -kin -> +1, z > kin -> -1; from +1: z >= -kout -> 0, and then
// z > kin -> -1 on the same bar; from -1: z <= kout -> 0, and then
// z < -kin -> +1. The margin of a threshold t is |(x[i]-m) - t*sd| /
// close[i] (t*sd one product), and a bar's margin is the smallest over
// the thresholds it evaluated (sweepbench's reading): from flat both
// entries (-kin and kin); from +1 the exit -kout, and when it exits also
// the reversal kin (whether taken or not); from -1 kout, and kin's
// mirror -kin when it exits. Before the first valid bar pos is 0 and the
// margin NaN.
//
// Errors: a *ParamError naming "length" (L < 2), "entry" (kin not a
// finite number > 0) or "exit" (kout not in (-kin, kin)); an error for
// mismatched slice lengths. Nothing is written on error.
func ZScore[F Float](x, close []F, L int, kin, kout F, f Formulation, pos []State, margin []float64) (first int, err error) {
	if err := zscoreCheck(x, close, L, kin, kout, f, pos, margin); err != nil {
		return 0, err
	}
	m, sd := zscoreSeries(x, L, f)
	zscoreMachine(x, close, m, sd, L-1, kin, kout, pos, margin)
	return L - 1, nil
}

// zscoreCheck is ZScore's errors.
func zscoreCheck[F Float](x, close []F, L int, kin, kout F, f Formulation, pos []State, margin []float64) error {
	n := len(x)
	if L < 2 {
		return paramErr("length", fmt.Sprint(L), "must be at least 2")
	}
	if !(kin > 0) || math.IsInf(float64(kin), 0) {
		return paramErr("entry", fmt.Sprint(kin), "must be a finite number > 0")
	}
	if !(-kin < kout && kout < kin) {
		return paramErr("exit", fmt.Sprint(kout), "must be between -entry and entry (exclusive), entry %v", kin)
	}
	if len(close) != n || len(pos) != n || (margin != nil && len(margin) != n) {
		return fmt.Errorf("zscore: mismatched lengths: x %d, close %d, pos %d, margin %d", n, len(close), len(pos), len(margin))
	}
	if f != Direct && f != Prefix {
		return fmt.Errorf("zscore: unknown formulation %d", int(f))
	}
	return nil
}

// zscoreSeries is the mean m and the sd of x over windows of L bars (ZScore's
// "Series", L >= 2, f Direct or Prefix): NaN before the first valid bar
// L-1, and where Prefix's variance is negative (undefined) both m and sd
// are NaN. They depend on x, L and f only: a sweep shares them over the
// thresholds.
func zscoreSeries[F Float](x []F, L int, f Formulation) (m, sd []F) {
	n := len(x)
	m, sd = make([]F, n), make([]F, n)
	first := L - 1
	lf := F(L)
	nan := F(math.NaN())
	fillNaN(m[:min(first, n)])
	fillNaN(sd[:min(first, n)])
	if f == Direct {
		// Four windows at a time (bars i..i+3): their sums are independent
		// chains, each still summed oldest bar first, so the bits are the
		// one-window loop's (zscoreDirectPlain in the tests) at a quarter
		// of the additions' latency.
		i := first
		for ; i+3 < n; i += 4 {
			w := x[i-L+1 : i+4] // the four windows: w[k : k+L]
			var s0, s1, s2, s3 F
			for j := range L {
				v := w[j : j+4 : j+4]
				s0 += v[0]
				s1 += v[1]
				s2 += v[2]
				s3 += v[3]
			}
			m0, m1, m2, m3 := s0/lf, s1/lf, s2/lf, s3/lf
			var a0, a1, a2, a3 F
			for j := range L {
				v := w[j : j+4 : j+4]
				d0, d1, d2, d3 := v[0]-m0, v[1]-m1, v[2]-m2, v[3]-m3
				a0 += F(d0 * d0)
				a1 += F(d1 * d1)
				a2 += F(d2 * d2)
				a3 += F(d3 * d3)
			}
			m[i], m[i+1], m[i+2], m[i+3] = m0, m1, m2, m3
			sd[i], sd[i+1] = F(math.Sqrt(float64(a0/lf))), F(math.Sqrt(float64(a1/lf)))
			sd[i+2], sd[i+3] = F(math.Sqrt(float64(a2/lf))), F(math.Sqrt(float64(a3/lf)))
		}
		for ; i < n; i++ {
			var sum F
			for j := i - L + 1; j <= i; j++ {
				sum += x[j]
			}
			mi := sum / lf
			var acc F
			for j := i - L + 1; j <= i; j++ {
				dv := x[j] - mi
				acc += F(dv * dv)
			}
			m[i], sd[i] = mi, F(math.Sqrt(float64(acc/lf)))
		}
		return m, sd
	}
	// Prefix: running sums S[j] after bar j.
	s1, s2 := make([]F, n), make([]F, n)
	var a1, a2 F
	for j := 0; j < n; j++ {
		a1 += x[j]
		a2 += F(x[j] * x[j])
		s1[j], s2[j] = a1, a2
	}
	for i := first; i < n; i++ {
		w1, w2 := s1[i], s2[i]
		if i >= L {
			w1 -= s1[i-L]
			w2 -= s2[i-L]
		}
		mi := w1 / lf
		v := w2/lf - F(mi*mi)
		if v < 0 {
			// The variance is undefined; the mean is not (it is the
			// window's sum / L, however rounded).
			m[i], sd[i] = mi, nan
			continue
		}
		m[i], sd[i] = mi, F(math.Sqrt(float64(v)))
	}
	return m, sd
}

// zscoreMachine is ZScore's state machine and margins over the series m
// and sd of zscoreSeries from bar first (a NaN sd: the bar reads an
// undefined value, state 0 and margin NaN). Lengths are the caller's.
func zscoreMachine[F Float](x, close, m, sd []F, first int, kin, kout F, pos []State, margin []float64) {
	if margin == nil {
		zscoreStates(x, m, sd, first, kin, kout, pos)
		return
	}
	n := len(x)
	var st State
	warmup(pos, margin, first)
	for i := max(first, 0); i < n; i++ {
		sdi := sd[i]
		if sdi != sdi { // undefined (Prefix's negative variance)
			st = 0
			pos[i] = 0
			if margin != nil {
				margin[i] = math.NaN()
			}
			continue
		}
		d := x[i] - m[i]
		if sdi == 0 {
			pos[i] = st
			if margin != nil {
				margin[i] = math.Abs(float64(d)) / float64(close[i])
			}
			continue
		}
		z := d / sdi
		// dist is threshold t's distance in price, |d - t*sd|, in fp64
		// from the F values (exact conversions; the same operations when
		// F is float64).
		dist := func(t F) float64 {
			return math.Abs(float64(d) - float64(F(t*sdi)))
		}
		var mg float64
		switch st {
		case 0:
			if z < -kin {
				st = 1
			} else if z > kin {
				st = -1
			}
			mg = math.Min(dist(-kin), dist(kin))
		case 1:
			mg = dist(-kout)
			if z >= -kout {
				st = 0
				if z > kin {
					st = -1
				}
				mg = math.Min(mg, dist(kin))
			}
		case -1:
			mg = dist(kout)
			if z <= kout {
				st = 0
				if z < -kin {
					st = 1
				}
				mg = math.Min(mg, dist(-kin))
			}
		}
		pos[i] = st
		if margin != nil {
			margin[i] = mg / float64(close[i])
		}
	}
}

// zSeries is z = (x-m)/sd at every bar where sd is defined and not 0, the
// same operations as zscoreMachine's (NaN elsewhere: the states read sd
// there, not z).
func zSeries[F Float](x, m, sd []F) []F {
	z := make([]F, len(x))
	for i := range z {
		if sdi := sd[i]; sdi == sdi && sdi != 0 {
			z[i] = (x[i] - m[i]) / sdi
		} else {
			z[i] = F(math.NaN())
		}
	}
	return z
}

// zscoreStatesZ is zscoreStates over z precomputed (zSeries): the same
// states, bar for bar.
func zscoreStatesZ[F Float](z, sd []F, first int, kin, kout F, pos []State) {
	var st State
	warmup(pos, nil, first)
	for i := max(first, 0); i < len(z); i++ {
		sdi := sd[i]
		if sdi != sdi {
			st = 0
			pos[i] = 0
			continue
		}
		if sdi == 0 {
			pos[i] = st
			continue
		}
		st = zscoreStep(st, z[i], kin, kout)
		pos[i] = st
	}
}

// zscoreStep is one bar's transition of the zscore machine from state st
// at z (SPEC Part 2 "zscore").
func zscoreStep[F Float](st State, z, kin, kout F) State {
	switch st {
	case 0:
		if z < -kin {
			return 1
		} else if z > kin {
			return -1
		}
	case 1:
		if z >= -kout {
			if z > kin {
				return -1
			}
			return 0
		}
	case -1:
		if z <= kout {
			if z < -kin {
				return 1
			}
			return 0
		}
	}
	return st
}

// zscoreStates is zscoreMachine without margins (a sweep's kernel, the
// parity's test side): the same comparisons in the same order, so the
// same states, without the distances only margins need (TestZScoreStates
// holds the two to one another).
func zscoreStates[F Float](x, m, sd []F, first int, kin, kout F, pos []State) {
	zscoreStatesZ(zSeries(x, m, sd), sd, first, kin, kout, pos)
}

// zscoreEval is zscore's evaluator: length, entry, exit on the source;
// the mean and sd by length through the cache.
type zscoreEval struct{}

func (zscoreEval) eval64(in *Inputs[float64], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float64]) (int, error) {
	return evalZScore(in, length(c.Values[0]), value[float64](c.Values[1]), value[float64](c.Values[2]), f, pos, margin, sc)
}
func (zscoreEval) eval32(in *Inputs[float32], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float32]) (int, error) {
	return evalZScore(in, length(c.Values[0]), value[float32](c.Values[1]), value[float32](c.Values[2]), f, pos, margin, sc)
}

func evalZScore[F Float](in *Inputs[F], L int, kin, kout F, f Formulation, pos []State, margin []float64, sc *seriesCache[F]) (int, error) {
	if sc == nil {
		return ZScore(in.Src, in.Close, L, kin, kout, f, pos, margin)
	}
	if err := zscoreCheck(in.Src, in.Close, L, kin, kout, f, pos, margin); err != nil {
		return 0, err
	}
	v := zscoreCached(in, L, f, sc)
	if margin == nil {
		// z depends on the length alone: computed once in the cache, each
		// combo only compares it with its thresholds.
		zscoreStatesZ(v[2], v[1], L-1, kin, kout, pos)
		return L - 1, nil
	}
	zscoreMachine(in.Src, in.Close, v[0], v[1], L-1, kin, kout, pos, margin)
	return L - 1, nil
}

// zscoreCached is the length-L series of the source through sc (nil: for
// this call alone): the mean, the sd and z (zscoreSeries, zSeries).
func zscoreCached[F Float](in *Inputs[F], L int, f Formulation, sc *seriesCache[F]) [][]F {
	v, _ := sc.get(seriesKey{name: "zscore", src: "src", length: L, f: f}, func() ([][]F, error) {
		m, sd := zscoreSeries(in.Src, L, f)
		return [][]F{m, sd, zSeries(in.Src, m, sd)}, nil
	})
	return v
}
