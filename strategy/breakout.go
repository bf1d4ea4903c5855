package strategy

import (
	"fmt"
	"math"

	"sweepbench/engine"
)

// Breakout runs SPEC Part 2's `breakout` family (Donchian channel,
// docs/SPEC.md "Families") over high, low and close with entry length lin
// and exit length lout, in the working precision F.
//
// Shapes: high, low and close have the same length n (finite prices);
// pos has length n and receives the state after each bar in long-short,
// before the mode (+1, -1, 0); margin is nil or has length n and
// receives each bar's margin as a fraction of close[i] (dimensionless),
// from this run's F series (callers pass it for the fp64 run only).
//
// Levels: up_L[i] = max(high[i-L..i-1]) and dn_L[i] = min(low[i-L..i-1]),
// the previous L bars with bar i excluded (Pine's ta.highest(high, L)[1]).
// They are maxima and minima of the inputs, so exact in any precision,
// and computed in O(n) with monotonic deques whatever the lengths. The
// family is 0 until every level is defined: the first valid bar,
// returned as first, is max(lin, lout).
//
// From flat: close > up_in -> +1, close < dn_in -> -1. From +1:
// close < dn_out -> 0, and then close < dn_in -> -1 on the same bar.
// From -1: close > up_out -> 0, and then close > up_in -> +1. A level's
// margin is |close - level| / close; a bar's margin is the smallest over
// the levels it evaluated (sweepbench's reading): from flat up_in and
// dn_in; from +1 dn_out, and when it exits also dn_in (reversal taken or
// not); from -1 up_out, and up_in when it exits. Before the first valid
// bar pos is 0 and the margin NaN.
//
// Errors: a *ParamError naming "entry" (lin < 1) or "exit" (lout < 1); an
// error for mismatched slice lengths. Nothing is written on error.
func Breakout[F Float](high, low, close []F, lin, lout int, pos []State, margin []float64) (first int, err error) {
	first, done, err := breakoutCheck(high, low, close, lin, lout, pos, margin)
	if err != nil || done {
		return first, err
	}
	upIn, dnIn := Channel(high, lin, true), Channel(low, lin, false)
	upOut, dnOut := upIn, dnIn
	if lout != lin {
		upOut, dnOut = Channel(high, lout, true), Channel(low, lout, false)
	}
	breakoutMachine(close, upIn, dnIn, upOut, dnOut, first, pos, margin)
	return first, nil
}

// breakoutCheck is Breakout's errors and its first valid bar; done when
// that bar is past the series (pos and margin then written: 0 and NaN).
func breakoutCheck[F Float](high, low, close []F, lin, lout int, pos []State, margin []float64) (first int, done bool, err error) {
	n := len(close)
	if lin < 1 {
		return 0, false, paramErr("entry", fmt.Sprint(lin), "must be at least 1")
	}
	if lout < 1 {
		return 0, false, paramErr("exit", fmt.Sprint(lout), "must be at least 1")
	}
	if len(high) != n || len(low) != n || len(pos) != n || (margin != nil && len(margin) != n) {
		return 0, false, fmt.Errorf("breakout: mismatched lengths: high %d, low %d, close %d, pos %d, margin %d",
			len(high), len(low), n, len(pos), len(margin))
	}
	first = max(lin, lout)
	if first >= n {
		warmup(pos, margin, n)
		return first, true, nil
	}
	return first, false, nil
}

// breakoutMachine is Breakout's state machine and margins over the
// channels (Channel's series, which depend on an input and a length only:
// a sweep shares them) from bar first = max(lin, lout) < n. Lengths are
// the caller's.
func breakoutMachine[F Float](close, upIn, dnIn, upOut, dnOut []F, first int, pos []State, margin []float64) {
	n := len(close)
	warmup(pos, margin, first)
	var st State
	for i := first; i < n; i++ {
		c := close[i]
		switch st {
		case 0:
			if c > upIn[i] {
				st = 1
			} else if c < dnIn[i] {
				st = -1
			}
		case 1:
			if c < dnOut[i] {
				st = 0
				if c < dnIn[i] {
					st = -1
				}
			}
		case -1:
			if c > upOut[i] {
				st = 0
				if c > upIn[i] {
					st = 1
				}
			}
		}
		pos[i] = st
	}
	if margin != nil {
		breakoutMargins(close, upIn, dnIn, upOut, dnOut, first, pos, margin)
	}
}

// breakoutMargins fills margin[first:] from the states pos the machine
// took: bar i's comparisons are those of the state before it, pos[i-1]
// (Breakout's docstring).
func breakoutMargins[F Float](close, upIn, dnIn, upOut, dnOut []F, first int, pos []State, margin []float64) {
	prev := State(0)
	for i := first; i < len(close); i++ {
		c := float64(close[i])
		dist := func(level F) float64 { return math.Abs(c - float64(level)) }
		var mg float64
		switch prev {
		case 0:
			mg = math.Min(dist(upIn[i]), dist(dnIn[i]))
		case 1:
			mg = dist(dnOut[i])
			if pos[i] != 1 { // it exited: the reversal level counts too
				mg = math.Min(mg, dist(dnIn[i]))
			}
		case -1:
			mg = dist(upOut[i])
			if pos[i] != -1 {
				mg = math.Min(mg, dist(upIn[i]))
			}
		}
		margin[i] = mg / c
		prev = pos[i]
	}
}

// Channel is the Donchian level of x over the previous L bars (len(x)
// values, NaN for i < L): out[i] = max(x[i-L..i-1]) when isMax, else the
// min (Pine's ta.highest(x, L)[1], ta.lowest(x, L)[1]). Computed with van
// Herk / Gil-Werman blocks (a running extremum forwards and backwards
// within blocks of L bars; each window is the extremum of one suffix and
// one prefix), O(n) and three comparisons a bar, exact in any precision.
func Channel[F Float](x []F, L int, isMax bool) []F {
	if isMax {
		return channelMax(x, L)
	}
	// min(a, b) = -max(-a, -b) exactly (negation is exact): one loop.
	neg := make([]F, len(x))
	for i, v := range x {
		neg[i] = -v
	}
	out := channelMax(neg, L)
	for i := range out {
		out[i] = -out[i]
	}
	return out
}

// channelMax is Channel's maximum.
func channelMax[F Float](x []F, L int) []F {
	n := len(x)
	out, fw, bw := make([]F, n), make([]F, n), make([]F, n)
	for b := 0; b < n; b += L {
		e := min(b+L, n)
		fw[b] = x[b]
		for i := b + 1; i < e; i++ {
			fw[i] = max(fw[i-1], x[i])
		}
		bw[e-1] = x[e-1]
		for i := e - 2; i >= b; i-- {
			bw[i] = max(bw[i+1], x[i])
		}
	}
	nan := F(math.NaN())
	for i := range min(L, n) {
		out[i] = nan
	}
	// window a..b = i-L..i-1, L bars: bw[a] covers a to the end of a's
	// block, fw[b] the start of b's block to b.
	for i := L; i < n; i++ {
		out[i] = max(bw[i-L], fw[i-1])
	}
	return out
}

// breakoutEval is breakout's evaluator: entry and exit channel lengths
// on high, low and close (the source does not apply: docs/SPEC.md); each
// Channel by (input, length) through the cache.
type breakoutEval struct{}

func (breakoutEval) eval64(in *Inputs[float64], c Combo, _ Formulation, pos []State, margin []float64, sc *seriesCache[float64]) (int, error) {
	return evalBreakout(in, c, pos, margin, sc)
}
func (breakoutEval) eval32(in *Inputs[float32], c Combo, _ Formulation, pos []State, margin []float64, sc *seriesCache[float32]) (int, error) {
	return evalBreakout(in, c, pos, margin, sc)
}

func evalBreakout[F Float](in *Inputs[F], c Combo, pos []State, margin []float64, sc *seriesCache[F]) (int, error) {
	if in.Source != engine.SourceClose {
		return 0, paramErr("source", in.Source.String(), "breakout reads high, low and close; the source option does not apply (leave it at close)")
	}
	lin, lout := length(c.Values[0]), length(c.Values[1])
	if sc == nil {
		return Breakout(in.High, in.Low, in.Close, lin, lout, pos, margin)
	}
	first, done, err := breakoutCheck(in.High, in.Low, in.Close, lin, lout, pos, margin)
	if err != nil || done {
		return first, err
	}
	upIn, dnIn := channelCached(in, lin, true, sc), channelCached(in, lin, false, sc)
	upOut, dnOut := channelCached(in, lout, true, sc), channelCached(in, lout, false, sc)
	breakoutMachine(in.Close, upIn, dnIn, upOut, dnOut, first, pos, margin)
	return first, nil
}

// channelCached is the Donchian level of length L through sc (nil: for
// this call alone): of the highs when isMax, else of the lows.
func channelCached[F Float](in *Inputs[F], L int, isMax bool, sc *seriesCache[F]) []F {
	x, src := in.Low, "low"
	if isMax {
		x, src = in.High, "high"
	}
	v, _ := sc.get(seriesKey{name: "channel", src: src, length: L}, func() ([][]F, error) {
		return [][]F{Channel(x, L, isMax)}, nil
	})
	return v[0]
}
