//go:build windows

package cuda

import "syscall"

// driverLib is the CUDA driver library the NVIDIA driver installs on
// Windows. Untested: no Windows machine with a GPU was available; the
// package builds there and says plainly when the driver is missing.
const driverLib = "nvcuda.dll"

// openLibrary is LoadLibrary.
func openLibrary(name string) (uintptr, error) {
	h, err := syscall.LoadLibrary(name)
	return uintptr(h), err
}

// lookupSymbol is GetProcAddress.
func lookupSymbol(h uintptr, name string) (uintptr, error) {
	return syscall.GetProcAddress(syscall.Handle(h), name)
}
