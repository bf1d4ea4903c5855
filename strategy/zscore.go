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
	n := len(x)
	if L < 2 {
		return 0, paramErr("length", fmt.Sprint(L), "must be at least 2")
	}
	if !(kin > 0) || math.IsInf(float64(kin), 0) {
		return 0, paramErr("entry", fmt.Sprint(kin), "must be a finite number > 0")
	}
	if !(-kin < kout && kout < kin) {
		return 0, paramErr("exit", fmt.Sprint(kout), "must be between -entry and entry (exclusive), entry %v", kin)
	}
	if len(close) != n || len(pos) != n || (margin != nil && len(margin) != n) {
		return 0, fmt.Errorf("zscore: mismatched lengths: x %d, close %d, pos %d, margin %d", n, len(close), len(pos), len(margin))
	}
	if f != Direct && f != Prefix {
		return 0, fmt.Errorf("zscore: unknown formulation %d", int(f))
	}
	first = L - 1
	lf := F(L)
	var s1, s2 []F // Prefix: running sums, S[j] after bar j
	if f == Prefix {
		s1 = make([]F, n)
		s2 = make([]F, n)
		var a1, a2 F
		for j := 0; j < n; j++ {
			a1 += x[j]
			a2 += F(x[j] * x[j])
			s1[j], s2[j] = a1, a2
		}
	}
	var st State
	for i := 0; i < n; i++ {
		if i < first {
			pos[i] = 0
			if margin != nil {
				margin[i] = math.NaN()
			}
			continue
		}
		var m, sd F
		if f == Direct {
			var sum F
			for j := i - L + 1; j <= i; j++ {
				sum += x[j]
			}
			m = sum / lf
			var acc F
			for j := i - L + 1; j <= i; j++ {
				dv := x[j] - m
				acc += F(dv * dv)
			}
			sd = F(math.Sqrt(float64(acc / lf)))
		} else {
			w1, w2 := s1[i], s2[i]
			if i >= L {
				w1 -= s1[i-L]
				w2 -= s2[i-L]
			}
			m = w1 / lf
			v := w2/lf - F(m*m)
			if v < 0 {
				st = 0
				pos[i] = 0
				if margin != nil {
					margin[i] = math.NaN()
				}
				continue
			}
			sd = F(math.Sqrt(float64(v)))
		}
		d := x[i] - m
		if sd == 0 {
			pos[i] = st
			if margin != nil {
				margin[i] = math.Abs(float64(d)) / float64(close[i])
			}
			continue
		}
		z := d / sd
		// dist is threshold t's distance in price, |d - t*sd|, in fp64
		// from the F values (exact conversions; the same operations when
		// F is float64).
		dist := func(t F) float64 {
			return math.Abs(float64(d) - float64(F(t*sd)))
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
	return first, nil
}

// zscoreEval is zscore's evaluator: length, entry, exit on the source.
type zscoreEval struct{}

func (zscoreEval) eval64(in *Inputs[float64], c Combo, f Formulation, pos []State, margin []float64) (int, error) {
	return ZScore(in.Src, in.Close, length(c.Values[0]), value[float64](c.Values[1]), value[float64](c.Values[2]), f, pos, margin)
}
func (zscoreEval) eval32(in *Inputs[float32], c Combo, f Formulation, pos []State, margin []float64) (int, error) {
	return ZScore(in.Src, in.Close, length(c.Values[0]), value[float32](c.Values[1]), value[float32](c.Values[2]), f, pos, margin)
}
