package output

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
)

// relabel makes the lane fields of the rows a RowWriter streamed (written
// as rowLanes with status complete) those of rep's runs, when they differ:
// a run cancelled, interrupted or failed, whose results the report did not
// keep (StudyOptions.Discard), so that the file cannot be written again
// from it. The output is copied to a scratch file next to it (the same
// file system, which held it once), truncated, and written again from the
// copy: CSV and JSON lines line by line, each line's lane prefix and
// suffix replaced; Parquet read back a batch of rows at a time and encoded
// again by the same encoder, with rep's metadata. Memory stays a batch's
// (a few row groups' for Parquet, as when streaming), whatever the grid.
func (w *RowWriter) relabel(rep *engine.Report) error {
	from := make([]rowLane, len(w.lanes))
	to := make([]rowLane, len(w.lanes))
	changed := false
	for i, l := range w.lanes {
		from[i], to[i] = l.rowLane, l.rowLane
		for _, run := range rep.Runs {
			if run.Precision == l.precision {
				to[i] = laneOf(run)
			}
		}
		changed = changed || to[i] != from[i]
	}
	if !changed {
		return nil
	}
	size, err := w.out.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	dir := ""
	if n, ok := w.out.(interface{ Name() string }); ok {
		dir = filepath.Dir(n.Name())
	}
	scratch, err := os.CreateTemp(dir, ".sweepbench-relabel-*")
	if err != nil {
		return err
	}
	defer os.Remove(scratch.Name())
	defer scratch.Close()
	if _, err := io.Copy(scratch, io.NewSectionReader(w.out, 0, size)); err != nil {
		return err
	}
	if _, err := w.out.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := w.out.Truncate(0); err != nil {
		return err
	}
	set := settingsOf(w.study.Dataset.Info, w.study.Params)
	pc := paramColsOf(w.study.Grid)
	if w.format == RowsParquet {
		if pc != nil {
			return newStrategyLayout(pc).relabelRows(w.out, scratch, size, from, to, parquetMetadata(rep))
		}
		return relabelParquet(w.out, scratch, size, set, from, to, rep)
	}
	return relabelText(w.out, scratch, size, w.format, set, from, to, pc)
}

// laneAffixes is what every row of lane l begins and ends with in format f
// (CSV or JSON lines): the lane's fields before the combo, the status and
// settings after the metrics.
func laneAffixes(f RowFormat, set rowSettings, l rowLane, pc *paramCols) (prefix, suffix []byte) {
	if f == RowsCSV {
		c := &csvRows{set: set, params: pc}
		_ = c.lane(l) // never fails
		return c.prefix, c.suffix
	}
	j := &jsonlRows{set: set}
	_ = j.lane(l) // never fails
	return j.prefix, j.suffix
}

// relabelText copies the CSV or JSON lines rows of src to out, each row of
// lane from[i] (known by its prefix: the lanes are of different
// precisions) written as a row of to[i]; the CSV header is copied as is.
func relabelText(out io.Writer, src io.ReaderAt, size int64, f RowFormat, set rowSettings, from, to []rowLane, pc *paramCols) error {
	type affixes struct{ oldPre, oldSuf, newPre, newSuf []byte }
	lanes := make([]affixes, len(from))
	for i := range from {
		a := &lanes[i]
		a.oldPre, a.oldSuf = laneAffixes(f, set, from[i], pc)
		a.newPre, a.newSuf = laneAffixes(f, set, to[i], pc)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(src, 0, size), 256<<10)
	bw := bufio.NewWriterSize(out, 256<<10)
	first, li := f == RowsCSV, 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, io.EOF) && len(line) == 0 {
			break
		}
		if err != nil {
			return err // a row over 256 KiB, or a partial last line: not a file a RowWriter wrote
		}
		if first { // the CSV header
			first = false
			if _, err := bw.Write(line); err != nil {
				return err
			}
			continue
		}
		for li < len(lanes) && !bytes.HasPrefix(line, lanes[li].oldPre) {
			li++
		}
		if li == len(lanes) || !bytes.HasSuffix(line, lanes[li].oldSuf) || len(line) < len(lanes[li].oldPre)+len(lanes[li].oldSuf) {
			return fmt.Errorf("a row not of the lanes streamed: %.80q", line)
		}
		a := &lanes[li]
		bw.Write(a.newPre)
		bw.Write(line[len(a.oldPre) : len(line)-len(a.oldSuf)])
		if _, err := bw.Write(a.newSuf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// relabelParquet reads the rows of the Parquet file src back and writes
// them to out with the Parquet encoder (the lane of each row from its
// precision), rep's metadata in the footer.
func relabelParquet(out io.Writer, src io.ReaderAt, size int64, set rowSettings, from, to []rowLane, rep *engine.Report) error {
	f, err := parquet.OpenFile(src, size)
	if err != nil {
		return err
	}
	r := parquet.NewGenericReader[parquetRow](f)
	defer r.Close()
	enc := newParquetRows(out, set, nil)
	li := -1
	batch := make([]parquetRow, 4096)
	rs := make([]engine.ComboResult, 0, len(batch))
	flush := func() error {
		err := enc.rows(rs)
		rs = rs[:0]
		return err
	}
	for {
		n, err := r.Read(batch)
		for _, row := range batch[:n] {
			if li < 0 || row.Precision != from[li].precision.String() {
				if err := flush(); err != nil {
					enc.drain()
					return err
				}
				for li = 0; li < len(from) && from[li].precision.String() != row.Precision; li++ {
				}
				if li == len(from) {
					enc.drain()
					return fmt.Errorf("a row of precision %q, not of the lanes streamed", row.Precision)
				}
				if err := enc.lane(to[li]); err != nil {
					enc.drain()
					return err
				}
			}
			rs = append(rs, row.ComboColumns.Result(0))
		}
		if err := flush(); err != nil {
			enc.drain()
			return err
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			enc.drain()
			return err
		}
	}
	return enc.finish(rep)
}
