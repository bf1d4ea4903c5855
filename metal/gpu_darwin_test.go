//go:build darwin

package metal

import (
	"context"
	"errors"
	"math/rand"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
)

// TestGPUMatchesEngineFP32 runs the Metal backend on this Mac's GPU and
// wants the reference's float32 results (the reference backend at fp32): every
// metric bit for bit but CVaR (its sum runs in another order). Skipped
// where Metal is not available (scripts/metal-check.sh runs it).
func TestGPUMatchesEngineFP32(t *testing.T) {
	b := New()
	if err := b.Available(); err != nil {
		t.Skipf("Metal not available: %v", err)
	}
	bars := randomBars(rand.New(rand.NewSource(7)), 6000)
	hr, _ := engine.ParseRange("hma", "10:90:20")
	h3r, _ := engine.ParseRange("hma3", "12:120:27")
	for _, c := range []struct {
		name string
		p    engine.Params
		wma  engine.Formulation
	}{
		{"direct long-short close", engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, BarsPerYear: 525600}, engine.Direct},
		{"direct long-only hlc3", engine.Params{Fee: engine.DefaultFee, Mode: engine.LongOnly, Source: engine.SourceHLC3, BarsPerYear: 525600}, engine.Direct},
		{"prefix", engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, engine.Prefix},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := &engine.Job{Bars: bars, Grid: engine.Grid{HMA: hr, HMA3: h3r}, Params: c.p, Precision: engine.FP32, WMA: c.wma}
			got, err := engine.Sweep(context.Background(), b, job, engine.SweepOptions{})
			if err != nil {
				t.Fatal(err)
			}
			job.Cache = nil
			want, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Results) != len(want.Results) {
				t.Fatalf("%d results, reference %d", len(got.Results), len(want.Results))
			}
			for i := range got.Results {
				compareMetrics(t, got.Results[i].Combo, got.Results[i].Metrics, want.Results[i].Metrics)
			}
			t.Logf("%s: %d combos, indicator GPU time %v", got.Device, len(got.Results), got.Indicators)
		})
	}
	job := &engine.Job{Bars: bars, Grid: engine.Grid{HMA: hr, HMA3: h3r}, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Precision: engine.FP64}
	if _, err := b.Prepare(context.Background(), job); !errors.Is(err, ErrNoFP64) {
		t.Errorf("fp64 job: %v, want ErrNoFP64", err)
	}
}
