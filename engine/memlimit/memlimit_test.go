package memlimit

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeTree writes files (path relative to the root: content) under a
// temporary root and returns it.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestMemoryLimit: the limit is the least of MemAvailable, RLIMIT_AS less
// the mapped size (VmSize) and each memory-limited cgroup (v2 and v1, the
// cgroup's ancestors too) less its usage (inactive file cache left out),
// and says which bound it; read from a fake /proc and cgroup tree and a
// fake RLIMIT_AS, so nothing depends on the host.
func TestMemoryLimit(t *testing.T) {
	const gib = 1 << 30
	meminfo := "MemTotal:       24683584 kB\nMemAvailable:   23943708 kB\n"
	status := "Name:\tsweepbench\nVmPeak:\t 1100000 kB\nVmSize:\t 1000000 kB\n"
	noRlimit := func() (uint64, bool) { return 0, false }
	asLimit := func() (uint64, bool) { return 8000000 * 1024, true } // ulimit -v 8000000
	cases := []struct {
		name   string
		files  map[string]string
		rlimit func() (uint64, bool)
		want   MemoryLimit
		says   string
	}{
		{"MemAvailable only", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/\n"}, noRlimit,
			MemoryLimit{Available: 23943708 * 1024, Kind: LimitMemAvailable, Limit: 23943708 * 1024},
			"the memory the system has available (MemAvailable)"},
		{"ulimit -v", map[string]string{"proc/meminfo": meminfo, "proc/self/status": status, "proc/self/cgroup": "0::/\n"}, asLimit,
			MemoryLimit{Available: 8000000*1024 - 1000000*1024, Kind: LimitAddressSpace, Limit: 8000000 * 1024, Used: 1000000 * 1024},
			"the address-space limit (ulimit -v: 7.6 GiB, 976.6 MiB of it mapped already)"},
		{"an unlimited RLIMIT_AS", map[string]string{"proc/meminfo": meminfo, "proc/self/status": status}, func() (uint64, bool) { return 1 << 63, true },
			MemoryLimit{Available: 23943708 * 1024, Kind: LimitMemAvailable, Limit: 23943708 * 1024}, ""},
		{"cgroup v2 memory.max", map[string]string{
			"proc/meminfo": meminfo, "proc/self/status": status, "proc/self/cgroup": "0::/user.slice/app.scope\n",
			"cg/user.slice/memory.max":           "max\n",
			"cg/user.slice/app.scope/memory.max": "4294967296\n", "cg/user.slice/app.scope/memory.current": "1073741824\n",
			"cg/user.slice/app.scope/memory.stat": "anon 805306368\nfile 268435456\ninactive_file 268435456\nactive_file 0\n",
		}, asLimit,
			MemoryLimit{Available: 4*gib - (gib - gib/4), Kind: LimitCgroupV2, Limit: 4 * gib, Used: gib - gib/4, Cgroup: "/user.slice/app.scope"},
			"the memory limit of cgroup /user.slice/app.scope (memory.max: 4.0 GiB, 768.0 MiB in use)"},
		{"cgroup v2, a parent's limit binds", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/user.slice/app.scope\n",
			"cg/user.slice/memory.max": "2147483648\n", "cg/user.slice/memory.current": "1610612736\n",
			"cg/user.slice/app.scope/memory.max": "4294967296\n", "cg/user.slice/app.scope/memory.current": "1073741824\n",
		}, noRlimit,
			MemoryLimit{Available: gib / 2, Kind: LimitCgroupV2, Limit: 2 * gib, Used: gib + gib/2, Cgroup: "/user.slice"}, ""},
		{"cgroup v2 in a container (its cgroup mounted as the root)", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/kubepods/pod1/ctr\n",
			"cg/memory.max": "3221225472\n", "cg/memory.current": "1073741824\n",
		}, noRlimit,
			MemoryLimit{Available: 2 * gib, Kind: LimitCgroupV2, Limit: 3 * gib, Used: gib, Cgroup: "/"}, ""},
		{"cgroup v1 (hybrid: v2 unified beside it, unlimited)", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "5:devices:/\n4:memory:/process_api/b24\n0::/\n",
			"cg/memory/process_api/b24/memory.limit_in_bytes": "2147483648\n", "cg/memory/process_api/b24/memory.usage_in_bytes": "1207959552\n",
			"cg/memory/process_api/b24/memory.stat": "cache 134217728\ntotal_inactive_file 134217728\n",
			"cg/memory/memory.limit_in_bytes":       "9223372036854771712\n", "cg/memory/memory.usage_in_bytes": "2556583936\n",
			"cg/unified/cgroup.procs": "",
		}, noRlimit,
			MemoryLimit{Available: gib, Kind: LimitCgroupV1, Limit: 2 * gib, Used: gib, Cgroup: "/process_api/b24"},
			"the memory limit of cgroup /process_api/b24 (memory.limit_in_bytes: 2.0 GiB, 1.0 GiB in use)"},
		{"cgroup v1 unlimited", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "4:cpu,memory:/\n",
			"cg/memory/memory.limit_in_bytes": "9223372036854771712\n", "cg/memory/memory.usage_in_bytes": "2556583936\n",
		}, noRlimit,
			MemoryLimit{Available: 23943708 * 1024, Kind: LimitMemAvailable, Limit: 23943708 * 1024}, ""},
		{"a cgroup at its limit: 1 byte, not unknown", map[string]string{
			"proc/self/cgroup": "0::/a\n", "cg/a/memory.max": "1048576\n", "cg/a/memory.current": "2097152\n",
		}, noRlimit,
			MemoryLimit{Available: 1, Kind: LimitCgroupV2, Limit: 1 << 20, Used: 2 << 20, Cgroup: "/a"}, ""},
		{"nothing readable", map[string]string{}, noRlimit, MemoryLimit{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := fakeTree(t, c.files)
			src := limitSources{proc: filepath.Join(root, "proc"), cgroup: filepath.Join(root, "cg"), rlimitAS: c.rlimit}
			got := src.memoryLimit()
			if got != c.want {
				t.Fatalf("limit %+v, want %+v", got, c.want)
			}
			if c.says != "" && got.Describe() != c.says {
				t.Fatalf("Describe() = %q, want %q", got.Describe(), c.says)
			}
		})
	}
}
