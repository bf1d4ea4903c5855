package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// An output file (--out) is written to a temporary file in its directory
// and renamed into place once complete (createOutput), so a failed or
// interrupted write never leaves half a report and never replaces a good
// file with one. checkOutput refuses, before anything is computed, a
// missing directory and a file the command reads or keeps (the sessions
// database, the input data).

// outputFile is a report being written: Commit puts it in place, Cleanup
// drops it (a no-op after Commit).
type outputFile interface {
	io.Writer
	Commit() error
	Cleanup() error
}

// protected is a file an --out may not name, with what it is.
type protected struct {
	path, what string
}

// checkOutput refuses an --out path whose directory does not exist, that
// is a directory, or that names one of keep (by path or as the same file).
func checkOutput(path string, keep ...protected) error {
	if path == "" || path == "-" {
		return nil
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--out %s: the directory %s does not exist", path, dir)
		}
		return fmt.Errorf("--out %s: %v", path, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("--out %s: %s is not a directory", path, dir)
	}
	out, outErr := os.Stat(path)
	if outErr == nil && out.IsDir() {
		return fmt.Errorf("--out %s is a directory: name a file in it", path)
	}
	abs, _ := filepath.Abs(path)
	for _, k := range keep {
		if k.path == "" || strings.HasPrefix(k.path, "embedded:") {
			continue
		}
		kabs, _ := filepath.Abs(k.path)
		same := kabs == abs
		if !same && outErr == nil {
			if ki, err := os.Stat(k.path); err == nil {
				same = os.SameFile(out, ki)
			}
		}
		if same {
			return fmt.Errorf("--out %s is %s: refusing to overwrite it (name another file)", path, k.what)
		}
	}
	return nil
}

// emit writes a report with write to out, or to stdout when out is "" or
// "-", through createOutput. When out cannot be created (the disk changed
// since checkOutput), the report goes to stdout instead and the error says
// so: nothing computed is lost, and the command still fails.
func emit(stdout, stderr io.Writer, out string, quiet bool, write func(io.Writer) error) error {
	if out == "" || out == "-" {
		return write(stdout)
	}
	f, err := createOutput(out)
	if err != nil {
		fmt.Fprintf(stderr, "sweepbench: --out %s: %v; writing to stdout instead\n", out, err)
		if werr := write(stdout); werr != nil {
			return werr
		}
		return fmt.Errorf("--out %s: %v (the report went to stdout instead)", out, err)
	}
	if err := write(f); err != nil {
		f.Cleanup()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := f.Commit(); err != nil {
		f.Cleanup()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if !quiet {
		fmt.Fprintf(stderr, "wrote %s\n", out)
	}
	return nil
}
