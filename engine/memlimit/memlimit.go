package memlimit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"sweepbench/engine/text"
)

// LimitKind says what bounds the memory a study may take (MemoryLimit).
type LimitKind int

const (
	// LimitNone: nothing is known; no study is refused for memory.
	LimitNone LimitKind = iota
	// LimitMemAvailable: the kernel's MemAvailable (/proc/meminfo), what a
	// new program can have without swapping.
	LimitMemAvailable
	// LimitAddressSpace: RLIMIT_AS (`ulimit -v`) less what the process has
	// mapped already (VmSize: the Go runtime's reservations, the binary,
	// the data loaded).
	LimitAddressSpace
	// LimitCgroupV2: a cgroup v2 memory.max less the cgroup's memory.current
	// (its inactive file cache, which the kernel reclaims first, left out).
	LimitCgroupV2
	// LimitCgroupV1: a cgroup v1 memory.limit_in_bytes less its
	// memory.usage_in_bytes (inactive file cache left out).
	LimitCgroupV1
)

// MemoryLimit is the memory a new allocation of this process can have and
// what bounds it: the least of MemAvailable, RLIMIT_AS less the mapped
// size, and every memory-limited cgroup the process is in (each ancestor's
// limit less its usage).
type MemoryLimit struct {
	Available int64     // bytes; 0 when nothing is known (Kind LimitNone)
	Kind      LimitKind // what bounds Available
	Limit     int64     // the bound itself: MemAvailable, RLIMIT_AS, memory.max or limit_in_bytes
	Used      int64     // what counts against Limit already (mapped, in the cgroup); 0 for MemAvailable
	Cgroup    string    // the cgroup's path, for a cgroup limit
}

// Hard reports whether the limit is one the kernel enforces on the process
// (an address-space or cgroup limit: an allocation past it fails or the
// process is killed), rather than MemAvailable, an estimate.
func (l MemoryLimit) Hard() bool {
	return l.Kind == LimitAddressSpace || l.Kind == LimitCgroupV2 || l.Kind == LimitCgroupV1
}

// Describe names the bound in words, e.g. "the address-space limit (ulimit
// -v: 7.6 GiB, 1.1 GiB of it mapped already)"; "" for LimitNone.
func (l MemoryLimit) Describe() string {
	switch l.Kind {
	case LimitMemAvailable:
		return "the memory the system has available (MemAvailable)"
	case LimitAddressSpace:
		return fmt.Sprintf("the address-space limit (ulimit -v: %s, %s of it mapped already)", text.Bytes(l.Limit), text.Bytes(l.Used))
	case LimitCgroupV2:
		return fmt.Sprintf("the memory limit of cgroup %s (memory.max: %s, %s in use)", l.Cgroup, text.Bytes(l.Limit), text.Bytes(l.Used))
	case LimitCgroupV1:
		return fmt.Sprintf("the memory limit of cgroup %s (memory.limit_in_bytes: %s, %s in use)", l.Cgroup, text.Bytes(l.Limit), text.Bytes(l.Used))
	}
	return ""
}

// limitSources are where memoryLimit reads: a /proc and a cgroup file
// system root (the real ones, or a test's fake tree), and RLIMIT_AS.
type limitSources struct {
	proc   string // "/proc"
	cgroup string // "/sys/fs/cgroup"
	// rlimitAS returns the soft RLIMIT_AS; ok false when there is none
	// (RLIM_INFINITY) or it cannot be read.
	rlimitAS func() (cur uint64, ok bool)
}

// unlimited is where a limit read as a number means none: cgroup v1 writes
// 2^63 less a page for "no limit".
const unlimited = 1 << 62

// memoryLimit is the least of the limits src can read (MemoryLimit).
func (src limitSources) memoryLimit() MemoryLimit {
	var best MemoryLimit
	take := func(l MemoryLimit) {
		if l.Kind == LimitNone {
			return
		}
		// Used up (a cgroup at its limit): 1 byte, refused with the
		// numbers, rather than 0, which means unknown.
		l.Available = max(l.Available, 1)
		if best.Kind == LimitNone || l.Available < best.Available {
			best = l
		}
	}
	if kb, ok := procField(filepath.Join(src.proc, "meminfo"), "MemAvailable:"); ok {
		take(MemoryLimit{Kind: LimitMemAvailable, Available: kb, Limit: kb})
	}
	if src.rlimitAS != nil {
		if cur, ok := src.rlimitAS(); ok && cur < unlimited {
			mapped, _ := procField(filepath.Join(src.proc, "self", "status"), "VmSize:")
			take(MemoryLimit{Kind: LimitAddressSpace, Available: int64(cur) - mapped, Limit: int64(cur), Used: mapped})
		}
	}
	for _, l := range src.cgroupLimits() {
		take(l)
	}
	return best
}

// procField reads a "Name:   123 kB" line of a /proc file, in bytes.
func procField(file, name string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb >= 0 {
					return kb * 1024, true
				}
			}
		}
	}
	return 0, false
}

// cgroupLimits are the memory limits of the cgroups the process is in
// (/proc/self/cgroup), each less its usage: for cgroup v2 (the line
// "0::PATH", the hierarchy at the cgroup root or, on a hybrid system, at
// its "unified" folder) memory.max less memory.current, and for v1 (the
// line naming the memory controller, mounted at the root's "memory")
// memory.limit_in_bytes less memory.usage_in_bytes; each ancestor's too
// (a parent's limit binds its children). A path that is not there (a
// container whose cgroup is mounted as the root) is read at the root.
func (src limitSources) cgroupLimits() []MemoryLimit {
	b, err := os.ReadFile(filepath.Join(src.proc, "self", "cgroup"))
	if err != nil {
		return nil
	}
	var out []MemoryLimit
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			for _, root := range []string{src.cgroup, filepath.Join(src.cgroup, "unified")} {
				out = append(out, walkCgroup(root, f[2], LimitCgroupV2, "memory.max", "memory.current", "inactive_file")...)
			}
		case hasController(f[1], "memory"):
			out = append(out, walkCgroup(filepath.Join(src.cgroup, "memory"), f[2], LimitCgroupV1,
				"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")...)
		}
	}
	return out
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// walkCgroup reads the limit of cgroup p under the hierarchy mounted at
// root and of each of its ancestors up to the root: limitFile less
// usageFile less the inactive file cache (statKey of memory.stat), where
// the limit is a number (not "max", not v1's near 2^63).
func walkCgroup(root, p string, kind LimitKind, limitFile, usageFile, statKey string) []MemoryLimit {
	p = path.Clean("/" + p)
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
		p = "/" // the process's cgroup is the mount's root (a container)
	}
	var out []MemoryLimit
	for {
		dir := filepath.Join(root, filepath.FromSlash(p))
		if lim, ok := readInt(filepath.Join(dir, limitFile)); ok && lim < unlimited {
			if used, ok := readInt(filepath.Join(dir, usageFile)); ok {
				if inactive, ok := statValue(filepath.Join(dir, "memory.stat"), statKey); ok && inactive <= used {
					used -= inactive
				}
				out = append(out, MemoryLimit{Kind: kind, Available: lim - used, Limit: lim, Used: used, Cgroup: p})
			}
		}
		if p == "/" {
			return out
		}
		p = path.Dir(p)
	}
}

// readInt reads a file holding one decimal number ("max" and the like: not ok).
func readInt(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n >= 0
}

// statValue reads key's value in a memory.stat file ("key N" lines).
func statValue(file, key string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == key {
			n, err := strconv.ParseInt(f[1], 10, 64)
			return n, err == nil && n >= 0
		}
	}
	return 0, false
}
