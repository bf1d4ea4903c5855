//go:build unix

package data

import (
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFOAndSocketRefused: a FIFO is refused without opening it (which
// would block until a writer comes), a socket by name.
func TestFIFOAndSocketRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "bars.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadFile(fifo, Options{}); done <- err }()
	select {
	case err := <-done:
		if err == nil || err.Error() != fifo+": a named pipe (FIFO), not a regular file: only files are read (save the data to a file first)" {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("LoadFile blocked on a FIFO")
	}
	sock := filepath.Join(dir, "s.csv")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skip("unix socket:", err)
	}
	defer l.Close()
	if _, err := LoadFile(sock, Options{}); err == nil || !strings.Contains(err.Error(), "a socket, not a regular file") {
		t.Errorf("socket: %v", err)
	}
}
