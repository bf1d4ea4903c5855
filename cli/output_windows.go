//go:build windows

package cli

import "os"

// createFile writes target (a regular file or none yet) directly: Windows
// has no atomic replace that renameio supports, so Cleanup removes what a
// failed write left (checkOutput's refusals still hold).
func createFile(target, _ string) (outputFile, error) {
	f, err := os.Create(target)
	if err != nil {
		return nil, err
	}
	return &direct{File: f}, nil
}

type direct struct {
	*os.File
	done bool
}

func (d *direct) Commit() error {
	d.done = true
	return d.Close()
}

func (d *direct) Cleanup() error {
	if d.done {
		return nil
	}
	d.done = true
	d.Close()
	return os.Remove(d.Name())
}
