package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"sweepbench/engine/text"
)

// ProfileEnv names a file that receives a CPU profile of the whole command
// (start-up, loading, the lanes, parity, output: where the time goes, not
// only the kernels'); `go tool pprof FILE` reads it.
const ProfileEnv = "SWEEPBENCH_CPUPROFILE"

// startProfile starts the CPU profile ProfileEnv asks for and returns what
// stops it (a no-op when none is asked for or it cannot start: the command
// runs anyway, with a warning).
func startProfile() (stop func()) {
	path := os.Getenv(ProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sweepbench: %s=%s: no profile: %v\n", ProfileEnv, path, err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// TimingsEnv, set to 1, prints to stderr the wall time since the process
// started at each stage of `run` (dataset and backend ready, study done,
// robustness done, output written, the sessions database closed): where the whole command's time goes,
// beside the CPU profile (which does not see a GPU's waits as time).
const TimingsEnv = "SWEEPBENCH_TIMINGS"

// processStart is when main began (close to the process's start).
var processStart = time.Now()

// mark prints one TimingsEnv line for stage, when asked for: the wall
// time, then the Go heap in use (live and not yet collected) and the
// memory the runtime holds from the system (the heap with its free
// spans, stacks, the rest), both in bytes as text.Bytes says them.
func mark(stage string) {
	if os.Getenv(TimingsEnv) != "1" {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms) // stops the world for microseconds: only when asked for
	fmt.Fprintf(os.Stderr, "timing %8.3f s  heap %s of %s  %s\n", time.Since(processStart).Seconds(),
		text.Bytes(int64(ms.HeapInuse)), text.Bytes(int64(ms.Sys-ms.HeapReleased)), stage)
}

// HeapProfileEnv names a file that receives a heap profile of `run` when
// its study is done (the lanes, the parity report and the saving over,
// the report not yet written: when what the run keeps of a large grid is
// all live); `go tool pprof -sample_index=inuse_space FILE` reads what
// is held then, -sample_index=alloc_space what was allocated on the way.
const HeapProfileEnv = "SWEEPBENCH_MEMPROFILE"

// heapProfile writes the heap profile HeapProfileEnv asks for (after a
// collection, so that it holds only what is live); a file that cannot be
// written is warned about, and the command goes on.
func heapProfile() {
	path := os.Getenv(HeapProfileEnv)
	if path == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sweepbench: %s=%s: no heap profile: %v\n", HeapProfileEnv, path, err)
	}
}
