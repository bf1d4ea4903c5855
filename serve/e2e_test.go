//go:build unix

package serve

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

// TestServeE2E runs scripts/serve-e2e.sh: the real binary serving on
// loopback, OpenSSH's client in tmux driving a sweep and reading its
// verdict, the refusals (a key not authorized, password, exec, -L, -R,
// SFTP), two users at once, a client killed mid-run with and without K,
// NO_COLOR. It needs tmux and openssh-client (.ci/run installs them).
func TestServeE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the OpenSSH end-to-end check (scripts/serve-e2e.sh)")
	}
	for _, c := range []string{"tmux", "ssh", "ssh-keygen", "sftp"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not installed: skipping the end-to-end check scripts/serve-e2e.sh (apt-get install -y tmux openssh-client)", c)
		}
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
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "scripts/serve-e2e.sh")
	cmd.Dir = ".."
	// On the time limit the script is asked to stop (its EXIT trap stops
	// the server and the clients it started), then killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 60 * time.Second
	// The sessions ls of the script read the users' databases it names
	// (--db); nothing is written outside its temporary directory.
	cmd.Env = append(os.Environ(), "SWEEPBENCH_BIN="+bin)
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/serve-e2e.sh:\n%s", out)
	if err != nil {
		t.Fatalf("scripts/serve-e2e.sh: %v", err)
	}
}
