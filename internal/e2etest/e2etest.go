// Package e2etest builds the sweepbench binary and runs the end-to-end
// scripts (scripts/tui-e2e.sh, scripts/serve-e2e.sh) for the tests that
// drive them; the scripts find the binary in SWEEPBENCH_BIN. Tests only.
package e2etest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// Build compiles the binary (CGO_ENABLED=0) from the repository's root,
// root relative to the test's folder, into a temporary folder of t, and
// returns its path; a build that fails fails t.
func Build(t testing.TB, root string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "sweepbench")
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Run runs `bash script` in root with env added (SWEEPBENCH_BIN=... among
// it) for at most limit: past it the script is asked to stop (SIGTERM: its
// EXIT trap stops what it started), then killed a minute later. Its output
// goes to t's log; a failure fails t.
func Run(t testing.TB, root, script string, limit time.Duration, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", script, out)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
}
