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
// formulation through the same code path as the reference sweep
// (BacktestTrace), so its metrics equal the sweep's bit for bit. It costs
// two indicator series and one backtest: milliseconds. As in a Study, fp64
// is always the direct sum; form applies to fp32.
func InspectCombo(ctx context.Context, b *Bars, c Combo, p Params, prec Precision, form Formulation) (*ComboDetail, error) {
	if prec == FP64 {
		form = Direct
	}
	g := Grid{HMA: Range{c.HMA, c.HMA, 1}, HMA3: Range{c.HMA3, c.HMA3, 1}}
	if err := g.Validate(b.Len()); err != nil {
		return nil, err
	}
	d := &ComboDetail{Combo: c, Precision: prec, WMA: form, Close: b.Close}
	warm := max(HMAWarmup(c.HMA), HMA3Warmup(c.HMA3))
	var err error
	if prec == FP32 {
		err = inspect[float32](ctx, b, g, c, p, form, warm, d)
	} else {
		err = inspect[float64](ctx, b, g, c, p, form, warm, d)
	}
	if err != nil {
		return nil, fmt.Errorf("inspect combo (hma %d, hma3 %d): %w", c.HMA, c.HMA3, err)
	}
	return d, nil
}

func inspect[F Float](ctx context.Context, b *Bars, g Grid, c Combo, p Params, form Formulation, warm int, d *ComboDetail) error {
	ind, err := BuildIndicators[F](ctx, b, g, p.Source, form)
	if err != nil {
		return err
	}
	h, h3 := ind.H[c.HMA], ind.H3[c.HMA3]
	d.Metrics, d.Trace = BacktestTrace(h, h3, ind.R, warm, p)
	d.H, d.H3 = toFloat64(h), toFloat64(h3)
	return nil
}

func toFloat64[F Float](x []F) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
