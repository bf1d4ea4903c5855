//go:build !windows

package cuda

import "github.com/ebitengine/purego"

// driverLib is the CUDA driver library the NVIDIA driver installs.
const driverLib = "libcuda.so.1"

// openLibrary dlopens a shared library; its error carries dlerror's text.
func openLibrary(name string) (uintptr, error) {
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// lookupSymbol is dlsym.
func lookupSymbol(h uintptr, name string) (uintptr, error) {
	return purego.Dlsym(h, name)
}
