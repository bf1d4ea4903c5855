package engine

import (
	"context"
	"fmt"
)

// ComboDetail is everything the workbench shows for one combo in one
// precision: its indicator series, positions, equity curve and trades,
// all converted to float64 for display (len n each, NaN in the warm-up).
//
// A strategy combo (InspectIndex on a strategy grid) has Combo zero, H and
// H3 nil, and Signal set: what its state machine compared.
type ComboDetail struct {
	Combo
	Index     int    // the combo's index in its grid (InspectIndex; 0 from InspectCombo)
	Label     string // Grid.Label: "hma 20, hma3 30", "fast ema 5, slow sma 20"
	Precision Precision
	WMA       Formulation
	H, H3     []float64 // HMA(x, Lh) and HMA3(close, L3); nil for a strategy combo
	Signal    *Signal   // a strategy combo's lines and levels; nil for hull
	// A strategy combo's first valid bar and, in fp64, each bar's margin
	// (StrategyTrace); 0 and nil for hull and in fp32.
	First  int
	Margin []float64
	Close  []float64
	Metrics
	*Trace
}

// InspectIndex is InspectCombo for combo i of grid g, whichever its
// family: hull's through the Arithmetic, a strategy's through its own
// Trace (Strategy.Trace), each the sweep's code path. Errors: i outside
// the grid, the grid not fitting the bars, those of the computation.
func InspectIndex(ctx context.Context, b *Bars, g Grid, i int, p Params, prec Precision, form Formulation) (*ComboDetail, error) {
	if i < 0 || i >= g.Len() {
		return nil, fmt.Errorf("inspect combo %d: outside the grid's %d combos", i, g.Len())
	}
	if g.Strategy == nil {
		d, err := InspectCombo(ctx, b, g.At(i), p, prec, form)
		if d != nil {
			d.Index, d.Label = i, g.Label(i)
		}
		return d, err
	}
	if prec == FP64 {
		form = Direct
	}
	if err := g.Validate(b.Len()); err != nil {
		return nil, err
	}
	if err := g.CheckParams(p, form); err != nil {
		return nil, err
	}
	job := &Job{Bars: b, Grid: g, Params: p, Precision: prec, WMA: form}
	tr, err := g.Strategy.Trace(ctx, job, i)
	if err != nil {
		return nil, fmt.Errorf("inspect combo (%s): %w", g.Label(i), err)
	}
	sig := tr.Signal
	return &ComboDetail{Index: i, Label: g.Label(i), Precision: prec, WMA: form, Signal: &sig, Close: b.Close,
		First: tr.First, Margin: tr.Margin, Metrics: tr.Metrics, Trace: tr.Trace}, nil
}

// InspectCombo recomputes one combo on the CPU in the given precision and
// formulation through the same code path as the reference sweep (the
// registered Arithmetic's TraceCombo), so its metrics equal the sweep's bit
// for bit. It costs two indicator series and one backtest: milliseconds. As
// in a Study, fp64 is always the direct sum; form applies to fp32. Without a
// registered Arithmetic it returns ErrNoArithmetic.
func InspectCombo(ctx context.Context, b *Bars, c Combo, p Params, prec Precision, form Formulation) (*ComboDetail, error) {
	if prec == FP64 {
		form = Direct
	}
	g := Grid{HMA: Range{c.HMA, c.HMA, 1}, HMA3: Range{c.HMA3, c.HMA3, 1}}
	if err := g.Validate(b.Len()); err != nil {
		return nil, err
	}
	a, err := CPU()
	if err != nil {
		return nil, err
	}
	job := &Job{Bars: b, Grid: g, Params: p, Precision: prec, WMA: form}
	tr, err := a.TraceCombo(ctx, job, c)
	if err != nil {
		return nil, fmt.Errorf("inspect combo (hma %d, hma3 %d): %w", c.HMA, c.HMA3, err)
	}
	return &ComboDetail{Combo: c, Label: c.Label(), Precision: prec, WMA: form, H: tr.H, H3: tr.H3, Close: b.Close,
		Metrics: tr.Metrics, Trace: tr.Trace}, nil
}
