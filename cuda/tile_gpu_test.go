package cuda

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/data/datatest"
)

// TestGPUTiledStudy: a study of 96 x 100 = 9,600 combos (above
// segMaxCombos: the thread-per-combo kernel) run in tiles of fewer than
// 8,192 combos under a small series budget computes every combo bit for
// bit as the untiled study on the GPU does (each tile takes the whole
// study's kernel, engine.Job.StudyCombos), with the same parity report.
// Fresh random bars, both precisions, prefix fp32 (flips to compare).
func TestGPUTiledStudy(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	bars := datatest.RandomWalk(rng, 20000, 5, 0.002)
	ds := &data.Dataset{Bars: *bars, Info: data.Info{Name: "random walk", Bars: bars.Len(), MedianSpacing: time.Minute}}
	study := func() *engine.Study {
		return &engine.Study{Dataset: ds, Backend: b, Precisions: []engine.Precision{engine.FP64, engine.FP32}, WMA: engine.Prefix,
			Grid:   engine.Grid{HMA: engine.Range{Start: 10, Stop: 295, Step: 3}, HMA3: engine.Range{Start: 12, Stop: 309, Step: 3}},
			Params: engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600}}
	}
	if n := study().Grid.Len(); n != 9600 || n < segMaxCombos {
		t.Fatalf("grid of %d combos: want 9,600, above segMaxCombos %d", n, segMaxCombos)
	}
	ctx := context.Background()
	whole, err := engine.RunStudy(ctx, study(), engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 196 series of 20,000 bars (160 KB in fp64): a budget of 40 series.
	t.Setenv(engine.SeriesBudgetEnv, fmt.Sprint(40*20000*8))
	tiled, err := engine.RunStudy(ctx, study(), engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tiled.Note, "run in ") {
		t.Fatalf("note %q: the study did not run in tiles", tiled.Note)
	}
	for i, wr := range whole.Runs {
		tr := tiled.Runs[i]
		if len(tr.Results) != len(wr.Results) {
			t.Fatalf("%s: %d results, want %d", wr.Precision, len(tr.Results), len(wr.Results))
		}
		for k := range wr.Results {
			// NaN-aware: a GPU lane leaves SPEC Part 2's trade metrics NaN.
			if _, same := conformance.SameMetrics(tr.Results[k].Metrics, wr.Results[k].Metrics); !same || tr.Results[k].Index != wr.Results[k].Index || tr.Results[k].Combo != wr.Results[k].Combo {
				t.Fatalf("%s combo %d: %+v, want the untiled %+v", wr.Precision, k, tr.Results[k], wr.Results[k])
			}
		}
	}
	conformance.SameParity(t, "tiled", tiled.Parity, whole.Parity, 1e-12)
	t.Logf("%s; %d flips", tiled.Note, whole.Parity.FlipCount)
}
