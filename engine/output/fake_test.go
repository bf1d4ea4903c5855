package output

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/data/datatest"
)

// The fake backend of package engine's tests (sweep_test.go), twinned
// here: the writers' tests run studies whose every result names its combo.

func randomWalk(rng *rand.Rand, n int, start, vol float64) []float64 {
	return datatest.Closes(rng, n, start, vol)
}

func closeBars(close []float64) *engine.Bars { return datatest.CloseBars(close) }

// fakeBackend is a Backend whose kernel writes Metrics{TotalReturn: index,
// Sharpe: index} for each combo (so every result says which combo it is),
// unless compute overrides it. It records which combos it computed.
type fakeBackend struct {
	lanes, chunk int
	prepare      func(ctx context.Context, job *engine.Job) error
	compute      func(ctx context.Context, lane, first int, out []engine.Metrics) error
	closePanic   bool

	mu       sync.Mutex
	computed []int
	closed   atomic.Bool
}

func (f *fakeBackend) Name() string     { return "fake" }
func (f *fakeBackend) Available() error { return nil }
func (f *fakeBackend) Devices() ([]engine.Device, error) {
	return []engine.Device{{Name: "fake device"}}, nil
}
func (f *fakeBackend) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	if f.prepare != nil {
		if err := f.prepare(ctx, job); err != nil {
			return nil, err
		}
	}
	return &fakeKernel{f}, nil
}

type fakeKernel struct{ b *fakeBackend }

func (k *fakeKernel) Lanes() int     { return k.b.lanes }
func (k *fakeKernel) ChunkSize() int { return k.b.chunk }
func (k *fakeKernel) Device() string { return "fake device" }
func (k *fakeKernel) Close() error {
	k.b.closed.Store(true)
	if k.b.closePanic {
		panic("driver crashed while releasing memory")
	}
	return nil
}

func (k *fakeKernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	if k.b.compute != nil {
		if err := k.b.compute(ctx, lane, first, out); err != nil {
			return err
		}
	} else {
		fillIndex(first, out)
	}
	k.b.mu.Lock()
	for i := range out {
		k.b.computed = append(k.b.computed, first+i)
	}
	k.b.mu.Unlock()
	return nil
}

func fillIndex(first int, out []engine.Metrics) {
	for i := range out {
		out[i] = engine.Metrics{TotalReturn: float64(first + i), Sharpe: float64(first + i)}
	}
}

// sweepJob is a 10 x 10 grid (100 combos) over bars long enough for it.
// Its HMA3 step (3) holds no twins (engine.Grid.Distinct), so the kernel is asked
// for the grid's own combos and the fake's metrics name them.
func sweepJob() *engine.Job {
	rng := rand.New(rand.NewPCG(71, 72))
	return &engine.Job{
		Bars:   closeBars(randomWalk(rng, 100, 100, 0.01)),
		Grid:   engine.Grid{HMA: engine.Range{Start: 2, Stop: 11, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 33, Step: 3}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600},
	}
}

// precisionAware returns a fake backend that remembers the precision of the
// job it prepared (engine.RunStudy runs fp64, then fp32, on the same backend).
func precisionAware(compute func(prec engine.Precision, ctx context.Context, first int, out []engine.Metrics) error) *fakeBackend {
	var prec atomic.Int32
	return &fakeBackend{lanes: 1, chunk: 5,
		prepare: func(_ context.Context, job *engine.Job) error { prec.Store(int32(job.Precision)); return nil },
		compute: func(ctx context.Context, _, first int, out []engine.Metrics) error {
			return compute(engine.Precision(prec.Load()), ctx, first, out)
		}}
}

func fakeStudy(b engine.Backend) *engine.Study {
	job := sweepJob()
	return &engine.Study{Dataset: &data.Dataset{Bars: *job.Bars, Info: data.Info{Name: "synthetic", Bars: job.Bars.Len()}},
		Grid: job.Grid, Params: job.Params, Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: b}
}

// cancelledStudy runs the fake study and cancels it when the lane of
// precision prec reaches combo at; the error must be context.Canceled.
func cancelledStudy(t *testing.T, prec engine.Precision, at int) *engine.Report {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := precisionAware(func(p engine.Precision, ctx context.Context, first int, out []engine.Metrics) error {
		if p == prec && first >= at {
			cancel()
			return ctx.Err()
		}
		fillIndex(first, out)
		return nil
	})
	rep, err := engine.RunStudy(ctx, fakeStudy(b), engine.StudyOptions{})
	if !errors.Is(err, context.Canceled) || rep == nil {
		t.Fatalf("err %v rep %v", err, rep)
	}
	return rep
}
