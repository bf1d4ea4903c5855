//go:build unix

package serve

import (
	"os/exec"
	"testing"
	"time"

	"sweepbench/internal/e2etest"
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
	bin := e2etest.Build(t, "..")
	// The sessions ls of the script read the users' databases it names
	// (--db); nothing is written outside its temporary directory.
	e2etest.Run(t, "..", "scripts/serve-e2e.sh", 9*time.Minute, "SWEEPBENCH_BIN="+bin)
}
