package reference

import (
	"bufio"
	"os"
	"runtime"
	"strings"
	"sync"
)

var cpuModel = sync.OnceValue(func() string {
	f, err := os.Open("/proc/cpuinfo")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH + " CPU"
})

// CPUModel returns the CPU's model name (Linux /proc/cpuinfo), or the
// architecture when it cannot be read.
func CPUModel() string { return cpuModel() }
