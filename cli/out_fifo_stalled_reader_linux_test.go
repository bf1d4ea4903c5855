//go:build linux

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"sweepbench/engine/text"
)

// TestOutFIFOStalledReaderStops (Linux: F_SETPIPE_SZ, TIOCINQ): a FIFO whose reader opened it and reads
// nothing fills up (a pipe of one page here, smaller than the report), and
// the write that waits on it stops on SIGTERM: exit 130, saying how much
// of the report went (what the pipe holds: the report's first bytes).
func TestOutFIFOStalledReaderStops(t *testing.T) {
	xdg, dir := t.TempDir(), t.TempDir()
	grid := []string{"run", "--hma", "10:40:10", "--hma3", "12:48:12", "--backend", "reference", "--no-save", "--format", "csv"}
	want := cli(t, xdg, append(grid, "-q")...)
	if want.code != 0 || len(want.stdout) <= 2*os.Getpagesize() {
		t.Fatalf("csv to stdout: exit %d, %d bytes (want more than two pages): %s", want.code, len(want.stdout), want.stderr)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0) // a reader that never reads
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rd)
	size, err := unix.FcntlInt(uintptr(rd), unix.F_SETPIPE_SZ, os.Getpagesize())
	if err != nil {
		t.Fatal(err)
	}
	p := startFIFOProcess(t, xdg, append(grid, "--out", fifo)...)
	p.until(t, "filling the pipe", func() bool {
		n, err := unix.IoctlGetInt(rd, unix.TIOCINQ)
		return err == nil && n == size
	})
	code := p.stop(t, syscall.SIGTERM)
	stderr := p.stderr.String()
	got := drain(rd)
	lost := "sweepbench: interrupted while writing " + fifo + ", whose reader stopped reading: the report was cut short after "
	if code != 130 || !strings.Contains(stderr, lost) || p.stdout.String() != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant 130, nothing and %q", code, p.stdout.String(), stderr, lost)
	}
	if len(got) != size || !strings.HasPrefix(want.stdout, got) {
		t.Errorf("the pipe holds %d bytes %q, want the report's first %d", len(got), got, size)
	}
	if n := text.Thousands(len(got)); !strings.Contains(stderr, lost+n+" bytes") {
		t.Errorf("does not say %s bytes went:\n%s", n, stderr)
	}
	if strings.Contains(stderr, "waiting for a reader") {
		t.Errorf("waited for a reader that was there:\n%s", stderr)
	}
}
