package serve

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sweepbench/engine/data"
)

// TestServeLeavesWorkingDirAlone: a server that started, served a
// workbench that loaded a data file (a root's, named by --data) and
// stopped wrote nothing in its working directory (no id_ed25519 of
// wish's) and left its mode as it was, nor anything in the user's cache
// folder (the parsed-dataset cache is DATA-DIR/cache): it writes only
// under its data dir, so it runs in a read-only working directory
// (README's systemd unit).
func TestServeLeavesWorkingDirAlone(t *testing.T) {
	wd := t.TempDir()
	csv, err := os.ReadFile(filepath.Join("..", "testdata", "data", "binance_archive_FILUSDT-1m-2023-08_head.csv"))
	if err != nil {
		t.Fatal(err)
	}
	prices := filepath.Join(wd, "prices.csv")
	if err := os.WriteFile(prices, csv, 0o644); err != nil {
		t.Fatal(err)
	}
	// The user's cache folder, wherever this system keeps it, empty.
	home := t.TempDir()
	t.Setenv(data.EnvCacheDir, "")
	for _, v := range []string{"XDG_CACHE_HOME", "HOME", "LocalAppData"} {
		t.Setenv(v, home)
	}
	if dir, err := os.UserCacheDir(); err != nil || !strings.HasPrefix(dir, home) {
		t.Fatalf("the user's cache folder is %q (%v), not in %s", dir, err, home)
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
	ts := startServer(t, func(c *Config) {
		c.DataRoots, c.Flags.Data, c.Flags.DataGiven = []string{wd}, prices, true
	})
	w := openWorkbench(t, ts.client(t, "alice", "alice"), nil)
	waitText(t, "alice's screen", w.out, `signed in as alice`, 20*time.Second)
	waitText(t, "the data file loaded on alice's screen", w.out, `2,000 bars`, 20*time.Second)
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
	var wrote []string
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if p != home {
			wrote = append(wrote, p)
		}
		return nil
	})
	if len(wrote) > 0 {
		t.Errorf("the server wrote in the user's home and cache folder: %s", strings.Join(wrote, " "))
	}
	entries, _ := filepath.Glob(filepath.Join(ts.dataDir, CacheFolder, "*.bars"))
	if len(entries) == 0 {
		t.Errorf("no parsed-dataset cache entry in %s", filepath.Join(ts.dataDir, CacheFolder))
	}
	if got := data.CacheDir(); strings.HasPrefix(got, ts.dataDir) {
		t.Errorf("the cache is still in the stopped server's data dir: %s", got)
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
