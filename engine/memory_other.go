//go:build !linux

package engine

// systemAvailableMemory is unknown here (0): no study is refused for
// memory on this operating system.
func systemAvailableMemory() int64 { return 0 }
