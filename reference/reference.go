// Package reference is the CPU backend: the fp64 reference every GPU result
// is checked against, and the fp32 CPU path whose arithmetic a GPU without
// fp64 reproduces bit for bit in the indicators (SPEC "Indicators").
package reference

import (
	"context"
	"fmt"
	"runtime"

	"sweepbench/engine"
)

// Backend is the CPU backend. The zero value uses every core.
type Backend struct {
	// Threads caps the worker count; 0 means runtime.GOMAXPROCS(0).
	Threads int
}

// New returns a CPU backend on every core.
func New() *Backend { return &Backend{} }

func (b *Backend) Name() string     { return "reference" }
func (b *Backend) Available() error { return nil }

func (b *Backend) threads() int {
	if b.Threads > 0 {
		return b.Threads
	}
	return runtime.GOMAXPROCS(0)
}

// Devices reports the CPU.
func (b *Backend) Devices() ([]engine.Device, error) {
	return []engine.Device{{Name: fmt.Sprintf("%s (%d threads)", CPUModel(), b.threads())}}, nil
}

// Prepare computes every indicator series the grid needs (each unique
// length once, shared by all combos) in the job's precision.
// job.Threads, when set, caps the threads below the backend's own count.
func (b *Backend) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	threads := b.threads()
	if job.Threads > 0 {
		threads = min(threads, job.Threads)
	}
	j := *job
	j.Threads = threads
	dev := fmt.Sprintf("%s (%d threads)", CPUModel(), threads)
	if job.Precision == engine.FP32 {
		ind, err := engine.GetIndicators[float32](ctx, &j)
		if err != nil {
			return nil, err
		}
		return newKernel(job, ind, threads, dev), nil
	}
	ind, err := engine.GetIndicators[float64](ctx, &j)
	if err != nil {
		return nil, err
	}
	return newKernel(job, ind, threads, dev), nil
}

type kernel[F engine.Float] struct {
	job     *engine.Job
	ind     *engine.Indicators[F]
	scratch []engine.Scratch[F]
	lanes   int
	device  string
}

func newKernel[F engine.Float](job *engine.Job, ind *engine.Indicators[F], lanes int, dev string) *kernel[F] {
	return &kernel[F]{job: job, ind: ind, scratch: make([]engine.Scratch[F], lanes), lanes: lanes, device: dev}
}

func (k *kernel[F]) Lanes() int     { return k.lanes }
func (k *kernel[F]) ChunkSize() int { return 2 }
func (k *kernel[F]) Device() string { return k.device }
func (k *kernel[F]) Close() error   { return nil }

// Compute runs engine.Backtest for each combo of the chunk.
func (k *kernel[F]) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	sc := &k.scratch[lane]
	for i := range out {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := k.job.Grid.At(first + i)
		h, h3 := k.ind.H[c.HMA], k.ind.H3[c.HMA3]
		warm := max(engine.HMAWarmup(c.HMA), engine.HMA3Warmup(c.HMA3))
		out[i] = engine.Backtest(h, h3, k.ind.R, warm, k.job.Params, sc)
	}
	return nil
}
