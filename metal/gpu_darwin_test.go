//go:build darwin

package metal

import (
	"context"
	"errors"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference/conformance"
)

// TestGPUConformance runs the backend conformance suite on this Mac's GPU:
// the reference's float32 results, every metric bit for bit but cvar_95
// (its sum runs in another order), the fp64 lane of a study on the
// fallback. Skipped where Metal is not available (scripts/metal-check.sh
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
