package tui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
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
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "sweepbench")
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "scripts/tui-e2e.sh")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "SWEEPBENCH_BIN="+bin)
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/tui-e2e.sh:\n%s", out)
	if err != nil {
		t.Fatalf("scripts/tui-e2e.sh: %v", err)
	}
}
