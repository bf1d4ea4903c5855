package engine

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// systemAvailableMemory reads MemAvailable from /proc/meminfo (the kernel's
// estimate of memory available to a new program without swapping), bytes;
// 0 when it cannot.
func systemAvailableMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
