// Package memlimit reads the memory this process may still allocate and
// what bounds it (SystemMemoryLimit, a MemoryLimit of a LimitKind): the
// least of the kernel's MemAvailable (/proc/meminfo), RLIMIT_AS less the
// process's mapped size, and the memory limits of its cgroups (v1 and v2,
// each ancestor's too) less their usage; on an operating system other than
// Linux nothing is known (LimitNone). It is a leaf: engine imports it for
// its memory check (engine.CheckMemory, *engine.MemoryError), and it
// imports only engine/text (Bytes, for Describe).
package memlimit
