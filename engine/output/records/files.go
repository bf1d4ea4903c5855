package records

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sweepbench/engine/output"
)

// MaxTries bounds the names WriteNew tries: STEM-trades.EXT, then
// STEM-2-trades.EXT, ... STEM-MaxTries-trades.EXT.
const MaxTries = 99

// WriteNew writes the tables (each with its name: "trades", "bars") in
// format f to new files in dir, named STEM-NAME.EXT (EXT the format's
// name, csv, jsonl or parquet), or, when any of those exists,
// STEM-K-NAME.EXT for the first K from 2 at which none does: it never
// replaces a file. Each file is created exclusively (O_EXCL, so a file
// that appears meanwhile is not replaced either: the next K is tried)
// and removed again when its writing fails. It returns the paths
// written, in the tables' order. Errors: every name up to MaxTries
// taken, the directory's, a write's.
func WriteNew(dir, stem string, f output.RowFormat, tables []Named) ([]string, error) {
	ext := string(f)
	for k := 1; k <= MaxTries; k++ {
		s := stem
		if k > 1 {
			s = fmt.Sprintf("%s-%d", stem, k)
		}
		paths := make([]string, len(tables))
		free := true
		for i, t := range tables {
			paths[i] = filepath.Join(dir, s+"-"+t.Name+"."+ext)
			if _, err := os.Lstat(paths[i]); !errors.Is(err, fs.ErrNotExist) {
				free = false
			}
		}
		if !free {
			continue
		}
		done, err := writeAll(paths, tables, f)
		if errors.Is(err, fs.ErrExist) {
			for _, p := range done {
				os.Remove(p)
			}
			continue // one appeared meanwhile
		}
		if err != nil {
			for _, p := range done {
				os.Remove(p)
			}
			return nil, err
		}
		return paths, nil
	}
	return nil, fmt.Errorf("%s-*.%s: %d names taken in %s, none written", stem, ext, MaxTries, dir)
}

// Named is a table with the name its file is given.
type Named struct {
	Name  string
	Table *Table
}

// writeAll creates each path exclusively and writes its table; done is
// the files created (to remove when err is not nil).
func writeAll(paths []string, tables []Named, f output.RowFormat) (done []string, err error) {
	for i, p := range paths {
		fh, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return done, err
		}
		done = append(done, p)
		werr := tables[i].Table.Write(fh, f)
		if cerr := fh.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return done, fmt.Errorf("writing %s: %w", p, werr)
		}
	}
	return done, nil
}
