package cuda

import (
	"context"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
)

// TestGPUIndicators32Export checks the series Indicators32 copies back
// (bench rung M5) against the reference's float32 path, bit for bit, on fresh
// random bars, direct and prefix.
func TestGPUIndicators32Export(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	bars := datatest.TickWalk(rng, 20000, 100, 0.01)
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 200, Step: 19}, HMA3: engine.Range{Start: 12, Stop: 240, Step: 19}}
	for _, form := range []engine.Formulation{engine.Direct, engine.Prefix} {
		job := &engine.Job{Bars: bars, Grid: g, Params: defaultParams(), Precision: engine.FP32, WMA: form}
		got, err := b.Indicators32(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		want, err := reference.BuildIndicators[float32](context.Background(), bars, g, engine.SourceClose, form)
		if err != nil {
			t.Fatal(err)
		}
		for L, w := range want.H {
			if i, ok := conformance.SameSeries(got.H[L], w); !ok {
				t.Errorf("%s h %d: bar %d differs", form, L, i)
			}
		}
		for L, w := range want.H3 {
			if i, ok := conformance.SameSeries(got.H3[L], w); !ok {
				t.Errorf("%s h3 %d: bar %d differs", form, L, i)
			}
		}
	}
}
