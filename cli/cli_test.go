//go:build unix

package cli

// End-to-end tests of the CLI on real database files. Most run the
// commands in process (cobra, as the binary would); the ones that need a
// process of their own (kill -9, another user) run the sweepbench binary,
// built from the module's main package (sweepbench(t)).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"sweepbench/engine/data/datatest"
	"sweepbench/sessions"
)

func TestMain(m *testing.M) {
	// The parsed-dataset cache of every load, in process or not, in a
	// temporary folder rather than the user's.
	code := datatest.RunWithTempCache(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// sweepbench returns the sweepbench binary, built once from the module's
// main package (main.go: its blank import of earlyinit included), in a
// directory every user can read: the read-only case runs it as another
// user.
func sweepbench(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "sweepbench-cli"); binErr != nil {
			return
		}
		os.Chmod(binDir, 0o755)
		binPath = filepath.Join(binDir, "sweepbench")
		build := exec.Command("go", "build", "-o", binPath, "sweepbench")
		if out, err := build.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build sweepbench: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type result struct {
	stdout, stderr string
	code           int
}

// cli runs sweepbench in process with XDG_DATA_HOME in a temporary
// directory, so that no test touches the user's default database; the
// error is printed and mapped to an exit code as main does.
func cli(t *testing.T, xdg string, args ...string) result {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", xdg)
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	r := result{code: 0}
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(&errb, "sweepbench:", phrase(err))
		r.code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			r.code = ee.code
		}
	}
	r.stdout, r.stderr = out.String(), errb.String()
	return r
}

// cliProcess runs sweepbench as a process of its own (attr: as another
// user), for what needs one.
func cliProcess(t *testing.T, xdg string, attr *syscall.SysProcAttr, args ...string) result {
	t.Helper()
	cmd := exec.Command(sweepbench(t), args...)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+xdg)
	cmd.SysProcAttr = attr
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out.String(), errb.String(), 0}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// openStore opens (creating) the sessions database at path.
func openTestStore(t *testing.T, path string) *sessions.Store {
	t.Helper()
	s, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
