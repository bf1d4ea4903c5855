package cuda

import (
	"errors"
	"fmt"
)

// CUresult codes this package decides on (cuda.h).
const (
	codeOutOfMemory    = 2   // CUDA_ERROR_OUT_OF_MEMORY
	codeNoDevice       = 100 // CUDA_ERROR_NO_DEVICE
	codeIllegalAddress = 700 // CUDA_ERROR_ILLEGAL_ADDRESS
	codeLaunchFailed   = 719 // CUDA_ERROR_LAUNCH_FAILED
)

// Error is a failed CUDA driver call: the call, the CUresult code and the
// driver's own name and description of it (cuGetErrorName,
// cuGetErrorString). Callers decide on it with errors.As or the helpers
// IsOutOfMemory and IsNoDevice.
type Error struct {
	Call   string // driver entry point, e.g. "cuMemAlloc"
	Code   int    // CUresult
	Name   string // "CUDA_ERROR_OUT_OF_MEMORY"
	String string // "out of memory"
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d): %s", e.Call, e.Name, e.Code, e.String)
}

// check turns a CUresult into nil or an *Error naming the call.
func check(call string, code int32) error {
	if code == 0 {
		return nil
	}
	e := &Error{Call: call, Code: int(code)}
	if drv.cuGetErrorName != nil {
		var p *byte
		if drv.cuGetErrorName(code, &p) == 0 {
			e.Name = cString(p)
		}
		if drv.cuGetErrorString(code, &p) == 0 {
			e.String = cString(p)
		}
	}
	if e.Name == "" {
		e.Name = fmt.Sprintf("CUresult %d", code)
	}
	if e.String == "" {
		e.String = "unknown CUDA error"
	}
	return e
}

// IsOutOfMemory reports whether err (or an error it wraps) is a CUDA
// out-of-memory error.
func IsOutOfMemory(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == codeOutOfMemory
}

// IsNoDevice reports whether err is CUDA_ERROR_NO_DEVICE.
func IsNoDevice(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == codeNoDevice
}
