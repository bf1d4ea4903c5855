package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	"sweepbench/engine/robust"
	"sweepbench/engine/text"
)

// An output file (--out) that is a regular file, or none yet, is written
// to a temporary file in its directory and renamed into place once
// complete (createOutput), so a failed or interrupted write never leaves
// half a report and never replaces a good file with one. Anything else is
// written as the shell's > writes it: a symbolic link through to its
// target (which is then treated as the --out), a character device or a
// FIFO opened and written (/dev/null, /dev/stdout, a pipe to a reader),
// never replaced; a block device or a socket is refused. checkOutput
// refuses, before anything is computed, a missing directory, a file that
// cannot be written (no write permission, as > refuses it; by the mode
// bits, so root too: --force replaces it) and a file the command reads
// or keeps (the sessions database and its -wal, -shm and -journal files,
// the input data: every file of a folder, a glob or a zip member's
// archive, and a new file a folder or a glob would take in).

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
// path is a dataset spec (see inputData); with db, a sessions database,
// whose companion files SQLite writes beside it are kept too.
type protected struct {
	path, what string
	data, db   bool
}

// sessionsDB protects the sessions database at path and its companions.
func sessionsDB(path string) protected {
	return protected{path: path, what: "the sessions database", db: true}
}

// dbCompanions are the files SQLite keeps beside a database, by suffix:
// each holds part of the database while it is open (or after a crash).
var dbCompanions = []struct{ suffix, what string }{
	{"-wal", "write-ahead log"},
	{"-shm", "shared-memory index"},
	{"-journal", "rollback journal"},
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
// is a directory, a block device or a socket, that cannot be written
// (unless force: see checkWritePermission), or that names one of keep (by
// path or as the same file; a dataset spec's files: see inputData). A
// symbolic link is checked as the file it leads to.
func checkOutput(path string, force bool, keep ...protected) error {
	if path == "" || path == "-" {
		return nil
	}
	target, tfi, err := resolveOutput(path)
	if err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	dir := filepath.Dir(target)
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
	if tfi != nil {
		if err := unwritable(path, tfi); err != nil {
			return err
		}
		if !force {
			if err := checkWritePermission(path, target, tfi); err != nil {
				return err
			}
		}
	}
	for _, k := range keep {
		if k.path == "" || strings.HasPrefix(k.path, "embedded:") {
			continue
		}
		if k.data {
			if err := checkInput(path, out, k); err != nil {
				return err
			}
			continue
		}
		if sameFile(path, out, k.path) {
			return fmt.Errorf("--out %s is %s: refusing to overwrite it (name another file)", path, k.what)
		}
		if k.db {
			if err := checkCompanions(path, target, out, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// forceFlag is --force, beside --out: replace a read-only --out file.
func forceFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("force", false, "replace an --out file that is read-only (no write permission), as it is; it keeps its mode")
}

// forced reports whether cmd's --force is set.
func forced(cmd *cobra.Command) bool {
	f, _ := cmd.Flags().GetBool("force")
	return f
}

// checkCompanions refuses an --out (target: where its links lead) that is
// a companion file of the database k, beside it or beside the file its
// links lead to (SQLite names them after either), whether it exists yet
// or not: SQLite creates them as it goes, and a report over one destroys
// what it holds of the database.
func checkCompanions(path, target string, out fs.FileInfo, k protected) error {
	bases := []string{k.path}
	if real, err := filepath.EvalSymlinks(k.path); err == nil && real != k.path {
		bases = append(bases, real)
	}
	for _, c := range dbCompanions {
		for _, b := range bases {
			if sameFile(path, out, b+c.suffix) || sameFile(target, out, b+c.suffix) {
				return fmt.Errorf("--out %s is %s's %s (%s): refusing to overwrite it (name another file)", path, k.what, c.what, filepath.Base(b+c.suffix))
			}
		}
	}
	return nil
}

// checkWritePermission refuses an existing --out (target: where its links
// lead; fi: target's) that the shell's > would refuse: one this user may
// not open for writing, and one no one may write by its mode bits (root
// may write anything; a read-only report is still refused, as asked for
// by its permissions). --force skips it: the file is replaced, keeping its
// mode.
func checkWritePermission(path, target string, fi fs.FileInfo) error {
	const force = "it is read-only: --force replaces it, or name another file"
	if fi.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("--out %s: permission denied (mode %04o: %s)", path, fi.Mode().Perm(), force)
	}
	if !fi.Mode().IsRegular() {
		return nil // opened as it is written (a FIFO's open would wait for a reader)
	}
	f, err := os.OpenFile(target, os.O_WRONLY, 0) // no O_TRUNC: nothing changes
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("--out %s: permission denied (%s)", path, strings.Replace(force, "it is read-only", "it is not writable by you", 1))
		}
		return nil // the write itself says why
	}
	return f.Close()
}

// resolveOutput follows path's symbolic links to the file they end at:
// target, with its FileInfo (Lstat; nil when target does not exist yet:
// a dangling link's target is created, as the shell's > creates it). A
// link whose text names no file but which the system resolves (Linux's
// /proc/self/fd/1 of /dev/stdout: "pipe:[...]") is path itself, as the
// system resolves it.
func resolveOutput(path string) (target string, fi fs.FileInfo, err error) {
	target = path
	for hops := 0; ; hops++ {
		fi, err = os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			if hops > 0 {
				if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
					return path, fi, nil
				}
			}
			return target, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return target, fi, nil
		}
		if hops == 40 {
			return "", nil, errors.New("too many symbolic links")
		}
		to, err := os.Readlink(target)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(target), to)
		}
		target = to
	}
}

// unwritable refuses an --out (fi: where its links lead) that is neither
// a regular file, a character device nor a FIFO: a report written over a
// block device destroys a disk, and a socket cannot be opened.
func unwritable(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular(), m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
		return nil
	case m.IsDir():
		return fmt.Errorf("--out %s is a directory: name a file in it", path)
	case m&fs.ModeDevice != 0:
		return fmt.Errorf("--out %s is a block device: refusing to write a report over it (name a file)", path)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("--out %s is a socket: name a file", path)
	}
	return fmt.Errorf("--out %s is not a regular file (%v): name a file", path, m.Type())
}

// createOutput starts writing the report to path: a regular file (or a
// new one) through createFile (a temporary file renamed into place on
// POSIX systems), following symbolic links to their target; a character
// device or a FIFO opened for writing as it is (Commit closes it, Cleanup
// too: nothing to remove, nothing replaced); anything else refused.
func createOutput(path string) (outputFile, error) {
	return createOutputTo(os.Stderr, path)
}

// createOutputTo is createOutput saying on stderr that it waits for a
// FIFO's reader: it opens a FIFO without blocking (openFIFO) and tries
// again until a reader comes or a signal stops it (signalled: an
// *outputStopped).
func createOutputTo(stderr io.Writer, path string) (outputFile, error) {
	target, fi, err := resolveOutput(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if fi == nil || fi.Mode().IsRegular() {
		return createFile(target, path)
	}
	if err := unwritable(path, fi); err != nil {
		return nil, err
	}
	ctx := outputContext()
	var f *os.File
	if fi.Mode()&fs.ModeNamedPipe != 0 {
		f, err = openFIFO(ctx, stderr, target, path)
	} else {
		f, err = os.OpenFile(target, os.O_WRONLY, 0)
	}
	if err != nil {
		return nil, err
	}
	t := &through{f: f, path: path, ctx: ctx}
	// A write blocked on a pipe whose reader stopped reading ends when
	// ctx does: the FIFO's fd is non-blocking, so the runtime's poller
	// waits for it and a deadline wakes it (ErrNoDeadline elsewhere).
	t.stop = context.AfterFunc(ctx, func() { f.SetWriteDeadline(time.Unix(1, 0)) })
	return t, nil
}

// signalled is the process's signal context (signalContext; never done in
// a test that runs the commands in process). Waiting for a FIFO's reader
// and a write to a FIFO whose reader stopped reading give up when it is
// done: every --out goes through createOutput, which has no context of
// its own, and a signal is the process's.
var signalled = context.Background()

// outputContext is what ends a wait on an --out FIFO: signalled, or
// nothing once it is done (the first signal was spent on the study: the
// next one has its default effect and ends the process).
func outputContext() context.Context {
	if signalled.Err() != nil {
		return context.Background()
	}
	return signalled
}

// outputStopped is an --out that a signal stopped: waiting for a FIFO's
// reader (nothing written) or writing to one whose reader stopped reading
// (written bytes of the report went). For errors.Is it is
// context.Canceled, as every interrupted write.
type outputStopped struct {
	path    string
	waiting bool
	written int64
}

func (e *outputStopped) Error() string {
	if e.waiting {
		return fmt.Sprintf("interrupted while waiting for a reader on FIFO %s: the report was not written", e.path)
	}
	return fmt.Sprintf("interrupted while writing %s, whose reader stopped reading: the report was cut short after %s bytes", e.path, text.Thousands(int(e.written)))
}

func (e *outputStopped) Is(target error) bool { return target == context.Canceled }

// stopped is the exit (130, as an interrupted run's) of an --out that a
// signal stopped (err wraps an *outputStopped), saying how to get the
// report: again is the command that writes it from the saved session, ""
// when the run was not saved (its results are lost) or when the report
// has no other copy to name. Any other err is returned as it is.
func stopped(err error, again string, unsaved bool) error {
	var st *outputStopped
	if !errors.As(err, &st) {
		return err
	}
	switch {
	case again != "":
		return &exitError{130, fmt.Errorf("%v; the saved session holds it: `%s` writes it again", st, again)}
	case unsaved:
		return &exitError{130, fmt.Errorf("%v, nor saved: the results are lost (run the study again, without --no-save to keep them in a session)", st)}
	}
	return &exitError{130, st}
}

// regularOutput reports whether path is written through a temporary file
// (a regular file, or none yet), which a stream can rewind.
func regularOutput(path string) bool {
	_, fi, err := resolveOutput(path)
	return err == nil && (fi == nil || fi.Mode().IsRegular())
}

// through is a character device or a FIFO, written as it is. Its
// methods are the file's, Write only (no WriteString or ReadFrom of
// *os.File's that would bypass it): a write stopped by ctx (stop's
// deadline) is an *outputStopped.
type through struct {
	f       *os.File
	path    string // the --out path
	ctx     context.Context
	stop    func() bool
	written int64
	closed  bool
}

func (t *through) Write(b []byte) (int, error) {
	n, err := t.f.Write(b)
	t.written += int64(n)
	if err != nil && t.ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, &outputStopped{path: t.path, written: t.written}
	}
	return n, err
}

func (t *through) Seek(offset int64, whence int) (int64, error) { return t.f.Seek(offset, whence) }
func (t *through) ReadAt(b []byte, off int64) (int, error)      { return t.f.ReadAt(b, off) }
func (t *through) Truncate(size int64) error                    { return t.f.Truncate(size) }

func (t *through) Commit() error {
	if t.closed {
		return nil
	}
	t.closed = true
	t.stop()
	return t.f.Close()
}

func (t *through) Cleanup() error { return t.Commit() }

// outputPathError makes a write error of the temporary file behind path
// name path (the file the user named) rather than the temporary one.
func outputPathError(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != path {
		return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
	}
	return err
}

// errText is err without its path when it is a *fs.PathError (whose path
// the message names already).
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
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
// "-" (through toStdout), through createOutput. When out cannot be created
// (the disk changed since checkOutput), the report goes to stdout instead
// and the error says so: nothing computed is lost, and the command still
// fails. A write that fails (a full disk or device) fails the command.
func emit(stdout, stderr io.Writer, out string, quiet bool, write func(io.Writer) error) error {
	if out == "" || out == "-" {
		return toStdout(stdout, write)
	}
	f, err := createOutputTo(stderr, out)
	if errors.As(err, new(*outputStopped)) {
		return stopped(err, "", false) // a signal is no reason to write to stdout
	}
	if err != nil {
		fmt.Fprintf(stderr, "sweepbench: --out %s: %v; writing to stdout instead\n", out, err)
		if werr := toStdout(stdout, write); werr != nil {
			return werr
		}
		return fmt.Errorf("--out %s: %v (the report went to stdout instead)", out, err)
	}
	if err := write(f); err != nil {
		f.Cleanup()
		if errors.As(err, new(*outputStopped)) {
			return stopped(err, "", false)
		}
		return writeError(out, err)
	}
	if err := f.Commit(); err != nil {
		f.Cleanup()
		return writeError(out, err)
	}
	if !quiet {
		fmt.Fprintf(stderr, "wrote %s\n", out)
	}
	return nil
}

// writeError is a failed write of the report to out.
func writeError(out string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && err == error(pe) {
		err = pe.Err // "write OUT: ..." again otherwise
	}
	return fmt.Errorf("writing %s: %w", out, err)
}

// toStdout writes a report with write to stdout. On a terminal every text
// format (the table, JSON, CSV, JSON lines, SVG) passes the sanitiser the
// table's text always passes (newSanitized: data.Sanitize line by line),
// so that a control character from the data (a file name in CSV's dataset
// column, a header) shows escaped instead of acting on the terminal;
// binary formats are refused there before anything runs (checkFormat,
// plot's PNG). To a pipe or a file the bytes are the format's own.
func toStdout(stdout io.Writer, write func(io.Writer) error) error {
	if !isTerminal(stdout) {
		return write(stdout)
	}
	sw := newSanitized(stdout)
	if err := write(sw); err != nil {
		return err
	}
	return sw.Flush()
}

// reportFormats are the --format values of run and sessions show: the
// table, the whole report as JSON, and the per-combo row formats.
const reportFormats = "table, json, csv, jsonl or parquet"

// checkFormat refuses an unknown --format, and Parquet (binary) bound for
// a terminal.
func checkFormat(format, out string, stdout io.Writer) error {
	if _, rows := output.ParseRowFormat(format); !rows && format != "table" && format != "json" {
		return fmt.Errorf("--format %q: want %s", format, reportFormats)
	}
	if format == string(output.RowsParquet) && (out == "" || out == "-") && isTerminal(stdout) {
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
	rows *output.RowWriter
}

// startStream opens out to receive the rows of study s in format, or
// returns nil when the report is written after the run instead (by emit):
// a format that is not per combo, stdout (a pipe cannot be rewound should
// a lane stop early and the rows need writing again), an --out that is
// not a regular file (a device or a FIFO: the same), or a file that
// cannot be created now (emit then says why and prints to stdout).
func startStream(out, format string, s *engine.Study) *streamOutput {
	f, rows := output.ParseRowFormat(format)
	if !rows || out == "" || out == "-" || !regularOutput(out) {
		return nil
	}
	file, err := createOutput(out)
	if err != nil {
		return nil
	}
	rw, err := output.NewRowWriter(file, f, s)
	if err != nil {
		file.Cleanup()
		return nil
	}
	return &streamOutput{path: out, file: file, rows: rw}
}

// finish ends the streamed file with rep (nil: the study never ran; the
// file is dropped) and puts it in place. When it cannot be written (a
// full disk while the study ran), the file is dropped. A report that kept
// its rows goes to stdout through write, as emit does: nothing computed
// is lost, and the command still fails. One whose rows only went to the
// file (StudyOptions.Discard, as streaming runs) cannot be written again
// from memory: the error says how many rows were lost and, when the run
// was saved (again: the command that exports the session to out, "" when
// it was not), how to write them again.
func (so *streamOutput) finish(stdout, stderr io.Writer, rep *engine.Report, quiet bool, write func(io.Writer) error, again string) error {
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
		rows, inMemory := 0, true
		for _, run := range rep.Runs {
			rows += run.Count()
			inMemory = inMemory && !run.Kept
		}
		if !inMemory {
			lost := fmt.Sprintf("--out %s: %s: the report's %s rows went to it as the study ran and are not kept in memory", so.path, errText(err), text.Thousands(rows))
			if again != "" {
				return fmt.Errorf("%s; the saved session holds them: `%s` writes them again (once there is room)", lost, again)
			}
			return fmt.Errorf("%s, nor saved (--no-save): they are lost; nothing went to stdout (run the study again once there is room, or without --no-save to keep them in a session)", lost)
		}
		fmt.Fprintf(stderr, "sweepbench: --out %s: %s; writing to stdout instead\n", so.path, errText(err))
		if werr := toStdout(stdout, write); werr != nil {
			return werr
		}
		return fmt.Errorf("--out %s: %s (the report went to stdout instead)", so.path, errText(err))
	}
	if !quiet {
		fmt.Fprintf(stderr, "wrote %s\n", so.path)
	}
	return nil
}

// runOutput are the settings of `run` that say what is written and saved,
// shared by a suite and a merge.
type runOutput struct {
	format, out    string
	top            int
	quiet          bool
	save           bool
	failOnCollapse bool
	yes            bool
}

// writeReport writes rep as `run` does: the table (through the
// sanitiser), the whole report as JSON, or one row per combo and precision
// (csv, jsonl, parquet).
func writeReport(w io.Writer, rep *engine.Report, format string, top int) error {
	switch format {
	case "json":
		return output.WriteJSON(w, rep)
	case "table":
		sw := newSanitized(w)
		if err := output.WriteTable(sw, rep, top); err != nil {
			return err
		}
		if len(rep.Robustness) > 0 {
			var sm robust.Summary
			if err := json.Unmarshal(rep.Robustness, &sm); err != nil {
				return fmt.Errorf("the robustness summary: %w", err)
			}
			if err := sm.WriteTable(sw); err != nil {
				return err
			}
		}
		return sw.Flush()
	}
	if f, ok := output.ParseRowFormat(format); ok {
		return output.WriteRows(w, rep, f)
	}
	return fmt.Errorf("--format %q: want %s", format, reportFormats)
}

// writeBlocks writes rep's per-block statistics to path as Parquet, through
// a temporary file renamed into place.
func writeBlocks(path string, rep *engine.Report, bars *engine.Bars) error {
	f, err := createOutput(path)
	if err != nil {
		return err
	}
	if err := output.WriteBlocksParquet(f, rep, bars); err != nil {
		f.Cleanup()
		return err
	}
	return f.Commit()
}

// checkWritable is checkOutput, then a trial of createOutput (dropped at
// once): an --out in a directory that cannot be written is refused before
// anything is drawn, naming the file. A device or a FIFO is not tried (a
// FIFO's reader would see the trial's end as the report's).
func checkWritable(out string, force bool, keep ...protected) error {
	if err := checkOutput(out, force, keep...); err != nil {
		return err
	}
	if out == "" || out == "-" || !regularOutput(out) {
		return nil
	}
	f, err := createOutput(out)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is a temporary name in out's directory
		}
		return fmt.Errorf("--out %s: cannot be written: %v", out, err)
	}
	return f.Cleanup()
}
