package results

import (
	"fmt"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
	"sweepbench/strategy"
	"sweepbench/tui/common"
)

// inspectStrategy recomputes combo idx of a strategy study in each of its
// precisions but the ones in missing, as the sweep does: the family's
// states (strategy.Evaluate, fp64 through the direct sums, fp32 in the
// study's formulation) and their backtest (reference.BacktestPositions),
// so the metrics equal the table's. The details hold close, the positions
// and the trades (no H, H3: the chart is a signal chart); the fp64 margins
// go in Inspection.Margin.
func inspectStrategy(s *engine.Study, idx int, missing map[engine.Precision]string) *common.Inspection {
	ins := &common.Inspection{Index: idx, Missing: missing}
	gs := s.Grid.Strategy
	sg, err := strategy.NewGrid(gs.Family(), gs.Texts(), gs.FastBelowSlow())
	if err != nil {
		ins.Err = err
		return ins
	}
	if idx < 0 || idx >= sg.Len() {
		ins.Err = fmt.Errorf("combo %d is not in the grid (%d combos)", idx, sg.Len())
		return ins
	}
	c := sg.At(idx)
	bars := &s.Dataset.Bars
	n := bars.Len()
	for _, p := range s.Precisions {
		if missing[p] != "" {
			continue
		}
		st := make([]strategy.State, n)
		d := &engine.ComboDetail{Precision: p, WMA: s.WMA, Close: bars.Close}
		var first int
		if p == engine.FP32 {
			first, err = strategy.Evaluate(sg, c, strategy.NewInputs[float32](bars, s.Params.Source), s.WMA, st, nil)
			if err == nil {
				d.Metrics, d.Trace = reference.BacktestPositionsTrace(st, kernels.BarReturns[float32](bars), first, s.Params)
			}
			ins.D32 = d
		} else {
			d.WMA = engine.Direct
			ins.Margin = make([]float64, n)
			in := strategy.NewInputs[float64](bars, s.Params.Source)
			first, err = strategy.Evaluate(sg, c, in, engine.Direct, st, ins.Margin)
			if err == nil {
				d.Metrics, d.Trace = reference.BacktestPositionsTrace(st, kernels.BarReturns[float64](bars), first, s.Params)
			}
			if err == nil {
				var sig strategy.Signal
				if sig, err = strategy.SignalSeries(sg, c, in, engine.Direct); err == nil {
					ins.SignalScale = sig.Scale
					for _, l := range sig.Lines {
						ins.Signal = append(ins.Signal, common.SignalLine{Name: l.Name, Values: l.Values})
					}
					for _, l := range sig.Levels {
						v := make([]float64, n)
						for i := range v {
							v[i] = l.Value
						}
						ins.Signal = append(ins.Signal, common.SignalLine{Name: l.Name, Values: v, Level: true})
					}
				}
			}
			ins.D64 = d
		}
		if err != nil {
			ins.Err = fmt.Errorf("%s: %w", common.ComboName(s.Grid, idx), err)
			ins.D64, ins.D32 = nil, nil
			return ins
		}
		ins.First = first
	}
	return ins
}
