//go:build unix

package data

import (
	"os"
	"syscall"
)

// openNoWait opens p for reading with O_NONBLOCK, so that the open itself
// never waits: a FIFO swapped in after the caller's check of the path
// opens at once (instead of blocking, past any context, until a writer
// comes) and is refused by the check of the opened descriptor.
func openNoWait(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// setBlocking clears O_NONBLOCK on a file opened by openNoWait once it is
// known to be a regular file (which the runtime's poller does not take),
// so that its reads are ordinary blocking reads.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
