package cuda

import (
	"context"
	"math"
	"testing"
	"time"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
)

// TestWorstEdge: the histogram edge pass 2 starts from holds at least the
// k worst values (all of them when there are fewer), and no bin above it
// would.
func TestWorstEdge(t *testing.T) {
	hist := make([]uint64, parityBins)
	for _, c := range []struct {
		bin   int
		count uint64
	}{{100, 5}, {9000, 700}, {9100, 200}, {12000, 50}, {16383, 3}} {
		hist[c.bin] = c.count
	}
	for _, c := range []struct {
		k         int
		bin       int
		wantCount uint64
	}{{1, 16383, 3}, {3, 16383, 3}, {4, 12000, 53}, {253, 9100, 253}, {254, 9000, 953}, {953, 9000, 953}, {954, 100, 958}, {1000, 100, 958}} {
		bin, n := worstEdge(hist, c.k)
		if bin != c.bin || n != c.wantCount {
			t.Errorf("worstEdge(k=%d) = bin %d, %d values; want bin %d, %d", c.k, bin, n, c.bin, c.wantCount)
		}
	}
	if bin, n := worstEdge(make([]uint64, parityBins), 1000); n != 0 {
		t.Errorf("empty histogram: bin %d, %d values; want none", bin, n)
	}
	// The bins are monotone in the margin: the kernel's bits >> 49.
	prev := -1
	for _, m := range []float64{0, 1e-300, 1e-12, 1e-5, 1e-5 * (1 + 1.0/8), 0.5, 1, 3, math.Inf(1), math.NaN()} {
		b := int(math.Float64bits(m) >> parityShift)
		if b < prev || b >= parityBins {
			t.Errorf("margin %g: bin %d after %d (of %d)", m, b, prev, parityBins)
		}
		prev = b
	}
}

// TestGPUParityStudy: RunStudy on the GPU finds the flips there (the
// report names the device), and its parity report equals, field by field,
// the one the CPU builds from the same runs (SWEEPBENCH_PARITY=cpu): the
// same verdict, counts and flip bars, margins and indicator errors within
// 1e-12. Fresh random bars at FIL-like prices, direct fp32 (a few flips)
// and prefix fp32 (tens of thousands: the worst-flip list is a selection),
// long-short and long-only, in launches of 1,000 combos (several per pass).
func TestGPUParityStudy(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	bars := datatest.RandomWalk(rng, 60000, 5, 0.002)
	ds := &data.Dataset{Bars: *bars, Info: data.Info{Name: "random walk", Bars: bars.Len(), MedianSpacing: time.Minute}}
	t.Setenv(engine.ParityEnv, "device") // 1,600 combos: below engine.DeviceParityMinCombos
	defer func(v int) { parityLaunch = v }(parityLaunch)
	parityLaunch = 1000
	for _, c := range []struct {
		name string
		form engine.Formulation
		mode engine.Mode
	}{{"direct long-short", engine.Direct, engine.LongShort}, {"prefix long-only", engine.Prefix, engine.LongOnly}} {
		t.Run(c.name, func(t *testing.T) {
			s := &engine.Study{Dataset: ds, Backend: b, Precisions: []engine.Precision{engine.FP64, engine.FP32}, WMA: c.form,
				Grid:   engine.Grid{HMA: engine.Range{Start: 10, Stop: 400, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 480, Step: 12}},
				Params: engine.Params{Fee: engine.DefaultFee, Mode: c.mode, Source: engine.SourceClose, BarsPerYear: 525600}}
			ctx := context.Background()
			rep, err := engine.RunStudy(ctx, s, engine.StudyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Parity
			if got == nil || got.Device == "" {
				t.Fatalf("the parity report was not built on the GPU (device %q)", got.Device)
			}
			// The CPU's report from the same runs, with its own series.
			ind64, err := reference.BuildIndicators[float64](ctx, bars, s.Grid, s.Params.Source, engine.Direct)
			if err != nil {
				t.Fatal(err)
			}
			ind32, err := reference.BuildIndicators[float32](ctx, bars, s.Grid, s.Params.Source, c.form)
			if err != nil {
				t.Fatal(err)
			}
			want, err := engine.Compare(ctx, engine.ParityInput[float64, float32]{Bars: bars, Grid: s.Grid, Params: s.Params,
				Ref: rep.Run(engine.FP64), Test: rep.Run(engine.FP32), RefInd: ind64, TestInd: ind32})
			if err != nil {
				t.Fatal(err)
			}
			conformance.SameParity(t, "cuda", got, want, 1e-12)
			if c.form == engine.Prefix && want.FlipCount <= engine.MaxFlipsListed {
				t.Errorf("prefix: %d flips, want more than %d (the list must be a selection)", want.FlipCount, engine.MaxFlipsListed)
			}
			t.Logf("%s: %d combos, %d flips (%d non-borderline), verdict %s, device pass %v", c.name, len(got.Combos), got.FlipCount,
				got.NonBorderlineFlips, got.Verdict, got.Device)
		})
	}
}
