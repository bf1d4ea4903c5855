package cuda

import (
	"context"
	"math"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
)

// TestGPUBlockStats: the per-block statistics block_stats computes after
// each thread-per-combo launch equal the reference's (BacktestBlocks), in
// fp64 and fp32: bar, trade and win counts exactly, the sums, squares,
// losses, cubes and fourth powers and the log growth within 1e-12
// relative; on fresh random bars, 7 uneven blocks, long-short and
// long-only, the combos in launches of 500 (several launches: the rows of
// each at their offset).
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
			sameBlocks(t, mode.String()+" "+prec.String(), got, want, 1e-12)
		}
	}
}

// sameBlocks fails t unless got and want hold the same statistics: counts
// exactly, sums within rel of each other (or 1e-300 apart).
func sameBlocks(t *testing.T, label string, got, want *engine.BlockStats, rel float64) {
	t.Helper()
	near := func(a, b float64) bool {
		return a == b || math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) || math.Abs(a-b) < 1e-300
	}
	bad := 0
	for i := range want.Sum {
		if got.Bars[i] != want.Bars[i] || got.Trades[i] != want.Trades[i] || got.Wins[i] != want.Wins[i] ||
			!near(got.Sum[i], want.Sum[i]) || !near(got.SumSq[i], want.SumSq[i]) || !near(got.SumDown[i], want.SumDown[i]) || !near(got.SumLog[i], want.SumLog[i]) {
			if bad++; bad <= 5 {
				t.Errorf("%s: combo %d block %d: got bars %d trades %d wins %d sum %.17g sq %.17g down %.17g log %.17g; want %d %d %d %.17g %.17g %.17g %.17g",
					label, i/want.Blocks, i%want.Blocks, got.Bars[i], got.Trades[i], got.Wins[i], got.Sum[i], got.SumSq[i], got.SumDown[i], got.SumLog[i],
					want.Bars[i], want.Trades[i], want.Wins[i], want.Sum[i], want.SumSq[i], want.SumDown[i], want.SumLog[i])
			}
		}
	}
	for c := range want.Sum3 {
		if !near(got.Sum3[c], want.Sum3[c]) || !near(got.Sum4[c], want.Sum4[c]) {
			if bad++; bad <= 10 {
				t.Errorf("%s: combo %d: sum rs^3 %.17g rs^4 %.17g, want %.17g %.17g", label, c, got.Sum3[c], got.Sum4[c], want.Sum3[c], want.Sum4[c])
			}
		}
	}
	trades := 0
	for _, n := range want.Trades {
		trades += int(n)
	}
	if trades == 0 {
		t.Fatalf("%s: no trade in any block: the case proves nothing", label)
	}
	t.Logf("%s: %d combos x %d blocks, %d trades, %d differences", label, want.Combos, want.Blocks, trades, bad)
}
