// Package strategy is SPEC Part 2's strategies as data and as arithmetic:
// the moving-average kinds, the families' state machines and margins,
// decimal parameter ranges and the N-dimensional grid, and parity by
// divergences for the families with memory (docs/SPEC.md Part 2).
//
// Every series here is computed in F (float32 or float64) with the
// evaluation order docs/SPEC.md pins, so the fp32 path and the fp64
// reference differ only by the rounding of each operation. A series is
// NaN before its first valid bar. Lengths below a kind's or family's
// minimum are a *ParamError, never a panic.
//
// Layout: kinds.go (sma, wma, ema, dema, tema, hma, hma3, price), one
// file per family (cross.go, zscore.go, breakout.go, rsi.go: each its
// state machine, margins and evaluator), family.go (the registry: each
// family's parameters, minimums, defaults and example), evaluate.go (the
// one entry, Evaluate, the inputs and the series cache), sweep.go (Sweep:
// a range of a grid's combos on workers, each series computed once per
// call and shared by the combos that read it, then
// reference.BacktestPositions), grid.go (decimal ranges, the grid),
// divergence.go (parity for the families with memory).
//
// Each family's file splits its series (the moving averages, zscore's
// mean and sd, the RSI series, the channels: functions of the inputs and
// a length) from its state machine over them; the exported function
// (Cross, ZScore, RSI, Breakout) is the two in turn, and the evaluator
// reads the series through the cache, so a combo has one code path
// whether it runs alone (Evaluate) or in a Sweep.
//
// The sweep engine does not call this package yet: the families here are
// the reference arithmetic the engine's N-dimensional grid will run
// (issue 27, in progress; docs/SPEC.md "What Part 2 adds: what is built"
// says which rows are built).
package strategy

import (
	"errors"
	"fmt"
	"math"

	"sweepbench/engine"
)

// Float is the working precision: float32 for the fp32 path, float64 for
// the reference.
type Float = engine.Float

// Formulation is how a window is summed: Direct (each window from its own
// values) or Prefix (a difference of running sums in the working
// precision: SPEC's trap formulations, `sma` prefix and `zscore` prefix).
type Formulation = engine.Formulation

const (
	Direct = engine.Direct
	Prefix = engine.Prefix
)

// Kind is a moving-average kind of SPEC Part 2 "Moving-average kinds".
type Kind string

const (
	SMA   Kind = "sma"
	WMA   Kind = "wma"
	EMA   Kind = "ema"
	DEMA  Kind = "dema"
	TEMA  Kind = "tema"
	HMA   Kind = "hma"
	HMA3  Kind = "hma3"
	Price Kind = "price"
)

// Kinds lists every kind, in SPEC's order.
var Kinds = []Kind{SMA, WMA, EMA, DEMA, TEMA, HMA, HMA3, Price}

// ErrParam is wrapped by every *ParamError.
var ErrParam = errors.New("invalid strategy parameter")

// ParamError is a parameter that cannot be used: Param names it by its
// SPEC name ("length", "entry", "fast"...), Value is the value as given,
// Reason says why. Front ends phrase it (the CLI as --param NAME=...).
type ParamError struct {
	Param  string
	Value  string
	Reason string
}

func (e *ParamError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Param, e.Reason)
	}
	return fmt.Sprintf("%s %s: %s", e.Param, e.Value, e.Reason)
}

func (e *ParamError) Unwrap() error { return ErrParam }

func paramErr(param, value, format string, args ...any) *ParamError {
	return &ParamError{Param: param, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// State is a family's position state after a bar: +1 long, -1 short, 0
// flat (SPEC Part 2 "Families", before the mode).
type State = int8

// warmup writes the bars before a family's first valid bar: state 0
// (SPEC: pos is 0 while any value it reads is undefined) and, when margin
// is not nil, a NaN margin (no comparison was made).
func warmup(pos []State, margin []float64, first int) {
	first = min(max(first, 0), len(pos))
	clear(pos[:first])
	if margin != nil {
		for i := range first {
			margin[i] = math.NaN()
		}
	}
}
