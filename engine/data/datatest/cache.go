package datatest

import (
	"fmt"
	"os"
	"testing"

	"sweepbench/engine/data"
)

// RunWithTempCache runs a package's tests (m.Run, from its TestMain) with
// the parsed-dataset cache in a temporary folder rather than the user's
// (data.EnvCacheDir, inherited by child processes too), removed after;
// it returns the exit code.
func RunWithTempCache(m *testing.M) int {
	cache, err := os.MkdirTemp("", "sweepbench-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(cache)
	os.Setenv(data.EnvCacheDir, cache)
	return m.Run()
}
