package cuda

import (
	"context"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
)

// TestGPUBlockStats: the per-block statistics block_stats computes after
// each thread-per-combo launch equal the reference's (BacktestBlocks), in
// fp64 and fp32: bar, trade and win counts, the sums, squares, losses,
// cubes and fourth powers and the log growth, bit for bit; on fresh random bars, 7 uneven blocks, long-short and
// long-only, the combos in launches of 500 (several launches: the rows of
// each at their offset); the same bits (block_stats computes what the
// reference does, in the same order).
func TestGPUBlockStats(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	bars := datatest.RandomWalk(rng, 30000, 5, 0.002)
	grid := engine.Grid{HMA: engine.Range{Start: 10, Stop: 400, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 41, Step: 1}} // 1,200 combos
	bounds, err := engine.BlockBounds(bars.Len(), 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
		for _, prec := range []engine.Precision{engine.FP64, engine.FP32} {
			p := engine.Params{Fee: engine.DefaultFee, Mode: mode, Source: engine.SourceClose, BarsPerYear: 525600}
			job := &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: prec, WMA: engine.Direct, Blocks: bounds}
			want := engine.NewBlockStats(grid.Len(), bounds)
			if _, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{Blocks: want}); err != nil {
				t.Fatal(err)
			}
			got := engine.NewBlockStats(grid.Len(), bounds)
			out := make([]engine.Metrics, grid.Len())
			if prec == engine.FP64 {
				k := prepared[float64](t, b, job, threadPerCombo)
				k.lanes[0].maxLaunch = 500
				err = k.ComputeBlocks(context.Background(), 0, 0, out, got)
			} else {
				k := prepared[float32](t, b, job, threadPerCombo)
				k.lanes[0].maxLaunch = 500
				err = k.ComputeBlocks(context.Background(), 0, 0, out, got)
			}
			if err != nil {
				t.Fatal(err)
			}
			conformance.SameBlocks(t, mode.String()+" "+prec.String(), got, want, 0)
		}
	}
}
