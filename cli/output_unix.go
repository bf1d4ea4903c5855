//go:build !windows

package cli

import (
	"github.com/google/renameio/v2"
)

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
