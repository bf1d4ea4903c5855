//go:build unix

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"sweepbench/sessions"
)

// TestBrokenDatabase: with a database that cannot be used (corrupted,
// read-only, a directory), `run` warns, naming the file, and prints the
// results anyway; ls fails with an error naming the file.
func TestBrokenDatabase(t *testing.T) {
	xdg := t.TempDir()
	args := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "--format", "csv"}
	want := cli(t, xdg, append(args, "--no-save")...)
	if want.code != 0 || strings.Count(want.stdout, "\n") != 1+2*9 {
		t.Fatalf("run --no-save: %+v", want)
	}
	if _, err := os.Stat(filepath.Join(xdg, "sweepbench")); !os.IsNotExist(err) {
		t.Errorf("--no-save created the default database directory (%v)", err)
	}

	// A world-readable directory, so that the read-only case can run as an
	// unprivileged user when the tests run as root.
	dir, err := os.MkdirTemp("", "sessions-broken")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)

	corrupted := filepath.Join(dir, "corrupted.db")
	os.WriteFile(corrupted, bytes.Repeat([]byte("this is not a sqlite database\n"), 200), 0o644)

	roDir := filepath.Join(dir, "ro")
	os.Mkdir(roDir, 0o755)
	readOnly := filepath.Join(roDir, "sessions.db")
	s, err := sessions.Open(readOnly)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Chmod(readOnly, 0o444)
	os.Chmod(roDir, 0o555)
	defer os.Chmod(roDir, 0o755)
	var asUser *syscall.SysProcAttr
	if os.Geteuid() == 0 {
		asUser = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}

	directory := filepath.Join(dir, "adir")
	os.Mkdir(directory, 0o755)

	for _, c := range []struct {
		name, db string
		attr     *syscall.SysProcAttr
		says     string
	}{
		{"corrupted", corrupted, nil, "not a database"},
		{"read-only", readOnly, asUser, "not writable"},
		{"directory", directory, nil, "is a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cliProcess(t, xdg, c.attr, append(args, "--db", c.db)...)
			if r.code != 0 || r.stdout != want.stdout {
				t.Errorf("exit %d; stdout differs from the unsaved run: %v\nstderr: %s", r.code, r.stdout != want.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, c.db) || !strings.Contains(r.stderr, c.says) {
				t.Errorf("stderr does not warn naming %s (%q):\n%s", c.db, c.says, r.stderr)
			}
			// ls reads a read-only file as it is; it names any other broken file.
			ls := cliProcess(t, xdg, c.attr, "sessions", "ls", "--db", c.db)
			if c.name == "read-only" {
				if ls.code != 0 {
					t.Errorf("ls of a read-only file: exit %d, stderr %s", ls.code, ls.stderr)
				}
			} else if ls.code == 0 || !strings.Contains(ls.stderr, c.db) {
				t.Errorf("ls: exit %d, stderr %s", ls.code, ls.stderr)
			}
		})
	}
}
