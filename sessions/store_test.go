package sessions_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sweepbench/sessions"
)

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cases := []struct {
		name, xdg, want string
	}{
		{"XDG_DATA_HOME", "/data/me", "/data/me/sweepbench/sessions.db"},
		{"relative XDG_DATA_HOME is ignored", "rel/dir", filepath.Join(home, ".local/share/sweepbench/sessions.db")},
		{"unset", "", filepath.Join(home, ".local/share/sweepbench/sessions.db")},
	}
	if runtime.GOOS != "linux" {
		t.Skip("the fallback is the Linux one here")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_DATA_HOME", c.xdg)
			got, err := sessions.DefaultPath()
			if err != nil || got != c.want {
				t.Errorf("DefaultPath() = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestOpenErrors: a file that is not a sessions database, or a directory,
// fails with a *DBError that names the path and says what to do.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, []byte(strings.Repeat("not sqlite\n", 500)), 0o644)
	for _, c := range []struct{ name, path, says string }{
		{"not a database", garbage, "move it aside"},
		{"a directory", dir, "is a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := sessions.Open(c.path)
			var de *sessions.DBError
			if !errors.As(err, &de) || de.Path != c.path || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("Open(%s): %v", c.path, err)
			}
		})
	}
	// A file nobody can write is read with OpenReadOnly.
	if os.Geteuid() != 0 {
		path := filepath.Join(t.TempDir(), "ro.db")
		s, err := sessions.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		os.Chmod(path, 0o444)
		os.Chmod(filepath.Dir(path), 0o555)
		defer os.Chmod(filepath.Dir(path), 0o755)
		if _, err := sessions.Open(path); !sessions.IsReadOnly(err) {
			t.Errorf("Open of a read-only file: %v, want a read-only error", err)
		}
		ro, err := sessions.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		ro.Close()
	}
}

// TestDatabaseIsPrivate: a new database and the directory made for it are
// private (0600, 0700): they hold data paths and host names. So are the
// WAL files SQLite makes beside it.
func TestDatabaseIsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX modes on Windows")
	}
	dir := filepath.Join(t.TempDir(), "new", "sweepbench")
	path := filepath.Join(dir, "sessions.db")
	s, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runSaved(t, s, newStudy(t, btcusdt(t, 2000), "10:20:10", "12:24:12"), origin(2000), "")
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{dir, 0o700}, {path, 0o600}, {path + "-wal", 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			if c.path == path+"-wal" && os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, got, c.want)
		}
	}
}
