//go:build !unix

package data

import "os"

// openNoWait opens p for reading. Outside unix an open does not wait for
// a writer (a Windows named pipe is not a path of the file system).
func openNoWait(p string) (*os.File, error) { return os.Open(p) }

// setBlocking has nothing to clear outside unix.
func setBlocking(*os.File) error { return nil }
