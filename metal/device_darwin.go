//go:build darwin

package metal

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego/objc"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// Backend is the Metal backend: the system default device, its command
// queue and the compiled pipelines, set up once on first use.
type Backend struct {
	once sync.Once
	dev  *device
	err  error
}

// device is one Metal device with the library compiled for it.
type device struct {
	mtl       objc.ID // id<MTLDevice>, owned (+1 from MTLCreateSystemDefaultDevice)
	queue     objc.ID // id<MTLCommandQueue>, owned
	pipelines map[string]objc.ID
	info      engine.Device
	budget    uint64 // recommendedMaxWorkingSetSize
	maxBuf    uint64 // maxBufferLength
	// mu serialises command submission (one queue, one lane).
	mu sync.Mutex
}

// Available opens Metal, finds the system default device and compiles
// the kernels on it; it returns why not when any of that fails (no Metal
// framework, no device, a compiler error with its message).
func (b *Backend) Available() error { return b.init() }

func (b *Backend) init() error {
	b.once.Do(func() {
		if err := loadMetal(); err != nil {
			b.err = err
			return
		}
		b.dev, b.err = openDevice()
	})
	return b.err
}

// Devices describes the GPU: its name and recommended working-set size.
func (b *Backend) Devices() ([]engine.Device, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	return []engine.Device{b.dev.info}, nil
}

// Prepare refuses fp64 (ErrNoFP64), then computes the job's indicator
// series on the GPU in float32 (job.WMA: direct or prefix).
func (b *Backend) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	if err := checkJob(job); err != nil {
		return nil, err
	}
	if err := b.init(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return prepare(ctx, b.dev, job)
}

func openDevice() (*device, error) {
	d := &device{pipelines: map[string]objc.ID{}}
	err := withPool(func() error {
		d.mtl = mtlCreateSystemDefaultDevice()
		if d.mtl == 0 {
			return errNoDevice
		}
		d.info = engine.Device{Name: goString(d.mtl.Send(selName))}
		d.budget = objc.Send[uint64](d.mtl, selMaxWorkingSet)
		d.maxBuf = objc.Send[uint64](d.mtl, selMaxBufferLength)
		d.info.Memory = int64(d.budget)
		if d.queue = d.mtl.Send(selNewCommandQueue); d.queue == 0 {
			return fmt.Errorf("%s: newCommandQueue returned nil", d.info.Name)
		}
		return d.compile()
	})
	if err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// compile builds the library from Source with fast math off and one
// compute pipeline per kernel function.
func (d *device) compile() error {
	src, err := Source()
	if err != nil {
		return err
	}
	opts := objc.ID(objc.GetClass("MTLCompileOptions")).Send(selAlloc).Send(selInit)
	defer release(opts)
	// SPEC forbids fused multiply-add and fast math: mathMode safe where
	// the OS has it (macOS 15+), fastMathEnabled = NO before.
	if objc.Send[bool](opts, selRespondsToSelector, selSetMathMode) {
		opts.Send(selSetMathMode, uint64(mathModeSafe))
		if objc.Send[bool](opts, selRespondsToSelector, selSetMathFunctions) {
			opts.Send(selSetMathFunctions, uint64(mathFunctionPrecise))
		}
	} else {
		opts.Send(selSetFastMath, false)
	}
	var nserr objc.ID
	lib := d.mtl.Send(selNewLibrary, nsString(src), opts, unsafe.Pointer(&nserr))
	if lib == 0 {
		// nserr may also be set with warnings when the library compiled.
		if e := nsError("compiling the Metal kernels", nserr); e != nil {
			return e
		}
		return fmt.Errorf("compiling the Metal kernels on %s failed without a message", d.info.Name)
	}
	defer release(lib)
	for _, name := range kernelFunctions {
		fn := lib.Send(selNewFunction, nsString(name))
		if fn == 0 {
			return fmt.Errorf("Metal library: kernel function %s is missing", name)
		}
		var perr objc.ID
		pso := d.mtl.Send(selNewPipeline, fn, unsafe.Pointer(&perr))
		release(fn)
		if pso == 0 {
			if e := nsError("Metal pipeline "+name, perr); e != nil {
				return e
			}
			return fmt.Errorf("Metal pipeline %s: creation failed without a message", name)
		}
		d.pipelines[name] = pso
		if got, want := objc.Send[uint64](pso, selMaxThreads), uint64(threadsFor(name)); got < want {
			return fmt.Errorf("Metal pipeline %s on %s allows %d threads per threadgroup, the kernel needs %d", name, d.info.Name, got, want)
		}
	}
	return nil
}

// threadsFor is the threadgroup size the backend dispatches name with.
func threadsFor(name string) int {
	switch name {
	case fnSweep, fnBlockStats:
		return kernels.SweepBlock
	case fnPrefixScan:
		return scanBlock
	}
	return indBlock
}

func (d *device) close() {
	for k, p := range d.pipelines {
		release(p)
		delete(d.pipelines, k)
	}
	release(d.queue)
	release(d.mtl)
	d.queue, d.mtl = 0, 0
}

// buffer is a shared (CPU- and GPU-visible) MTLBuffer this package owns.
type buffer struct {
	id   objc.ID
	ptr  unsafe.Pointer // contents
	size uint64
}

// newBuffer allocates size bytes (at least 4) of shared memory.
func (d *device) newBuffer(size uint64, what string) (*buffer, error) {
	size = max(size, 4)
	if size > d.maxBuf {
		return nil, fmt.Errorf("%s: %d MiB exceeds the largest Metal buffer on %s (%d MiB)", what, size>>20, d.info.Name, d.maxBuf>>20)
	}
	id := d.mtl.Send(selNewBufferLength, size, uint64(storageModeShared))
	if id == 0 {
		return nil, fmt.Errorf("%s: could not allocate %d MiB on %s", what, size>>20, d.info.Name)
	}
	return &buffer{id: id, ptr: objc.Send[unsafe.Pointer](id, selContents), size: size}, nil
}

// upload allocates a shared buffer holding v.
func upload[T any](d *device, v []T, what string) (*buffer, error) {
	var z T
	n := uint64(len(v)) * uint64(unsafe.Sizeof(z))
	b, err := d.newBuffer(n, what)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		copy(unsafe.Slice((*byte)(b.ptr), n), unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), n))
	}
	return b, nil
}

func (b *buffer) free() {
	if b != nil && b.id != 0 {
		release(b.id)
		b.id, b.ptr = 0, nil
	}
}

// bytes views the buffer's contents.
func (b *buffer) bytes() []byte { return unsafe.Slice((*byte)(b.ptr), b.size) }

// arg is one kernel argument: a buffer or a small constant block (setBytes).
type arg struct {
	buf   *buffer
	bytes []byte
}

// step is one dispatch of a command buffer.
type step struct {
	fn   string
	args []arg // at [[buffer(i)]] for i = index in args
	d    dispatch
}

// run encodes steps into one command buffer with one compute encoder
// (serial dispatch: each step sees the previous one's writes), commits it,
// waits and returns its GPU time (GPUEndTime - GPUStartTime).
func (d *device) run(what string, steps []step) (time.Duration, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var gpu time.Duration
	err := withPool(func() error {
		cb := d.queue.Send(selCommandBuffer)
		if cb == 0 {
			return fmt.Errorf("%s: commandBuffer returned nil", what)
		}
		enc := cb.Send(selComputeEncoder)
		if enc == 0 {
			return fmt.Errorf("%s: computeCommandEncoder returned nil", what)
		}
		for _, s := range steps {
			pso, ok := d.pipelines[s.fn]
			if !ok {
				enc.Send(selEndEncoding)
				return fmt.Errorf("%s: no pipeline %s", what, s.fn)
			}
			enc.Send(selSetPipeline, pso)
			for i, a := range s.args {
				if a.buf != nil {
					enc.Send(selSetBuffer, a.buf.id, uint64(0), uint64(i))
				} else {
					enc.Send(selSetBytes, unsafe.Pointer(&a.bytes[0]), uint64(len(a.bytes)), uint64(i))
				}
			}
			enc.Send(selDispatch, s.d.groups, s.d.threads)
		}
		enc.Send(selEndEncoding)
		cb.Send(selCommit)
		cb.Send(selWaitUntilCompleted)
		switch st := objc.Send[uint64](cb, selStatus); st {
		case cbStatusCompleted:
		case cbStatusError:
			if e := nsError(what, cb.Send(selError)); e != nil {
				return e
			}
			return fmt.Errorf("%s: the command buffer failed without a message", what)
		default:
			return fmt.Errorf("%s: command buffer ended in status %d", what, st)
		}
		t0, t1 := objc.Send[float64](cb, selGPUStart), objc.Send[float64](cb, selGPUEnd)
		gpu = time.Duration((t1 - t0) * float64(time.Second))
		return nil
	})
	return gpu, err
}
