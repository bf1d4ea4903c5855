package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"
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

// mark prints one TimingsEnv line for stage, when asked for.
func mark(stage string) {
	if os.Getenv(TimingsEnv) != "1" {
		return
	}
	fmt.Fprintf(os.Stderr, "timing %8.3f s  %s\n", time.Since(processStart).Seconds(), stage)
}
