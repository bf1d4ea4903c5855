//go:build !windows

package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOutputPermissions: a new output file gets 0666 less the umask (0644
// under 022, as `> file` would), not the 0600 of a temporary file; a file
// replaced keeps its own permissions.
func TestOutputPermissions(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	write := func(path string) os.FileMode {
		t.Helper()
		f, err := createOutput(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("a,b\n")); err != nil {
			t.Fatal(err)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	p := filepath.Join(dir, "new.csv")
	if got := write(p); got != 0o644 {
		t.Errorf("new file: mode %o, want 644", got)
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if got := write(p); got != 0o640 {
		t.Errorf("replaced file: mode %o, want its own 640", got)
	}
}
