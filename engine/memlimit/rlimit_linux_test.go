package memlimit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// vmSize is the process's mapped size (VmSize of /proc/self/status), bytes.
func vmSize() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
			if f := strings.Fields(rest); len(f) == 2 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024, err == nil
			}
		}
	}
	return 0, false
}

// TestAvailableMemoryUnderRlimitAS: with RLIMIT_AS lowered to what the
// process has mapped plus 256 MiB (ulimit -v), the memory available is at
// most those 256 MiB, not MemAvailable (the system's, many GiB): a study
// is refused with the numbers rather than dying of "fatal error: out of
// memory" part way. The limit is the process's own, restored at once.
func TestAvailableMemoryUnderRlimitAS(t *testing.T) {
	mapped, ok := vmSize()
	if !ok {
		t.Skip("no VmSize in /proc/self/status")
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &old); err != nil {
		t.Skip(err)
	}
	const room = 256 << 20
	cur := uint64(mapped + room)
	if old.Cur != ^uint64(0) && old.Cur < cur {
		t.Skipf("RLIMIT_AS is already %d", old.Cur)
	}
	lim := old
	lim.Cur = cur
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		t.Skip(err)
	}
	got := SystemMemoryLimit().Available
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &old); err != nil {
		t.Fatal(err)
	}
	if got <= 0 || got > room {
		t.Fatalf("available %d bytes under RLIMIT_AS = mapped + %d: want at most %d", got, room, room)
	}
}
