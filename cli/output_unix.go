//go:build !windows

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/google/renameio/v2"

	"sweepbench/engine/data"
)

// fifoRetry is how often openFIFO tries again while a FIFO has no reader.
const fifoRetry = 100 * time.Millisecond

// openFIFO opens the FIFO target (the --out path names it) for writing
// without waiting for a reader as the shell's > would (a blocking open
// that no signal stops): non-blocking, which fails with ENXIO while no
// reader has it open, tried again every fifoRetry, saying once on stderr
// that it waits, until ctx is done (an *outputStopped). The fd stays
// non-blocking: Go's runtime poller waits on a full pipe for the writes,
// which a write deadline then stops (through).
func openFIFO(ctx context.Context, stderr io.Writer, target, path string) (*os.File, error) {
	for said := false; ; said = true {
		f, err := os.OpenFile(target, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if !errors.Is(err, syscall.ENXIO) {
			return f, err
		}
		if !said {
			fmt.Fprintf(stderr, "waiting for a reader on FIFO %s (Ctrl-C stops)\n", data.Sanitize(path))
		}
		t := time.NewTimer(fifoRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, &outputStopped{path: path, waiting: true}
		case <-t.C:
		}
	}
}

// createFile starts writing target (a regular file or none yet; the --out
// path names it, maybe through links) through a temporary file in its
// directory, renamed into place by Commit (renameio: atomic on POSIX file
// systems). A new file gets 0666 less the umask, as a file a shell
// redirection creates (a report is shared; the sessions database is the
// private one); a file replaced keeps its permissions.
func createFile(target, path string) (outputFile, error) {
	f, err := renameio.NewPendingFile(target, renameio.WithPermissions(0o666), renameio.WithExistingPermissions())
	if err != nil {
		return nil, err
	}
	return pending{f, path}, nil
}

type pending struct {
	*renameio.PendingFile
	path string // the --out path, named by a write error
}

// Write names the --out path in an error, not the temporary file's.
func (p pending) Write(b []byte) (int, error) {
	n, err := p.PendingFile.Write(b)
	return n, outputPathError(err, p.path)
}

func (p pending) Commit() error  { return p.CloseAtomicallyReplace() }
func (p pending) Cleanup() error { return p.PendingFile.Cleanup() }
