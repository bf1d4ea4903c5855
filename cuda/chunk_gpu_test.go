package cuda

import (
	"context"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
)

// TestGPUChunkedAndOutOfMemory runs one grid three ways on the GPU: in one
// launch; in launches of at most 3,000 combos (as on a device with less
// free memory); and with launches of more than 2,500 combos failing out of
// memory (the halving retry, through the launch seam of kernel.compute).
// Every metric must be bit-identical, on fresh random bars.
func TestGPUChunkedAndOutOfMemory(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	bars := datatest.TickWalk(rng, 20000, 100, 0.01)
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 109, Step: 1}, HMA3: engine.Range{Start: 12, Stop: 111, Step: 1}}
	job := &engine.Job{Bars: bars, Grid: g, Params: defaultParams(), Precision: engine.FP32}
	run := func(label string, maxLaunch int, oomAbove int) ([]engine.Metrics, int) {
		t.Helper()
		k := prepared[float32](t, b, job, kernelFor(g.Len())) // lane 0 runs the whole grid
		l := k.lanes[0]
		if maxLaunch > 0 {
			l.maxLaunch = maxLaunch
		}
		launch := k.launch
		if oomAbove > 0 {
			launch = func(l *lane, first, cnt int) ([]float32, []int32, error) {
				if cnt > oomAbove {
					return nil, nil, &Error{Call: "cuMemAlloc", Code: codeOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY", String: "out of memory (test)"}
				}
				return k.launch(l, first, cnt)
			}
		}
		out := make([]engine.Metrics, g.Len())
		if err := k.compute(context.Background(), l, 0, out, launch); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		return out, l.launches
	}
	whole, n1 := run("one launch", 0, 0)
	capped, n2 := run("launches of 3,000", 3000, 0)
	oom, n3 := run("out of memory above 2,500", 0, 2500)

	t.Logf("launches: %d whole, %d under the memory cap, %d with the out-of-memory retry", n1, n2, n3)
	if n2 < 4 || n3 < 4 {
		t.Errorf("expected several launches: %d under the cap, %d with out-of-memory", n2, n3)
	}
	for name, got := range map[string][]engine.Metrics{"memory cap": capped, "out of memory": oom} {
		for i := range whole {
			if m, same := conformance.SameMetrics(got[i], whole[i]); !same {
				t.Fatalf("%s: combo %d: %s differs from one launch's", name, i, m)
			}
		}
	}
}

// TestGPUSharded: a thread-per-combo grid sharded over every GPU (each
// holding only its share of the HMA series, laneHMA) gives the bits of one
// GPU on every metric of every combo. With one GPU it still checks that
// engine.Sweep and a single Compute agree.
func TestGPUSharded(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	bars := datatest.TickWalk(rng, 8000, 100, 0.01)
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 109, Step: 1}, HMA3: engine.Range{Start: 12, Stop: 111, Step: 1}}
	for _, prec := range []engine.Precision{engine.FP32, engine.FP64} {
		job := &engine.Job{Bars: bars, Grid: g, Params: defaultParams(), Precision: prec}
		one := sweepRun(t, b.WithDevices(1), job)
		all := sweepRun(t, b, job)
		t.Logf("%s: %d combos on 1 and on %d GPUs", prec, g.Len(), b.DeviceCount())
		for i := range one {
			if m, same := conformance.SameMetrics(all[i], one[i]); !same {
				t.Fatalf("%s combo %d: %s differs on %d GPUs from one", prec, i, m, b.DeviceCount())
			}
		}
	}
}
