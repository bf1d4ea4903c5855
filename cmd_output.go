package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sweepbench/engine"
	"sweepbench/engine/data"
)

// An output file (--out) is written to a temporary file in its directory
// and renamed into place once complete (createOutput), so a failed or
// interrupted write never leaves half a report and never replaces a good
// file with one. checkOutput refuses, before anything is computed, a
// missing directory and a file the command reads or keeps (the sessions
// database, the input data: every file of a folder, a glob or a zip
// member's archive, and a new file a folder or a glob would take in).

// outputFile is a report being written: Commit puts it in place, Cleanup
// drops it (a no-op after Commit).
type outputFile interface {
	io.Writer
	// Seek and Truncate let a file streamed while the study ran be
	// written again from the report (engine.RewindableWriter).
	io.Seeker
	io.ReaderAt
	Truncate(size int64) error
	Commit() error
	Cleanup() error
}

// protected is a file an --out may not name, with what it is. With data,
// path is a dataset spec (see inputData).
type protected struct {
	path, what string
	data       bool
}

// inputData protects the files of every dataset spec (as --data takes
// it): a file, the zip archive of "z.zip#member", every file a folder or
// a glob reads, and, for a folder or a glob, a new file it would take in
// on its next load (the report would become part of the input).
func inputData(what string, specs ...string) []protected {
	keep := make([]protected, 0, len(specs))
	for _, s := range specs {
		keep = append(keep, protected{path: s, what: what, data: true})
	}
	return keep
}

// checkOutput refuses an --out path whose directory does not exist, that
// is a directory, or that names one of keep (by path or as the same file;
// a dataset spec's files: see inputData).
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
	} else if outErr != nil {
		out = nil
	}
	for _, k := range keep {
		if k.path == "" || strings.HasPrefix(k.path, "embedded:") {
			continue
		}
		if k.data {
			if err := checkInput(path, out, k); err != nil {
				return err
			}
		} else if sameFile(path, out, k.path) {
			return fmt.Errorf("--out %s is %s: refusing to overwrite it (name another file)", path, k.what)
		}
	}
	return nil
}

// checkInput refuses an --out path (out: its FileInfo, nil when it does
// not exist) that is a file the dataset spec k.path reads, or that the
// spec would read next time.
func checkInput(path string, out fs.FileInfo, k protected) error {
	src := data.Sources(k.path)
	for _, f := range src.Files {
		if !sameFile(path, out, f) {
			continue
		}
		switch {
		case src.Many:
			return fmt.Errorf("--out %s is a file of %s %s: refusing to overwrite it (name another file)", path, k.what, k.path)
		case src.Member:
			return fmt.Errorf("--out %s is the zip archive of %s %s: refusing to overwrite it (name another file)", path, k.what, k.path)
		default:
			return fmt.Errorf("--out %s is %s: refusing to overwrite it (name another file)", path, k.what)
		}
	}
	if data.Takes(k.path, path) {
		return fmt.Errorf("--out %s would become part of %s %s (its next load would read the report as data): name a file outside it", path, k.what, k.path)
	}
	return nil
}

// sameFile reports whether path (out: its FileInfo, nil when it does not
// exist) and other are one file: the same cleaned absolute path, or the
// same file through a link.
func sameFile(path string, out fs.FileInfo, other string) bool {
	abs, _ := filepath.Abs(path)
	oabs, _ := filepath.Abs(other)
	if abs == oabs {
		return true
	}
	if out == nil {
		return false
	}
	oi, err := os.Stat(other)
	return err == nil && os.SameFile(out, oi)
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

// reportFormats are the --format values of run and sessions show: the
// table, the whole report as JSON, and the per-combo row formats.
const reportFormats = "table, json, csv, jsonl or parquet"

// checkFormat refuses an unknown --format, and Parquet (binary) bound for
// a terminal.
func checkFormat(format, out string, stdout io.Writer) error {
	if _, rows := engine.ParseRowFormat(format); !rows && format != "table" && format != "json" {
		return fmt.Errorf("--format %q: want %s", format, reportFormats)
	}
	if format == string(engine.RowsParquet) && (out == "" || out == "-") && isTerminal(stdout) {
		return errors.New("--format parquet is binary: name a file with --out FILE (or redirect stdout)")
	}
	return nil
}

// streamOutput is an --out file of per-combo rows (csv, jsonl, parquet)
// written while the study runs: engine.RowWriter takes the study's chunks
// (StudyOptions.Sink) and puts each row in grid order as its turn comes;
// finish ends the file once the report is known.
type streamOutput struct {
	path string
	file outputFile
	rows *engine.RowWriter
}

// startStream opens out to receive the rows of study s in format, or
// returns nil when the report is written after the run instead (by emit):
// a format that is not per combo, stdout (a pipe cannot be rewound should
// a lane stop early and the rows need writing again), or a file that
// cannot be created now (emit then says why and prints to stdout).
func startStream(out, format string, s *engine.Study) *streamOutput {
	f, rows := engine.ParseRowFormat(format)
	if !rows || out == "" || out == "-" {
		return nil
	}
	file, err := createOutput(out)
	if err != nil {
		return nil
	}
	rw, err := engine.NewRowWriter(file, f, s)
	if err != nil {
		file.Cleanup()
		return nil
	}
	return &streamOutput{path: out, file: file, rows: rw}
}

// finish ends the streamed file with rep (nil: the study never ran; the
// file is dropped) and puts it in place. When it cannot be written (a
// full disk while the study ran), the file is dropped and the report goes
// to stdout through write, as emit does: nothing computed is lost, and the
// command still fails.
func (so *streamOutput) finish(stdout, stderr io.Writer, rep *engine.Report, quiet bool, write func(io.Writer) error) error {
	err := so.rows.Close(rep)
	if rep == nil {
		so.file.Cleanup()
		return nil
	}
	if err == nil {
		err = so.file.Commit()
	}
	if err != nil {
		so.file.Cleanup()
		fmt.Fprintf(stderr, "sweepbench: --out %s: %v; writing to stdout instead\n", so.path, err)
		if werr := write(stdout); werr != nil {
			return werr
		}
		return fmt.Errorf("--out %s: %v (the report went to stdout instead)", so.path, err)
	}
	if !quiet {
		fmt.Fprintf(stderr, "wrote %s\n", so.path)
	}
	return nil
}
