package output

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
)

// BenchmarkStreamGPUChunksMemory streams a GPU-sized study to Parquet as
// `run --format parquet --out F --no-save` does (StudyOptions.Discard, the
// RowWriter's sink): 4 x 10^6 combos in fp64 from one lane of 2^18-combo
// chunks (cuda's maxChunk) whose kernel costs nothing, so the writer is the
// slower side, as it can be on an H200. It reports the peak Go heap in use
// (sampled every millisecond) per combo: what the chunks queued for the
// writer, the writer and the sweep hold, which must not grow with the grid.
func BenchmarkStreamGPUChunksMemory(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	bars := closeBars(randomWalk(rng, 4100, 100, 0.01))
	grid := engine.Grid{HMA: engine.Range{Start: 10, Stop: 2009, Step: 1}, HMA3: engine.Range{Start: 12, Stop: 4010, Step: 2}}
	s := &engine.Study{Dataset: &data.Dataset{Bars: *bars, Info: data.Info{Name: "synthetic", Bars: bars.Len()}},
		Grid: grid, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Precisions: []engine.Precision{engine.FP64},
		Backend: freeBackend{}}
	var peak atomic.Uint64
	for b.Loop() {
		runtime.GC()
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		out, err := os.Create(filepath.Join(b.TempDir(), "out.parquet"))
		if err != nil {
			b.Fatal(err)
		}
		rw, err := NewRowWriter(out, RowsParquet, s)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{Sink: rw.Sink, Discard: true, Keep: 20, NoParityRows: true, Results: rw.Results})
		if err != nil {
			b.Fatal(err)
		}
		if err := rw.Close(rep); err != nil {
			b.Fatal(err)
		}
		out.Close()
		close(stop)
		<-sampled
	}
	b.ReportMetric(float64(peak.Load())/float64(grid.Len()), "peak-heap-B/combo")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}

// freeBackend is a Backend of one lane of 2^18-combo chunks whose kernel
// costs nothing: each combo's total return its index, its Sharpe falling
// with it (the best so far is the first: no copy per combo, as on real
// data), nothing recorded.
type freeBackend struct{}

func (freeBackend) Name() string                      { return "free" }
func (freeBackend) Available() error                  { return nil }
func (freeBackend) Devices() ([]engine.Device, error) { return []engine.Device{{Name: "free"}}, nil }
func (freeBackend) Prepare(context.Context, *engine.Job) (engine.Kernel, error) {
	return freeBackend{}, nil
}
func (freeBackend) Lanes() int     { return 1 }
func (freeBackend) ChunkSize() int { return 1 << 18 }
func (freeBackend) Device() string { return "free" }
func (freeBackend) Close() error   { return nil }
func (freeBackend) Compute(_ context.Context, _, first int, out []engine.Metrics) error {
	for i := range out {
		out[i] = engine.Metrics{TotalReturn: float64(first + i), Sharpe: -float64(first + i)}
	}
	return nil
}
