package tui

import (
	"fmt"
	"os"
	"testing"

	"sweepbench/engine/data"
)

// TestMain keeps the parsed-dataset cache of the tests' loads in a
// temporary folder rather than the user's.
func TestMain(m *testing.M) {
	cache, err := os.MkdirTemp("", "sweepbench-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(data.EnvCacheDir, cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}
