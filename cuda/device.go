package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"sweepbench/engine"
)

// device is one GPU. A single goroutine, locked to its OS thread, owns the
// device's primary context: every driver call for the device runs there,
// sent as a closure through work (a CUDA context is current per thread).
type device struct {
	ordinal int
	handle  int32
	info    engine.Device
	sms     int
	work    chan func()
	fns     map[string]uintptr // kernel name -> CUfunction
	modSrc  map[string]string  // module -> where its image came from (cubin or PTX)
	// Pools of device and pinned host buffers, reused across Prepare and
	// Close (docs/PERFORMANCE.md v5: cuMemAlloc/cuMemFree and pinning cost
	// more than the kernels on a small grid). Only the device thread
	// touches them.
	sizes    map[devPtr]uint64
	freeDev  []devPtr
	hostSize map[unsafe.Pointer]uint64
	freeHost []unsafe.Pointer
}

// startDevice starts the owner goroutine of GPU ordinal, makes its primary
// context current there and loads the PTX modules.
func startDevice(ordinal int) (*device, error) {
	d := &device{ordinal: ordinal, work: make(chan func()), fns: map[string]uintptr{}, modSrc: map[string]string{},
		sizes: map[devPtr]uint64{}, hostSize: map[unsafe.Pointer]uint64{}}
	ready := make(chan error, 1)
	go d.loop(ready)
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("GPU %d: %w", ordinal, err)
	}
	return d, nil
}

func (d *device) loop(ready chan<- error) {
	runtime.LockOSThread()
	if err := d.init(); err != nil {
		ready <- err
		runtime.UnlockOSThread()
		return
	}
	ready <- nil
	for f := range d.work {
		f()
	}
}

func (d *device) init() error {
	if err := check("cuDeviceGet", drv.cuDeviceGet(&d.handle, int32(d.ordinal))); err != nil {
		return err
	}
	info, sms, err := describe(d.handle)
	if err != nil {
		return err
	}
	d.info, d.sms = info, sms
	var ctx uintptr
	if err := check("cuDevicePrimaryCtxRetain", drv.cuDevicePrimaryCtxRetain(&ctx, d.handle)); err != nil {
		return err
	}
	if err := check("cuCtxSetCurrent", drv.cuCtxSetCurrent(ctx)); err != nil {
		return err
	}
	for _, m := range moduleNames {
		if err := d.loadModule(m); err != nil {
			return err
		}
	}
	return nil
}

// do runs f on the device's thread and returns its error.
func (d *device) do(f func() error) error {
	done := make(chan error, 1)
	d.work <- func() { done <- f() }
	return <-done
}

// describe reads a device's name, memory, compute capability and the driver
// version (for `sweepbench devices`).
func describe(h int32) (engine.Device, int, error) {
	name := make([]byte, 256)
	if err := check("cuDeviceGetName", drv.cuDeviceGetName(name, int32(len(name)), h)); err != nil {
		return engine.Device{}, 0, err
	}
	var mem uint64
	if err := check("cuDeviceTotalMem", drv.cuDeviceTotalMem(&mem, h)); err != nil {
		return engine.Device{}, 0, err
	}
	var major, minor, sms int32
	if err := check("cuDeviceGetAttribute", drv.cuDeviceGetAttribute(&major, attrCCMajor, h)); err != nil {
		return engine.Device{}, 0, err
	}
	if err := check("cuDeviceGetAttribute", drv.cuDeviceGetAttribute(&minor, attrCCMinor, h)); err != nil {
		return engine.Device{}, 0, err
	}
	if err := check("cuDeviceGetAttribute", drv.cuDeviceGetAttribute(&sms, attrMultiprocessors, h)); err != nil {
		return engine.Device{}, 0, err
	}
	return engine.Device{
		Name:              goString(name),
		Memory:            int64(mem),
		ComputeCapability: fmt.Sprintf("%d.%d", major, minor),
		Driver:            driverVersion(),
		Kernels:           KernelImage(fmt.Sprintf("%d.%d", major, minor)),
	}, int(sms), nil
}

// driverVersion is the kernel driver's version (from /proc, when readable)
// and the CUDA version the driver API reports: "580.95.05 (CUDA 13.0)".
func driverVersion() string {
	var v int32
	cu := ""
	if drv.cuDriverGetVersion(&v) == 0 {
		cu = fmt.Sprintf("CUDA %d.%d", v/1000, v%1000/10)
	}
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  ..."
		for _, f := range strings.Fields(strings.SplitN(string(b), "\n", 2)[0]) {
			if strings.Count(f, ".") >= 1 && f[0] >= '0' && f[0] <= '9' {
				return f + " (" + cu + ")"
			}
		}
	}
	return cu
}

// loadModule loads one module (its cubin for this device's architecture,
// or its PTX, JIT-compiled by the driver) and looks up its kernels,
// capturing the JIT error log into the error.
func (d *device) loadModule(name string) error {
	var major, minor int
	fmt.Sscanf(d.info.ComputeCapability, "%d.%d", &major, &minor)
	image, src, err := loadImage(name, major, minor)
	if err != nil {
		return err
	}
	errLog := make([]byte, 16<<10)
	infoLog := make([]byte, 16<<10)
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSize, jitInfoLogBuffer, jitInfoLogBufferSize}
	vals := []uintptr{
		uintptr(unsafe.Pointer(&errLog[0])), uintptr(len(errLog)),
		uintptr(unsafe.Pointer(&infoLog[0])), uintptr(len(infoLog)),
	}
	var mod uintptr
	code := drv.cuModuleLoadDataEx(&mod, image, uint32(len(opts)), opts, vals)
	runtime.KeepAlive(errLog)
	runtime.KeepAlive(infoLog)
	if err := check("cuModuleLoadDataEx", code); err != nil {
		return fmt.Errorf("load module %s (%s): %w\nJIT log:\n%s", name, src, err, goString(errLog))
	}
	d.modSrc[name] = src
	for _, k := range kernelNames[name] {
		var fn uintptr
		if err := check("cuModuleGetFunction", drv.cuModuleGetFunction(&fn, mod, k)); err != nil {
			return fmt.Errorf("module %s (%s): kernel %s: %w", name, src, k, err)
		}
		d.fns[k] = fn
	}
	return nil
}

// kernelNames lists each module's entry points (extern "C" in the .cu).
var kernelNames = map[string][]string{
	"indicators": {
		"wma_f32", "hma_stage1_f32", "hma3_stage1_f32", "prefix_scan_f32", "wma_series_f32", "prep_series_f32",
		"wma_f64", "hma_stage1_f64", "hma3_stage1_f64", "prefix_scan_f64", "wma_series_f64", "prep_series_f64",
	},
	"sweep": {"sweep_f32_k1", "sweep_f64_k1", "sweep_seg_f32", "sweep_seg_f64",
		"sweep_band_f32", "sweep_band_f64", "sweep_chan_f32", "sweep_chan_f64",
		"block_stats_f32", "block_stats_f64"},
	"parity": {"parity_flips_f32", "series_err_f32", "parity_flips_f64", "series_err_f64", "parity_mem_f32", "parity_mem_f64"},
	"robust": {"pbo_best", "pbo_rank"},
}

// The methods below run on the device thread (inside do).

func (d *device) alloc(bytes uint64) (devPtr, error) {
	var p uint64
	if err := check("cuMemAlloc", drv.cuMemAlloc(&p, max(bytes, 1))); err != nil {
		return 0, fmt.Errorf("allocating %d bytes on %s: %w", bytes, d.info.Name, err)
	}
	return devPtr(p), nil
}

func (d *device) free(p devPtr) error {
	if p == 0 {
		return nil
	}
	return check("cuMemFree", drv.cuMemFree(uint64(p)))
}

// get returns a pooled device buffer of at least bytes (the smallest free
// one that fits, else a new one; on out-of-memory the free pool is released
// and the allocation retried). put returns it to the pool.
func (d *device) get(bytes uint64) (devPtr, error) {
	bytes = max(bytes, 1)
	best := -1
	for i, p := range d.freeDev {
		if sz := d.sizes[p]; sz >= bytes && sz <= 4*bytes+(1<<20) && (best < 0 || sz < d.sizes[d.freeDev[best]]) {
			best = i
		}
	}
	if best >= 0 {
		p := d.freeDev[best]
		d.freeDev = append(d.freeDev[:best], d.freeDev[best+1:]...)
		return p, nil
	}
	p, err := d.alloc(bytes)
	if IsOutOfMemory(err) && len(d.freeDev) > 0 {
		d.releasePool()
		p, err = d.alloc(bytes)
	}
	if err != nil {
		return 0, err
	}
	d.sizes[p] = bytes
	return p, nil
}

// put returns p to the pool; a buffer not from the pool is freed, and the
// driver's answer returned.
func (d *device) put(p devPtr) error {
	if p == 0 {
		return nil
	}
	if _, ok := d.sizes[p]; !ok {
		return d.free(p)
	}
	d.freeDev = append(d.freeDev, p)
	return nil
}

// releasePool frees every pooled device buffer not in use.
func (d *device) releasePool() {
	drv.cuCtxSynchronize()
	for _, p := range d.freeDev {
		d.free(p)
		delete(d.sizes, p)
	}
	d.freeDev = nil
}

// getHost returns a pooled pinned (page-locked) host buffer of at least
// bytes, for asynchronous copies; putHost returns it.
func (d *device) getHost(bytes uint64) (unsafe.Pointer, error) {
	bytes = max(bytes, 64)
	best := -1
	for i, p := range d.freeHost {
		if sz := d.hostSize[p]; sz >= bytes && (best < 0 || sz < d.hostSize[d.freeHost[best]]) {
			best = i
		}
	}
	if best >= 0 {
		p := d.freeHost[best]
		d.freeHost = append(d.freeHost[:best], d.freeHost[best+1:]...)
		return p, nil
	}
	var p unsafe.Pointer
	if err := check("cuMemAllocHost", drv.cuMemAllocHost(&p, bytes)); err != nil {
		return nil, fmt.Errorf("allocating %d bytes of pinned host memory: %w", bytes, err)
	}
	d.hostSize[p] = bytes
	return p, nil
}

func (d *device) putHost(p unsafe.Pointer) {
	if p != nil {
		d.freeHost = append(d.freeHost, p)
	}
}

func (d *device) memInfo() (free, total uint64, err error) {
	err = check("cuMemGetInfo", drv.cuMemGetInfo(&free, &total))
	return
}

// upload copies a host slice to device memory.
func upload[T any](dst devPtr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	var z T
	n := uint64(len(src)) * uint64(unsafe.Sizeof(z))
	err := check("cuMemcpyHtoD", drv.cuMemcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), n))
	runtime.KeepAlive(src)
	return err
}

// download copies device memory into a host slice.
func download[T any](dst []T, src devPtr) error {
	if len(dst) == 0 {
		return nil
	}
	var z T
	n := uint64(len(dst)) * uint64(unsafe.Sizeof(z))
	err := check("cuMemcpyDtoH", drv.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), n))
	runtime.KeepAlive(dst)
	return err
}

// poison fills bytes of device memory with 0xFF (a NaN in every float
// width, -1 in every int), so an unwritten output is recognisable.
func (d *device) poison(p devPtr, bytes uint64) error {
	return check("cuMemsetD8", drv.cuMemsetD8(uint64(p), 0xFF, bytes))
}

// launch starts kernel name on the default stream. It does not wait.
func (d *device) launch(name string, grid, block [3]uint32, shmem uint32, args ...any) error {
	fn, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("kernel %s is not loaded", name)
	}
	ka, err := packArgs(args...)
	if err != nil {
		return fmt.Errorf("kernel %s: %w", name, err)
	}
	code := drv.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shmem, 0, ka.ptrs, 0)
	runtime.KeepAlive(ka)
	if err := check("cuLaunchKernel", code); err != nil {
		return fmt.Errorf("kernel %s: %w", name, err)
	}
	return nil
}

// sync waits for the device; what names the work for the error.
func (d *device) sync(what string) error {
	if err := check("cuCtxSynchronize", drv.cuCtxSynchronize()); err != nil {
		return fmt.Errorf("%s on %s (GPU %d): %w", what, d.info.Name, d.ordinal, err)
	}
	return nil
}

// event is a CUDA event for kernel-only timing.
type event uintptr

func (d *device) newEvent() (event, error) {
	var e uintptr
	err := check("cuEventCreate", drv.cuEventCreate(&e, eventDefault))
	return event(e), err
}

func (d *device) record(e event) error {
	return check("cuEventRecord", drv.cuEventRecord(uintptr(e), 0))
}

// elapsedDone is the device time between two recorded events the stream
// has passed (it waits for b).
func elapsedDone(a, b event) (float32, error) {
	if err := check("cuEventSynchronize", drv.cuEventSynchronize(uintptr(b))); err != nil {
		return 0, err
	}
	var ms float32
	err := check("cuEventElapsedTime", drv.cuEventElapsedTime(&ms, uintptr(a), uintptr(b)))
	return ms, err
}

func (d *device) destroyEvent(e event) error {
	if e == 0 {
		return nil
	}
	return check("cuEventDestroy", drv.cuEventDestroy(uintptr(e)))
}

// scratch holds the pooled device buffers one piece of work takes (a
// parity pass, a block_stats launch, PBO), given back together by release
// once the device has finished with them. Device thread only.
type scratch struct {
	d    *device
	bufs []devPtr
}

// get takes a pooled buffer of bytes, poisoned (0xFF) when poison.
func (s *scratch) get(bytes uint64, poison bool) (devPtr, error) {
	p, err := s.d.get(bytes)
	if err != nil {
		return 0, err
	}
	s.bufs = append(s.bufs, p)
	if poison {
		err = s.d.poison(p, bytes)
	}
	return p, err
}

// getAll takes one buffer per size (gets), in order.
func (s *scratch) getAll(poison bool, sizes ...uint64) ([]devPtr, error) {
	out := make([]devPtr, len(sizes))
	for i, n := range sizes {
		var err error
		if out[i], err = s.get(n, poison); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// release waits for the device (what names the work for the error) and
// gives every buffer back; it returns the driver calls' errors, joined.
func (s *scratch) release(what string) error {
	err := s.d.sync(what)
	for _, p := range s.bufs {
		err = errors.Join(err, s.d.put(p))
	}
	s.bufs = nil
	return err
}
