package cuda

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CUDA driver library (driverLib: libcuda.so.1, or nvcuda.dll on
// Windows) is opened at run time and its entry points bound with purego:
// no cgo, so CGO_ENABLED=0 builds work on machines without CUDA.

// Driver API entry points, bound by loadDriver. Only the calls this package
// makes are bound; each returns a CUresult (0 = CUDA_SUCCESS). Device
// pointers are CUdeviceptr (uint64); handles (context, module, function,
// event) are opaque pointers kept as uintptr.
var drv struct {
	cuInit                    func(flags uint32) int32
	cuDriverGetVersion        func(v *int32) int32
	cuDeviceGetCount          func(n *int32) int32
	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDeviceGetName           func(name []byte, n int32, dev int32) int32
	cuDeviceTotalMem          func(bytes *uint64, dev int32) int32
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuCtxSynchronize          func() int32
	cuModuleLoadDataEx        func(mod *uintptr, image []byte, n uint32, opts []int32, vals []uintptr) int32
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name string) int32
	cuModuleUnload            func(mod uintptr) int32
	cuMemAlloc                func(p *uint64, bytes uint64) int32
	cuMemFree                 func(p uint64) int32
	cuMemGetInfo              func(free, total *uint64) int32
	cuMemcpyHtoD              func(dst uint64, src unsafe.Pointer, bytes uint64) int32
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uint64, bytes uint64) int32
	cuMemsetD8                func(dst uint64, v uint8, n uint64) int32
	cuMemAllocHost            func(p *unsafe.Pointer, bytes uint64) int32
	cuMemFreeHost             func(p unsafe.Pointer) int32
	cuMemcpyHtoDAsync         func(dst uint64, src unsafe.Pointer, bytes uint64, stream uintptr) int32
	cuMemcpyDtoHAsync         func(dst unsafe.Pointer, src uint64, bytes uint64, stream uintptr) int32
	cuLaunchKernel            func(fn uintptr, gx, gy, gz, bx, by, bz, shmem uint32, stream uintptr, params []unsafe.Pointer, extra uintptr) int32
	cuEventCreate             func(ev *uintptr, flags uint32) int32
	cuEventRecord             func(ev uintptr, stream uintptr) int32
	cuEventSynchronize        func(ev uintptr) int32
	cuEventElapsedTime        func(ms *float32, start, end uintptr) int32
	cuEventDestroy            func(ev uintptr) int32
	cuGetErrorName            func(code int32, s **byte) int32
	cuGetErrorString          func(code int32, s **byte) int32
	cuFuncGetAttribute        func(v *int32, attr int32, fn uintptr) int32
}

// symbols maps each bound function to its exported name, alternatives
// separated by "|" (preferred first). Versioned names (_v2) are the ones
// the headers of recent CUDA versions resolve to.
var symbols = []struct {
	fptr any
	name string
}{
	{&drv.cuInit, "cuInit"},
	{&drv.cuDriverGetVersion, "cuDriverGetVersion"},
	{&drv.cuDeviceGetCount, "cuDeviceGetCount"},
	{&drv.cuDeviceGet, "cuDeviceGet"},
	{&drv.cuDeviceGetName, "cuDeviceGetName"},
	{&drv.cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
	{&drv.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
	{&drv.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
	{&drv.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
	{&drv.cuCtxSetCurrent, "cuCtxSetCurrent"},
	{&drv.cuCtxSynchronize, "cuCtxSynchronize"},
	{&drv.cuModuleLoadDataEx, "cuModuleLoadDataEx"},
	{&drv.cuModuleGetFunction, "cuModuleGetFunction"},
	{&drv.cuModuleUnload, "cuModuleUnload"},
	{&drv.cuMemAlloc, "cuMemAlloc_v2"},
	{&drv.cuMemFree, "cuMemFree_v2"},
	{&drv.cuMemGetInfo, "cuMemGetInfo_v2"},
	{&drv.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
	{&drv.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
	{&drv.cuMemsetD8, "cuMemsetD8_v2"},
	{&drv.cuMemAllocHost, "cuMemAllocHost_v2"},
	{&drv.cuMemFreeHost, "cuMemFreeHost"},
	{&drv.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"},
	{&drv.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
	{&drv.cuLaunchKernel, "cuLaunchKernel"},
	{&drv.cuEventCreate, "cuEventCreate"},
	{&drv.cuEventRecord, "cuEventRecord"},
	{&drv.cuEventSynchronize, "cuEventSynchronize"},
	{&drv.cuEventElapsedTime, "cuEventElapsedTime_v2|cuEventElapsedTime"},
	{&drv.cuEventDestroy, "cuEventDestroy_v2"},
	{&drv.cuGetErrorName, "cuGetErrorName"},
	{&drv.cuGetErrorString, "cuGetErrorString"},
	{&drv.cuFuncGetAttribute, "cuFuncGetAttribute"},
}

// CUDA driver enums this package uses (cuda.h).
const (
	attrMultiprocessors = 16 // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	attrCCMajor         = 75 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	attrCCMinor         = 76 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

	funcAttrNumRegs     = 4 // CU_FUNC_ATTRIBUTE_NUM_REGS
	funcAttrLocalBytes  = 3 // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
	funcAttrSharedBytes = 1 // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES

	jitInfoLogBuffer      = 3 // CU_JIT_INFO_LOG_BUFFER
	jitInfoLogBufferSize  = 4 // CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
	jitErrorLogBuffer     = 5 // CU_JIT_ERROR_LOG_BUFFER
	jitErrorLogBufferSize = 6 // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES

	eventDefault = 0
)

var (
	driverOnce sync.Once
	driverErr  error
)

// loadDriver opens libcuda.so.1, binds every entry point and calls cuInit.
// The outcome is cached: a machine without the driver says so once, plainly.
func loadDriver() error {
	driverOnce.Do(func() {
		h, err := openLibrary(driverLib)
		if err != nil {
			detail := strings.TrimSpace(err.Error())
			if detail == "" {
				detail = "cannot load it"
			}
			driverErr = fmt.Errorf("CUDA driver not found: %s (%s); is the NVIDIA driver installed?", driverLib, detail)
			return
		}
		for _, s := range symbols {
			var sym uintptr
			var err error
			for _, name := range strings.Split(s.name, "|") { // preferred name first
				if sym, err = lookupSymbol(h, name); err == nil {
					break
				}
			}
			if err != nil {
				driverErr = fmt.Errorf("CUDA driver %s lacks %s (driver too old?): %v", driverLib, s.name, err)
				return
			}
			purego.RegisterFunc(s.fptr, sym)
		}
		if err := check("cuInit", drv.cuInit(0)); err != nil {
			if IsNoDevice(err) {
				driverErr = fmt.Errorf("no CUDA device: %w", err)
				return
			}
			driverErr = err
		}
	})
	return driverErr
}

// cString reads a NUL-terminated C string the driver owns.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for i := 0; ; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// goString trims a fixed buffer at its first NUL.
func goString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
