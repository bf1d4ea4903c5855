package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServeLeavesWorkingDirAlone: a server that started, served a
// workbench and stopped wrote nothing in its working directory (no
// id_ed25519 of wish's) and left its mode as it was: it writes only under
// its data dir, so it runs in a read-only working directory (README's
// systemd unit).
func TestServeLeavesWorkingDirAlone(t *testing.T) {
	wd := t.TempDir()
	if err := os.WriteFile(filepath.Join(wd, "prices.csv"), []byte("t,close\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	look := func() string {
		fi, err := os.Stat(wd)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(wd)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return fi.Mode().String() + " " + strings.Join(names, ",")
	}
	before := look()
	t.Chdir(wd)
	if runtime.GOOS != "windows" && os.Geteuid() != 0 {
		// Read only, as under ProtectSystem=strict (root writes anyway;
		// the listing below still shows what it wrote).
		if err := os.Chmod(wd, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(wd, 0o755) })
		before = look()
	}
	ts := startServer(t, nil)
	w := openWorkbench(t, ts.client(t, "alice", "alice"), nil)
	waitText(t, "alice's screen", w.out, `signed in as alice`, 20*time.Second)
	w.quit(t)
	if ok, err := ts.stop(40 * time.Second); !ok || err != nil {
		t.Fatalf("Serve: returned %v, %v", ok, err)
	}
	if after := look(); after != before {
		t.Fatalf("the working directory changed: %q before, %q after", before, after)
	}
	if _, err := os.Stat(filepath.Join(ts.dataDir, "host_ed25519")); err != nil {
		t.Errorf("the host key is not in the data dir: %v", err)
	}
}

// TestNoPrivateKeyTracked: no file tracked by git holds a private key
// (a test's own fixtures, *_test.go, aside): a key written by a test or a
// server run must not be committed.
func TestNoPrivateKeyTracked(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: skipping the check that no private key is tracked")
	}
	top, err := exec.Command(git, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v): skipping the check that no private key is tracked", err)
	}
	// -I: text files only; a PEM or OpenSSH private key is text.
	cmd := exec.Command(git, "grep", "-l", "-I", "-e", "PRIVATE KEY-----", "--", ".", ":(exclude)*_test.go")
	cmd.Dir = strings.TrimSpace(string(top))
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && len(out) == 0 {
		return // no match
	}
	if err != nil {
		t.Fatalf("git grep: %v", err)
	}
	files := strings.Fields(string(out))
	slices.Sort(files)
	t.Fatalf("tracked files hold a private key (git rm them): %s", strings.Join(files, " "))
}
