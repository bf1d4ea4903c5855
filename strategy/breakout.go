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
	n := len(close)
	if lin < 1 {
		return 0, paramErr("entry", fmt.Sprint(lin), "must be at least 1")
	}
	if lout < 1 {
		return 0, paramErr("exit", fmt.Sprint(lout), "must be at least 1")
	}
	if len(high) != n || len(low) != n || len(pos) != n || (margin != nil && len(margin) != n) {
		return 0, fmt.Errorf("breakout: mismatched lengths: high %d, low %d, close %d, pos %d, margin %d",
			len(high), len(low), n, len(pos), len(margin))
	}
	first = max(lin, lout)
	upIn, dnIn := newExtremum(high, lin, true), newExtremum(low, lin, false)
	upOut, dnOut := newExtremum(high, lout, true), newExtremum(low, lout, false)
	var st State
	for i := 0; i < n; i++ {
		// level(i) needs bars i-L..i-1: push bar i-1 first.
		if i > 0 {
			upIn.push(i - 1)
			dnIn.push(i - 1)
			upOut.push(i - 1)
			dnOut.push(i - 1)
		}
		if i < first {
			pos[i] = 0
			if margin != nil {
				margin[i] = math.NaN()
			}
			continue
		}
		c := close[i]
		ui, di, uo, do := upIn.level(), dnIn.level(), upOut.level(), dnOut.level()
		dist := func(level F) float64 { return math.Abs(float64(c) - float64(level)) }
		var mg float64
		switch st {
		case 0:
			if c > ui {
				st = 1
			} else if c < di {
				st = -1
			}
			mg = math.Min(dist(ui), dist(di))
		case 1:
			mg = dist(do)
			if c < do {
				st = 0
				if c < di {
					st = -1
				}
				mg = math.Min(mg, dist(di))
			}
		case -1:
			mg = dist(uo)
			if c > uo {
				st = 0
				if c > ui {
					st = 1
				}
				mg = math.Min(mg, dist(ui))
			}
		}
		pos[i] = st
		if margin != nil {
			margin[i] = mg / float64(c)
		}
	}
	return first, nil
}

// extremum is a sliding-window maximum (or minimum) over the last L
// pushed bars: a monotonic deque of bar indices, the front the extremum.
// Each index is pushed and popped once, so a pass is O(n).
type extremum[F Float] struct {
	src    []F
	L      int
	isMax  bool
	q      []int // ring buffer of indices, values monotonic from the front
	h, cnt int
}

func newExtremum[F Float](src []F, L int, isMax bool) *extremum[F] {
	return &extremum[F]{src: src, L: L, isMax: isMax, q: make([]int, min(L, len(src))+1)}
}

// worse reports whether a, pushed before b, can never again be the
// window's extremum once b is in it.
func (e *extremum[F]) worse(a, b F) bool {
	if e.isMax {
		return a <= b
	}
	return a >= b
}

func (e *extremum[F]) push(j int) {
	v, size := e.src[j], len(e.q)
	for e.cnt > 0 {
		back := e.h + e.cnt - 1
		if back >= size {
			back -= size
		}
		if !e.worse(e.src[e.q[back]], v) {
			break
		}
		e.cnt--
	}
	tail := e.h + e.cnt
	if tail >= size {
		tail -= size
	}
	e.q[tail] = j
	e.cnt++
	// The next level, at bar j+1, reads bars j+1-L..j.
	for e.q[e.h] <= j-e.L {
		if e.h++; e.h == size {
			e.h = 0
		}
		e.cnt--
	}
}

// level is the extremum over the last L pushed bars: bars i-L..i-1 once
// bar i-1 is pushed (i >= L).
func (e *extremum[F]) level() F { return e.src[e.q[e.h]] }

// breakoutEval is breakout's evaluator: entry and exit channel lengths
// on high, low and close (the source does not apply: docs/SPEC.md).
type breakoutEval struct{}

func (breakoutEval) eval64(in *Inputs[float64], c Combo, _ Formulation, pos []State, margin []float64) (int, error) {
	return evalBreakout(in, c, pos, margin)
}
func (breakoutEval) eval32(in *Inputs[float32], c Combo, _ Formulation, pos []State, margin []float64) (int, error) {
	return evalBreakout(in, c, pos, margin)
}

func evalBreakout[F Float](in *Inputs[F], c Combo, pos []State, margin []float64) (int, error) {
	if in.Source != engine.SourceClose {
		return 0, paramErr("source", in.Source.String(), "breakout reads high, low and close; the source option does not apply (leave it at close)")
	}
	return Breakout(in.High, in.Low, in.Close, length(c.Values[0]), length(c.Values[1]), pos, margin)
}
