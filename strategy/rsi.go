package strategy

import (
	"fmt"
	"math"
)

// RSI runs SPEC Part 2's `rsi` family (stop-and-reverse on Wilder's RSI,
// docs/SPEC.md "Families", `rsi`) over the source x in the working
// precision F and returns its first valid bar, L (the source's first index
// s is 0: x, len n, must be finite from bar 0; it is not checked).
//
// Arithmetic, each operation rounded in F (TA-Lib TA_RSI's order, default
// compatibility): d[i] = x[i] - x[i-1] (one subtraction), g = max(d, 0),
// l = max(-d, 0); the averages are seeded at i = L with the mean of
// g[1..L] (summed oldest bar first, then / L), likewise al, and from then
// on ag = (ag*(L-1) + g) / L, likewise al. RSI = 100 - 100/(1 + ag/al),
// evaluated as written; 100 when al = 0 < ag; when ag = al = 0 no
// comparison is made and the state is unchanged.
//
// State machine (long-short; the mode is applied by the caller): from flat
// or -1, RSI < lower -> +1; from flat or +1, RSI > upper -> -1; otherwise
// unchanged. pos (len n) receives the state after each bar, 0 before L.
//
// margin (nil, or len n; SPEC computes margins on the fp64 run, so pass it
// only there) receives, in fraction of the RSI scale, |RSI - t| / 100
// (computed in float64 from the F RSI) for the threshold t of the
// comparisons evaluated from the bar's prior state: from flat the nearer
// of lower and upper (the one crossed, when one is: it is always the
// nearer, lower < upper), from +1 upper, from -1 lower, whether or not the
// state changed. Where ag = al = 0 it is 0 (the 0/0 point: any change of
// either average makes a comparison at RSI 0 or 100), and NaN before L.
//
// rsiOut (nil, or len n) receives the RSI series: NaN before L and NaN
// where ag = al = 0 (undefined there; TA-Lib writes 0).
//
// Errors: a *ParamError naming "length" (L < 2), "lower" (not in (0, 100))
// or "upper" (not in (lower, 100)); a plain error when pos, margin or
// rsiOut is not of x's length.
func RSI[F Float](x []F, L int, lower, upper F, pos []State, margin []float64, rsiOut []F) (first int, err error) {
	if err := rsiCheck(x, L, lower, upper, pos, margin, rsiOut); err != nil {
		return 0, err
	}
	r := rsiSeries(x, nil, L)
	rsiStates(r, L, lower, upper, pos, margin)
	if rsiOut != nil {
		copy(rsiOut, r)
	}
	return L, nil
}

// rsiCheck is RSI's errors.
func rsiCheck[F Float](x []F, L int, lower, upper F, pos []State, margin []float64, rsiOut []F) error {
	if L < 2 {
		return paramErr("length", fmt.Sprint(L), "want a length >= 2")
	}
	if !(lower > 0 && lower < 100) {
		return paramErr("lower", fmt.Sprint(lower), "want 0 < lower < 100")
	}
	if !(upper > lower && upper < 100) {
		return paramErr("upper", fmt.Sprint(upper), "want lower < upper < 100 (lower %v)", lower)
	}
	n := len(x)
	if len(pos) != n || (margin != nil && len(margin) != n) || (rsiOut != nil && len(rsiOut) != n) {
		return fmt.Errorf("strategy.RSI: %d bars, pos %d, margin %d, rsiOut %d: want each of the bars' length (margin and rsiOut may be nil)",
			n, len(pos), len(margin), len(rsiOut))
	}
	return nil
}

// rsiSeries is RSI's series of x with length L >= 2 (RSI's rsiOut): NaN
// before L and where ag = al = 0. It depends on x and L only: a sweep
// shares it over the thresholds. moves, when not nil, are x's moves
// rounded once (Inputs.Moves, the direct formulation): d[i] is moves[i]
// rather than x[i] - x[i-1].
func rsiSeries[F Float](x, moves []F, L int) []F {
	n := len(x)
	out := make([]F, n)
	nan := F(math.NaN())
	fillNaN(out[:min(L, n)])
	if n <= L {
		return out
	}
	fL, fL1 := F(L), F(L-1)
	var ag, al F
	move := func(i int) F {
		if moves != nil {
			return moves[i]
		}
		return x[i] - x[i-1]
	}
	for i := 1; i <= L; i++ {
		d := move(i)
		if d > 0 {
			ag += d
		} else if d < 0 {
			al -= d
		}
	}
	ag, al = ag/fL, al/fL
	for i := L; i < n; i++ {
		if i > L {
			d := move(i)
			g, l := F(0), F(0)
			if d > 0 {
				g = d
			} else if d < 0 {
				l = -d
			}
			// The conversions keep each product rounded (no fused multiply-add).
			ag = (F(ag*fL1) + g) / fL
			al = (F(al*fL1) + l) / fL
		}
		switch {
		case ag == 0 && al == 0:
			out[i] = nan
		case al == 0:
			out[i] = 100
		default:
			out[i] = 100 - F(100)/(1+ag/al)
		}
	}
	return out
}

// rsiStates is RSI's state machine and margins over the series r of
// rsiSeries from bar first (a NaN: ag = al = 0, state unchanged, margin
// 0). Lengths are the caller's.
func rsiStates[F Float](r []F, first int, lower, upper F, pos []State, margin []float64) {
	var st State
	warmup(pos, margin, first)
	for i := max(first, 0); i < len(r); i++ {
		ri := r[i]
		if ri != ri {
			pos[i] = st
			if margin != nil {
				margin[i] = 0
			}
			continue
		}
		prev := st
		if st != 1 && ri < lower {
			st = 1
		} else if st != -1 && ri > upper {
			st = -1
		}
		pos[i] = st
		if margin != nil {
			r64 := float64(ri)
			dl, du := math.Abs(r64-float64(lower))/100, math.Abs(r64-float64(upper))/100
			switch prev {
			case 0:
				margin[i] = min(dl, du)
			case 1:
				margin[i] = du
			default:
				margin[i] = dl
			}
		}
	}
}

// rsiEval is rsi's evaluator: length, lower, upper on the source; the
// RSI series by length through the cache.
type rsiEval struct{}

func (rsiEval) eval64(in *Inputs[float64], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float64]) (int, error) {
	return evalRSI(in, length(c.Values[0]), value[float64](c.Values[1]), value[float64](c.Values[2]), pos, margin, f, sc)
}
func (rsiEval) eval32(in *Inputs[float32], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float32]) (int, error) {
	return evalRSI(in, length(c.Values[0]), value[float32](c.Values[1]), value[float32](c.Values[2]), pos, margin, f, sc)
}

// evalRSI reads the moves rounded once (Inputs.Moves) in the direct
// formulation and the differences of the rounded source in the prefix
// one (the trap: docs/SPEC.md "rsi").
func evalRSI[F Float](in *Inputs[F], L int, lower, upper F, pos []State, margin []float64, f Formulation, sc *seriesCache[F]) (int, error) {
	if err := rsiCheck(in.Src, L, lower, upper, pos, margin, nil); err != nil {
		return 0, err
	}
	rsiStates(rsiCached(in, L, f, sc), L, lower, upper, pos, margin)
	return L, nil
}

// rsiCached is the length-L RSI of the source through sc (nil: for this
// call alone): from the moves rounded once in the direct formulation, the
// differences of the rounded source in the prefix one (evalRSI).
func rsiCached[F Float](in *Inputs[F], L int, f Formulation, sc *seriesCache[F]) []F {
	moves := in.Moves
	if f == Prefix || len(moves) != len(in.Src) {
		moves, f = nil, Prefix
	}
	v, _ := sc.get(seriesKey{name: "rsi", src: "src", length: L, f: f}, func() ([][]F, error) {
		return [][]F{rsiSeries(in.Src, moves, L)}, nil
	})
	return v[0]
}
