//go:build unix

package sessions_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system, every thread) this process
// has used: what a benchmark costs whatever else the machine runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
