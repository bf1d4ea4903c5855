package memlimit

import "syscall"

// systemSources are the real /proc, cgroup root and RLIMIT_AS.
var systemSources = limitSources{proc: "/proc", cgroup: "/sys/fs/cgroup", rlimitAS: rlimitAS}

// rlimitAS is the soft RLIMIT_AS; not ok when unlimited or unreadable.
func rlimitAS() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur == ^uint64(0) {
		return 0, false
	}
	return r.Cur, true
}

// SystemMemoryLimit is what this process may still allocate and what
// bounds it (MemoryLimit): the least of MemAvailable, RLIMIT_AS less the
// process's mapped size, and the memory limits of its cgroups (v1 and v2)
// less their usage, read now.
func SystemMemoryLimit() MemoryLimit { return systemSources.memoryLimit() }
