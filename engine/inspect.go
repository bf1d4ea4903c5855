package engine

import (
	"context"
	"fmt"
)

// ComboDetail is everything the workbench shows for one combo in one
// precision: its indicator series, positions, equity curve and trades,
// all converted to float64 for display (len n each, NaN in the warm-up).
type ComboDetail struct {
	Combo
	Precision Precision
	WMA       Formulation
	H, H3     []float64 // HMA(x, Lh) and HMA3(close, L3)
	Close     []float64
	Metrics
	*Trace
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
	return &ComboDetail{Combo: c, Precision: prec, WMA: form, H: tr.H, H3: tr.H3, Close: b.Close,
		Metrics: tr.Metrics, Trace: tr.Trace}, nil
}
