//go:build darwin

package metal

import (
	"context"
	"errors"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
)

// TestGPUConformance runs the backend conformance suite on this Mac's GPU:
// the reference's float32 results, every metric bit for bit but cvar_95
// (its sum runs in another order), the fp64 lane of a study on the
// fallback, the per-block statistics (its blocks check). Skipped where Metal is not available (scripts/metal-check.sh
// runs it).
func TestGPUConformance(t *testing.T) {
	conformance.TestBackend(t, New(), conformance.Options{FP32: hostTolerance, Bars: 6000})
}

// TestGPURefusesFP64: an fp64 job is refused before any device work.
func TestGPURefusesFP64(t *testing.T) {
	b := New()
	if err := b.Available(); err != nil {
		t.Skipf("Metal not available: %v", err)
	}
	job := &engine.Job{Bars: datatest.RandomWalk(datatest.Rand(t), 500, 30, 0.002),
		Grid:   engine.Grid{HMA: engine.Range{Start: 10, Stop: 20, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 24, Step: 12}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Precision: engine.FP64}
	if _, err := b.Prepare(context.Background(), job); !errors.Is(err, ErrNoFP64) {
		t.Errorf("fp64 job: %v, want ErrNoFP64", err)
	}
}

// TestGPUBlockStats: the per-block statistics block_stats_f32 computes
// after each sweep_f32 dispatch equal the reference's float32
// (BacktestBlocks) bit for bit: bar, trade and win counts, the sums,
// squares, losses, cubes and fourth powers (software binary64 on the GPU)
// and the log growth; on fresh random bars, 7 uneven blocks, long-short and
// long-only, the combos in dispatches of 500 (the rows of each at their
// offset), as cuda's TestGPUBlockStats checks block_stats.
func TestGPUBlockStats(t *testing.T) {
	b := New()
	if err := b.Available(); err != nil {
		t.Skipf("Metal not available: %v", err)
	}
	rng := datatest.Rand(t)
	bars := datatest.RandomWalk(rng, 30000, 5, 0.002)
	grid := engine.Grid{HMA: engine.Range{Start: 10, Stop: 400, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 41, Step: 1}} // 1,200 combos
	bounds, err := engine.BlockBounds(bars.Len(), 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
		p := engine.Params{Fee: engine.DefaultFee, Mode: mode, Source: engine.SourceClose, BarsPerYear: 525600}
		job := &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP32, WMA: engine.Direct, Blocks: bounds}
		want := engine.NewBlockStats(grid.Len(), bounds)
		if _, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{Blocks: want}); err != nil {
			t.Fatal(err)
		}
		k, err := b.Prepare(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		mk := k.(*kernel)
		mk.maxLaunch = 500
		got := engine.NewBlockStats(grid.Len(), bounds)
		err = mk.ComputeBlocks(context.Background(), 0, 0, make([]engine.Metrics, grid.Len()), got)
		if cerr := k.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		conformance.SameBlocks(t, mode.String(), got, want, 0)
	}
}
