package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"sweepbench/internal/e2etest"
)

// TestE2ETmux runs scripts/tui-e2e.sh: the real binary in tmux, the
// issue's small study, the parity pane's verdict and numbers, a resize,
// quitting, and the terminal restored. It needs tmux (.ci/run installs it).
func TestE2ETmux(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the tmux end-to-end check (scripts/tui-e2e.sh)")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: skipping the end-to-end check scripts/tui-e2e.sh (apt-get install -y tmux)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the end-to-end check needs a Unix tty")
	}
	bin := e2etest.Build(t, "..")
	// The workbench saves its runs: into a database of this test's own
	// (never the user's, nor the script's home), through a wrapper that
	// adds --db to every command line of the script.
	wrapper := filepath.Join(t.TempDir(), "sweepbench-e2e")
	db := filepath.Join(t.TempDir(), "sessions.db")
	script := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\" --db %q\n", bin, db)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e2etest.Run(t, "..", "scripts/tui-e2e.sh", 5*time.Minute, "SWEEPBENCH_BIN="+wrapper)
}
