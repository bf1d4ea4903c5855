package results

import (
	"context"
	"fmt"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// inspectStrategy recomputes combo idx of a strategy study in each of its
// precisions but the ones in missing through engine.InspectIndex, the
// sweep's own path (the family's states, fp64 through the direct sums,
// fp32 in the study's formulation, then their backtest), so the metrics
// equal the table's. The details hold close, the positions and the trades
// (no H, H3: the chart is a signal chart); the fp64 margins, the first
// valid bar and the fp64 signal (lines and levels) go in the Inspection.
func inspectStrategy(s *engine.Study, idx int, missing map[engine.Precision]string) *common.Inspection {
	ins := &common.Inspection{Index: idx, Missing: missing}
	bars := &s.Dataset.Bars
	n := bars.Len()
	for _, p := range s.Precisions {
		if missing[p] != "" {
			continue
		}
		d, err := engine.InspectIndex(context.Background(), bars, s.Grid, idx, s.Params, p, s.WMA)
		if err != nil {
			ins.Err = fmt.Errorf("%s: %w", common.ComboName(s.Grid, idx), err)
			ins.D64, ins.D32 = nil, nil
			return ins
		}
		ins.First = d.First
		if p == engine.FP32 {
			ins.D32 = d
			continue
		}
		ins.D64, ins.Margin = d, d.Margin
		if sig := d.Signal; sig != nil {
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
	return ins
}
