//go:build !linux

package memlimit

// SystemMemoryLimit is unknown here (LimitNone): no study is refused for
// memory on this operating system.
func SystemMemoryLimit() MemoryLimit { return MemoryLimit{} }
