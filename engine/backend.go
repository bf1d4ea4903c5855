package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// UnavailableError is a backend asked for by name that cannot run here.
type UnavailableError struct {
	Backend string
	Err     error // the backend's Available() error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("not available here: %v (the reference backend, or auto, runs on the CPU)", e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Job is one sweep request in one precision: every combo of Grid over Bars.
type Job struct {
	Bars      *Bars
	Grid      Grid
	Params    Params
	Precision Precision
	WMA       Formulation // Direct for the reference; Prefix to show the trap (Study sets fp64 to Direct)
	// Threads caps the CPU threads a CPU backend uses (0 = all cores); the
	// bench ladder's serial rungs set 1.
	Threads int
	// Cache, when set, shares indicator series between the runs and the
	// parity report of one study so each is computed once. May be nil.
	Cache *IndicatorCache
	// Blocks, when set, are the S+1 edges (BlockBounds) of the blocks of
	// bar returns the kernel also emits statistics for (BlockKernel,
	// SweepOptions.Blocks): the robustness statistics' input.
	Blocks []int
	// StudyCombos is the number of combos the whole study computes (its
	// Grid.Distinct) when the job is one tile of it (engine's tiled
	// studies), 0 otherwise. A backend
	// that picks its method by the grid's size (CUDA's bar-parallel kernel
	// below 8,192 combos) picks by Combos(), so that every tile's combos
	// are computed bit for bit as the untiled study computes them.
	StudyCombos int
}

// Combos is the size a backend picks its method by: StudyCombos when the
// job is a tile of a larger study, else the grid's own size.
func (j *Job) Combos() int {
	if j.StudyCombos > 0 {
		return j.StudyCombos
	}
	return j.Grid.Len()
}

// Validate checks the grid against the bars and the parameters.
func (j *Job) Validate() error {
	if j.Bars == nil || j.Bars.Len() == 0 {
		return errors.New("no bars loaded")
	}
	if err := j.Grid.Validate(j.Bars.Len()); err != nil {
		return err
	}
	if err := j.Grid.CheckParams(j.Params, j.WMA); err != nil {
		return err
	}
	return j.Params.Validate()
}

// Backend is a compute device family (the CPU reference, CUDA, Metal).
// Backends live in their own packages and import engine; engine imports
// none of them. main wires them in through a Registry.
type Backend interface {
	// Name is the --backend value: "reference", "cuda", "metal".
	Name() string
	// Available returns nil when the backend can run on this machine, or an
	// error that says plainly why not (no driver, no GPU, wrong OS).
	Available() error
	// Devices describes the devices it would use (for `sweepbench devices`).
	Devices() ([]Device, error)
	// Prepare readies a job (upload bars, compute shared indicators, load
	// kernels) and returns a Kernel that evaluates its combos. Sweep
	// prepares the job on its grid's distinct grid (Grid.Distinct: one
	// HMA3 length per p = floor(L/2)), whose combos are the kernel's.
	Prepare(ctx context.Context, job *Job) (Kernel, error)
}

// Device is one compute device a backend can use.
type Device struct {
	Name              string // "NVIDIA H200", "AMD EPYC 7B13 (2 threads)"
	Memory            int64  // bytes; 0 when not applicable
	ComputeCapability string // "9.0" for CUDA; "" elsewhere
	Driver            string // driver version; "" when not applicable
	Kernels           string // the kernel image it loads: "cubin sm_90" (no JIT) or "PTX (JIT)"; "" for the CPU
}

// Kernel evaluates combos of a prepared job. Compute may be called from
// Lanes() goroutines at once, each with its own lane index.
type Kernel interface {
	// Lanes is how many Compute calls may run concurrently (CPU cores, GPUs).
	Lanes() int
	// ChunkSize is the preferred number of combos per Compute call. When
	// the grid holds at most Lanes()*ChunkSize() combos, Sweep gives lane i
	// exactly the combos [i*ChunkSize(), (i+1)*ChunkSize()) (fewer for the
	// last lane, and sub-ranges of them when resuming), so a GPU lane may
	// prepare only what its own share of the grid needs.
	ChunkSize() int
	// Compute evaluates combos [first, first+len(out)) of the job's grid into
	// out. It returns ctx.Err() promptly when ctx is cancelled; out is then
	// discarded by the caller.
	Compute(ctx context.Context, lane, first int, out []Metrics) error
	// Device names where it ran, for reports.
	Device() string
	// Close releases device memory and contexts.
	Close() error
}

// Reference returns the registered "reference" backend (the fallback for
// lanes a GPU backend cannot compute), or nil.
func (r *Registry) Reference() Backend {
	for _, c := range r.backends {
		if c.Name() == "reference" {
			return c
		}
	}
	return nil
}

// Registry holds the backends main wires in, in preference order for auto.
type Registry struct {
	backends []Backend
}

// Register adds a backend. The last registered is tried first by auto
// except the reference, which is always the fallback.
func (r *Registry) Register(b Backend) { r.backends = append(r.backends, b) }

// All returns the registered backends in registration order.
func (r *Registry) All() []Backend { return r.backends }

// Lookup resolves a --backend value. "auto" picks the first available GPU
// backend, else "reference"; note says which ran and why. A named backend
// that is not available is an error carrying its reason.
func (r *Registry) Lookup(name string) (b Backend, note string, err error) {
	if name == "" || name == "auto" {
		var unavailable []string
		var ref Backend
		for _, c := range r.backends {
			if c.Name() == "reference" {
				ref = c
				continue
			}
			if err := c.Available(); err != nil {
				unavailable = append(unavailable, c.Name())
				continue
			}
			return c, fmt.Sprintf("auto: using %s", c.Name()), nil
		}
		if ref == nil {
			return nil, "", fieldErr(FieldBackend, "auto", "no backend is registered")
		}
		note = "auto: using reference (CPU)"
		if len(unavailable) > 0 {
			note += fmt.Sprintf("; %s unavailable here (sweepbench devices says why)", joinReasons(unavailable, " and "))
		}
		return ref, note, nil
	}
	for _, c := range r.backends {
		if c.Name() == name {
			if err := c.Available(); err != nil {
				return nil, "", &FieldError{Field: FieldBackend, Value: name, Err: &UnavailableError{Backend: name, Err: err}}
			}
			return c, "", nil
		}
	}
	names := ""
	for i, c := range r.backends {
		if i > 0 {
			names += ", "
		}
		names += c.Name()
	}
	return nil, "", fieldErr(FieldBackend, name, "unknown (want auto, %s)", names)
}

func joinReasons(rs []string, sep string) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += sep
		}
		s += r
	}
	return s
}

// MultiDevice is implemented by backends that shard combos over several
// devices: the bench ladder adds a row per device count.
type MultiDevice interface {
	DeviceCount() int
	// WithDevices returns the backend restricted to its first n devices.
	WithDevices(n int) Backend
}

// PrecisionSupport is implemented by backends that cannot compute every
// precision (Metal has no fp64). A Study runs the unsupported lanes on its
// Fallback backend and says so in the report's note.
type PrecisionSupport interface {
	Supports(p Precision) error
}

// RungBackend returns a bench rung (bench.RungFunc) that sweeps with backend b: the job's
// precision, formulation and thread cap apply. The indicator share is the
// backend's own report when its kernel gives one (Run.Indicators), else the
// prepare time. Every combo is computed, HMA3 aliases included (a study
// computes each twin pair once: Grid.Distinct), so that a rung times its
// method on the grid the naive baseline computes.
func RungBackend(b Backend, form Formulation, threads int) func(ctx context.Context, job *Job) (*Run, time.Duration, error) {
	return func(ctx context.Context, job *Job) (*Run, time.Duration, error) {
		j := *job
		j.WMA, j.Threads, j.Cache = form, threads, nil
		run, err := Sweep(ctx, b, &j, SweepOptions{everyCombo: true})
		if err != nil {
			return nil, 0, err
		}
		ind := run.Prepare
		if run.Indicators > 0 {
			ind = run.Indicators
		}
		return run, ind, nil
	}
}

// IndicatorDevice is implemented by backends that can compute the fp32
// indicator series of a job on their device and return them to the host
// (the article's method: GPU indicators, CPU trades).
type IndicatorDevice interface {
	Indicators32(ctx context.Context, job *Job) (*Indicators[float32], error)
}

// SeriesDevice is implemented by backends that compute a job's indicator
// series on their device in either precision and return them to the host,
// bit-identical to the reference's (SPEC "Indicators"): RunStudy's parity
// report takes the series of the lanes such a backend ran from there, in
// milliseconds, instead of computing them again on the CPU.
type SeriesDevice interface {
	IndicatorDevice
	Indicators64(ctx context.Context, job *Job) (*Indicators[float64], error)
}
