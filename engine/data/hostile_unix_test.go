//go:build unix

package data

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// TestFIFOSwappedInAfterTheCheck: a regular file replaced by a FIFO between
// the check of the path and its open (a rename race) is refused at once,
// from the opened descriptor, instead of the open waiting for a writer
// that never comes (and ignoring the load's context). With the cache on,
// the file is opened first to hash it.
func TestFIFOSwappedInAfterTheCheck(t *testing.T) {
	dir := t.TempDir()
	p, fifo := filepath.Join(dir, "bars.csv"), filepath.Join(dir, "fifo")
	swap := false
	beforeOpen = func(path string) {
		if path == p && swap {
			swap = false
			if err := os.Rename(fifo, p); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { beforeOpen = nil }()
	for _, cache := range []string{"off", filepath.Join(dir, "cache")} {
		t.Setenv(EnvCacheDir, cache)
		os.Remove(p)
		if err := os.WriteFile(p, []byte(hdr+goodRows(3)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		swap = true
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := LoadFileContext(ctx, p, Options{}); done <- err }()
		select {
		case err := <-done:
			want := p + ": a named pipe (FIFO), not a regular file: only files are read (save the data to a file first)"
			if err == nil || err.Error() != want {
				t.Errorf("cache %s:\ngot  %v\nwant %s", cache, err, want)
			}
		case <-time.After(10 * time.Second): // a hang, not a slow load
			cancel()
			// Unblock the open: a writer that comes and goes.
			if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			err := <-done
			t.Fatalf("cache %s: the open waited for a writer on a FIFO swapped in after the check, even when cancelled (then: %v)", cache, err)
		}
		cancel()
	}
	// A regular file is read in blocking mode: O_NONBLOCK is cleared.
	os.Remove(p)
	if err := os.WriteFile(p, []byte(hdr+goodRows(3)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, size, err := openRegular(p)
	if err != nil || size != int64(len(hdr+goodRows(3))) {
		t.Fatalf("openRegular: %d, %v", size, err)
	}
	defer f.Close()
	rc, _ := f.SyscallConn()
	flags := -1
	rc.Control(func(fd uintptr) { flags, _ = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	if flags < 0 || flags&unix.O_NONBLOCK != 0 {
		t.Errorf("flags %#x: O_NONBLOCK still set (or unknown)", flags)
	}
}
