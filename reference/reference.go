// Package reference is the reference arithmetic and the CPU backend: the
// WMA, HMA and HMA3 series (wma.go, hull.go, series.go), the backtest
// (backtest.go; its metrics finished by kernels.Finish) in one generic
// code path for float64, the reference every GPU result is checked
// against, and float32, whose bits a GPU without fp64 reproduces (SPEC
// "Indicators"). Backend runs
// sweeps on every core; Arithmetic is what engine reaches through
// engine.Arithmetic (registered in init) for parity, the workbench, the
// estimate and the bench ladder. Its C twin for the GPU kernels, and the
// Go the CPU shares with them (the input series, the selection, the
// metrics' finish), is package reference/kernels.
//
// reference imports engine (the vocabulary: bars, grid, params, metrics)
// and reference/kernels, nothing else of sweepbench; engine never imports
// it, nor do the GPU backends.
package reference

import (
	"context"
	"fmt"
	"runtime"

	"sweepbench/engine"
)

var (
	_ engine.Backend = (*Backend)(nil)
	_ engine.Kernel  = (*kernel[float64])(nil)
	_ engine.Kernel  = (*kernel[float32])(nil)
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
// length once, shared by all combos) in the job's precision. A strategy
// grid (job.Grid.Strategy, SPEC Part 2) is prepared by its own arithmetic
// (package strategy), on the same threads.
// job.Threads, when set, caps the threads below the backend's own count.
func (b *Backend) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	threads := b.threads()
	if job.Threads > 0 {
		threads = min(threads, job.Threads)
	}
	if job.Grid.Strategy != nil {
		return job.Grid.Strategy.Prepare(ctx, job, threads)
	}
	j := *job
	j.Threads = threads
	dev := fmt.Sprintf("%s (%d threads)", CPUModel(), threads)
	if job.Precision == engine.FP32 {
		ind, err := GetIndicators[float32](ctx, &j)
		if err != nil {
			return nil, err
		}
		return newKernel(job, ind, threads, dev), nil
	}
	ind, err := GetIndicators[float64](ctx, &j)
	if err != nil {
		return nil, err
	}
	return newKernel(job, ind, threads, dev), nil
}

type kernel[F Float] struct {
	job     *engine.Job
	ind     *engine.Indicators[F]
	x       *Exec[F] // the execution options' prices (JobExec; nil: Part 1's fills)
	scratch []Scratch[F]
	lanes   int
	device  string
}

func newKernel[F Float](job *engine.Job, ind *engine.Indicators[F], lanes int, dev string) *kernel[F] {
	return &kernel[F]{job: job, ind: ind, x: JobExec[F](job), scratch: make([]Scratch[F], lanes), lanes: lanes, device: dev}
}

// JobExec is the Exec of hull job (its bars' prices in F, no stops: hull
// takes none), when its execution options need one (fill next-open;
// slippage and the risk-free rate run in the fast loop), else nil.
func JobExec[F Float](job *engine.Job) *Exec[F] {
	if job.Params.Fill != engine.FillNextOpen {
		return nil
	}
	return NewExec[F](job.Bars)
}

func (k *kernel[F]) Lanes() int     { return k.lanes }
func (k *kernel[F]) ChunkSize() int { return 2 }
func (k *kernel[F]) Device() string { return k.device }
func (k *kernel[F]) Close() error   { return nil }

// Compute runs BacktestX for each combo of the chunk.
func (k *kernel[F]) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	return k.ComputeBlocks(ctx, lane, first, out, nil)
}

// ComputeBlocks is Compute with each combo's per-block statistics
// (engine.BlockKernel; as BacktestBlocks) when bs is not nil, with the
// job's execution options (BacktestX).
func (k *kernel[F]) ComputeBlocks(ctx context.Context, lane, first int, out []engine.Metrics, bs *engine.BlockStats) error {
	sc := &k.scratch[lane]
	for i := range out {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := k.job.Grid.At(first + i)
		h, h3 := k.ind.H[c.HMA], k.ind.H3[c.HMA3]
		out[i] = BacktestX(h, h3, k.ind.R, engine.ComboWarmup(c), k.job.Params, k.x, sc, bs, i)
	}
	return nil
}

var _ engine.BlockKernel = (*kernel[float64])(nil)
