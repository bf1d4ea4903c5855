package strategy

import (
	"fmt"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// Inputs are one dataset's series in the working precision F, each of
// length n: the bars' high, low and close rounded to F, and the swept
// source x (SPEC "Input": close, hl2, hlc3 or ohlc4, evaluated in F as
// kernels.SourceSeries does, so the fp32 path is defined once).
type Inputs[F Float] struct {
	High, Low, Close, Src []F
	Source                engine.Source
}

// NewInputs rounds b's prices to F and builds the source src.
func NewInputs[F Float](b *engine.Bars, src engine.Source) *Inputs[F] {
	in := &Inputs[F]{
		High:   make([]F, b.Len()),
		Low:    make([]F, b.Len()),
		Close:  kernels.SourceSeries[F](b, engine.SourceClose),
		Src:    kernels.SourceSeries[F](b, src),
		Source: src,
	}
	for i := range in.High {
		in.High[i], in.Low[i] = F(b.High[i]), F(b.Low[i])
	}
	return in
}

// evaluator is a family's arithmetic, once per precision: it runs the
// family's series and state machine for one combo's values (one per axis
// of the family's grid, Kinds set on its leg axes), writing pos (len n,
// the state after each bar before the mode) and, when margin is not nil,
// each bar's margin (fraction of close), and returns the first valid bar.
// Each family's file defines its evaluator beside its state machine.
type evaluator interface {
	eval64(in *Inputs[float64], c Combo, f Formulation, pos []State, margin []float64) (int, error)
	eval32(in *Inputs[float32], c Combo, f Formulation, pos []State, margin []float64) (int, error)
}

// Evaluate runs combo c of g over in with formulation f (prefix for the
// fp32 trap; families and kinds without a prefix form ignore it): pos
// (len n) receives the family's state after each bar before the mode
// (long-short; long-only maps -1 to 0 after, SPEC Part 2 "Families"),
// margin (nil or len n) each bar's margin as a fraction of close[i] (SPEC
// computes margins from the fp64 run: pass margin for it). It returns the
// first valid bar. Errors: a *ParamError for a value the family refuses,
// an error for an unknown family or mismatched lengths.
func Evaluate[F Float](g Grid, c Combo, in *Inputs[F], f Formulation, pos []State, margin []float64) (int, error) {
	fam, err := Lookup(g.Family)
	if err != nil {
		return 0, err
	}
	if fam.eval == nil {
		return 0, fmt.Errorf("strategy %s: no arithmetic", fam.Name)
	}
	if len(c.Values) != len(fam.Params) {
		return 0, fmt.Errorf("strategy %s: combo has %d values for %d parameters", fam.Name, len(c.Values), len(fam.Params))
	}
	if n := len(in.Close); len(pos) != n || (margin != nil && len(margin) != n) {
		return 0, fmt.Errorf("strategy %s: %d bars, pos %d, margin %d", fam.Name, n, len(pos), len(margin))
	}
	switch in := any(in).(type) {
	case *Inputs[float64]:
		return fam.eval.eval64(in, c, f, pos, margin)
	case *Inputs[float32]:
		return fam.eval.eval32(in, c, f, pos, margin)
	}
	return 0, fmt.Errorf("strategy %s: unsupported precision", fam.Name)
}

// value is the decimal d in F: the nearest F to its decimal text (SPEC
// Part 2 "Parameters and grids": not float32 of the float64).
func value[F Float](d Decimal) F {
	var z F
	if _, ok := any(z).(float32); ok {
		return F(d.Float32())
	}
	return F(d.Float64())
}

// length is the integer value d (a length).
func length(d Decimal) int { return int(d.Int()) }

// legs computes the two moving averages of a crossover, a over xa with
// kind ka and length la, b over xb with kb and lb, and returns them with
// their first common valid bar (sources built from prices are defined
// from bar 0).
func legs[F Float](xa []F, ka Kind, la int, xb []F, kb Kind, lb int, f Formulation) (a, b []F, first int, err error) {
	a, b = make([]F, len(xa)), make([]F, len(xb))
	if err := MA(ka, xa, la, 0, f, a); err != nil {
		return nil, nil, 0, err
	}
	if err := MA(kb, xb, lb, 0, f, b); err != nil {
		return nil, nil, 0, err
	}
	return a, b, max(FirstValid(ka, la, 0), FirstValid(kb, lb, 0)), nil
}
