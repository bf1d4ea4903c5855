// Package metal is the Apple GPU backend, in fp32 only (Apple GPUs have no
// fp64): Metal reached through github.com/ebitengine/purego/objc (no cgo),
// the kernels compiled at run time from one Metal Shading Language string
// (Source: a prelude, reference/kernels/sweep_common.h byte for byte, and
// kernels/*.metal), so the per-bar state machine, the stitching and the
// metrics are the same source text the CUDA kernels compile. The indicator
// series are computed on the GPU bit for bit as the reference's float32
// path computes them (fast math off), the combos swept one GPU thread each,
// and the ratios finished on the host as reference.Backtest finishes them
// (sweepbench/reference/kernels, shared with CUDA). A job with Blocks also
// gets each combo's per-block statistics (engine.BlockKernel:
// kernels/blocks.metal, the algorithm of CUDA's block_stats, its float64
// sums in software binary64, kernels/f64.metal), bit for bit the
// reference's float32 ones. The package imports nothing under
// sweepbench/cuda.
//
// On systems other than macOS the package builds to a backend whose
// Available says "Metal is available on macOS only". The Metal code paths
// have not run on Apple hardware until scripts/metal-check.sh has passed
// on a Mac.
package metal

import (
	"errors"

	"sweepbench/engine"
)

// Errors a caller may decide on.
var (
	// ErrNotMacOS is Available's answer on every system but macOS.
	ErrNotMacOS = errors.New("Metal is available on macOS only")
	// ErrNoFP64 refuses an fp64 job: Apple GPUs have no double precision.
	ErrNoFP64 = errors.New("Metal has no fp64: use --precision fp32 or the reference")
)

// New returns the Metal backend. Nothing is loaded until Available,
// Devices or Prepare is called.
func New() *Backend { return &Backend{} }

// Name is the --backend value.
func (b *Backend) Name() string { return "metal" }

// checkJob refuses what the Metal kernels cannot compute, before any
// device work: fp64 (no double on Apple GPUs).
func checkJob(job *engine.Job) error {
	if job == nil {
		return errors.New("metal: no job")
	}
	if job.Precision != engine.FP32 {
		return ErrNoFP64
	}
	return nil
}

// Supports implements engine.PrecisionSupport: fp32 only, so a study's fp64
// lane runs on its fallback (the CPU reference).
func (b *Backend) Supports(p engine.Precision) error {
	if p != engine.FP32 {
		return ErrNoFP64
	}
	return nil
}

// What the backend implements, on every system (Backend is defined per OS).
var (
	_ engine.Backend          = (*Backend)(nil)
	_ engine.PrecisionSupport = (*Backend)(nil)
)
