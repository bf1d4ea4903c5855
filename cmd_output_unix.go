//go:build !windows

package main

import "github.com/google/renameio/v2"

// createOutput starts writing path through a temporary file in its
// directory, renamed into place by Commit (renameio: atomic on POSIX file
// systems). A new file gets 0666 less the umask, as a file a shell
// redirection creates (a report is shared; the sessions database is the
// private one); a file replaced keeps its permissions.
func createOutput(path string) (outputFile, error) {
	f, err := renameio.NewPendingFile(path, renameio.WithPermissions(0o666), renameio.WithExistingPermissions())
	if err != nil {
		return nil, err
	}
	return pending{f}, nil
}

type pending struct{ *renameio.PendingFile }

func (p pending) Commit() error  { return p.CloseAtomicallyReplace() }
func (p pending) Cleanup() error { return p.PendingFile.Cleanup() }
