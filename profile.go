package main

import (
	"fmt"
	"os"
	"runtime/pprof"
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
