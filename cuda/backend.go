// Package cuda is the NVIDIA GPU backend: the CUDA driver API reached
// through purego (dlopen of libcuda.so.1, no cgo), PTX kernels generated
// from kernels/*.cu and embedded, one goroutine per GPU locked to its OS
// thread owning the context. It computes the indicator series on the GPU
// (bit for bit as the reference's fp64 and fp32 paths) and sweeps the combos
// (kernels/sweep.cu): grids under segMaxCombos with one thread block per
// combo, its bars split across the block's threads and stitched exactly;
// larger grids with one thread per combo. The host finishes each combo's
// ratios exactly as reference.Backtest does. docs/PERFORMANCE.md has the
// H200 figures.
package cuda

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"sweepbench/engine"
)

// Backend is the CUDA backend. Its zero value is usable; New returns one.
type Backend struct {
	once sync.Once
	devs []*device
	err  error
}

// New returns the CUDA backend. Nothing is loaded until Available,
// Devices or Prepare is called.
func New() *Backend { return &Backend{} }

// Name is the --backend value.
func (b *Backend) Name() string { return "cuda" }

// Available loads the driver, finds the GPUs and loads the kernels on each;
// it returns why not when any of that fails ("CUDA driver not found
// (libcuda.so.1): ...", "no CUDA device", a PTX JIT error with its log).
func (b *Backend) Available() error { return b.init() }

func (b *Backend) init() error {
	b.once.Do(func() {
		if err := loadDriver(); err != nil {
			b.err = err
			return
		}
		var count int32
		if err := check("cuDeviceGetCount", drv.cuDeviceGetCount(&count)); err != nil {
			b.err = err
			return
		}
		if count == 0 {
			b.err = errors.New("no CUDA device")
			return
		}
		for i := 0; i < int(count); i++ {
			d, err := startDevice(i)
			if err != nil {
				b.err = err
				return
			}
			b.devs = append(b.devs, d)
		}
	})
	return b.err
}

// Devices describes each GPU: name, memory, compute capability, driver.
func (b *Backend) Devices() ([]engine.Device, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	out := make([]engine.Device, len(b.devs))
	for i, d := range b.devs {
		out[i] = d.info
	}
	return out, nil
}

// Prepare uploads the job's series to every GPU and computes its indicator
// series there, in the job's precision and WMA formulation (job.WMA, as
// reference.GetIndicators honours it), for the sweep kernel the grid's
// size calls for (kernelFor; a tile of a larger study takes the whole
// study's kernel, job.StudyCombos, so its results are the untiled ones).
func (b *Backend) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	sk := kernelFor(job.Combos())
	if job.Blocks != nil {
		// Per-block statistics are read from the positions the
		// thread-per-combo kernel stores (block_stats).
		sk = threadPerCombo
	}
	return b.prepare(ctx, job, sk)
}

// prepare is Prepare for a given sweep kernel (tests force one).
func (b *Backend) prepare(ctx context.Context, job *engine.Job, sk sweepKernel) (engine.Kernel, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	devs := b.devs
	if sk.seg && len(devs) > 1 {
		// A grid small enough for the bar-parallel kernel (80 combos) runs
		// on one GPU: a second one adds its launch and copies and saves
		// under a millisecond (measured: 57k vs 67k combos/s on 2 vs 1 H200).
		devs = devs[:1]
	}
	if job.Precision == engine.FP32 {
		return prepare[float32](ctx, devs, job, sk)
	}
	return prepare[float64](ctx, devs, job, sk)
}

// DeviceCount is the number of GPUs the backend shards combos over (0 when
// CUDA is not available), for engine.MultiDevice.
func (b *Backend) DeviceCount() int {
	if b.init() != nil {
		return 0
	}
	return len(b.devs)
}

// WithDevices returns a backend restricted to the first n GPUs (at least
// one), sharing their contexts and loaded kernels (engine.MultiDevice).
// When CUDA is not available it returns b itself, whose Available says why.
func (b *Backend) WithDevices(n int) engine.Backend {
	if b.init() != nil {
		return b
	}
	v := &Backend{devs: b.devs[:min(max(n, 1), len(b.devs))]}
	v.once.Do(func() {}) // already initialised: the devices are b's
	return v
}

// The optional engine interfaces the backend implements: the bench ladder
// shards over devices and exports indicator series (M5).
var (
	_ engine.Backend         = (*Backend)(nil)
	_ engine.MultiDevice     = (*Backend)(nil)
	_ engine.IndicatorDevice = (*Backend)(nil)
	_ engine.SeriesDevice    = (*Backend)(nil)
)

// deviceLabel names the devices a kernel runs on, for reports.
func deviceLabel(devs []*device) string {
	if len(devs) == 1 {
		return fmt.Sprintf("%s (GPU 0)", devs[0].info.Name)
	}
	return fmt.Sprintf("%d x %s", len(devs), devs[0].info.Name)
}
