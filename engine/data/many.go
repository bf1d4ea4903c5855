package data

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// isMany reports whether p names a folder or a glob pattern rather than
// one file. A path that exists as a file is a file, whatever its
// characters, and so is one that is no valid pattern (a missing
// "nope[.csv", or a name with an escape sequence: "no such file", not a
// pattern's syntax error).
func isMany(p string) (bool, error) {
	file, _ := splitMember(p)
	if fi, err := os.Stat(file); err == nil {
		return fi.IsDir(), nil
	}
	if !strings.ContainsAny(p, "*?[") {
		return false, nil
	}
	if _, err := filepath.Match(p, ""); err != nil {
		return false, nil
	}
	return true, nil
}

// FolderFiles is the data files directly in folder dir, as a folder given
// to --data reads them (a supported extension, not hidden, not in
// subfolders), sorted by name; an *Error when there is none.
func FolderFiles(dir string) ([]string, error) {
	return manyPaths(dir, Limits{MaxFiles: int(^uint(0) >> 1)})
}

// loadMany loads every file of a folder (its files with a supported
// extension, not hidden, not in subfolders) or every file a glob pattern
// matches, as one dataset: each file is loaded and checked as LoadFile
// loads one, the files are put in the order of their first bars and
// joined. Files whose bars overlap or repeat are an error naming both
// files and lines; a gap between files counts as a gap. All files must
// share the layout and how it is read (scale, zone).
//
// Info.SHA256 is then the SHA-256 of the manifest sha256sum would print
// for the files in that order ("<hex>  <base name>\n" each), so a file
// changed, added, removed or renamed changes it.
func loadMany(p string, opt Options) (*Dataset, error) {
	paths, err := manyPaths(p, opt.Limits)
	if err != nil {
		return nil, err
	}
	parts := make([]*Dataset, 0, len(paths))
	for _, fp := range paths {
		if err := ctxErr(opt.ctx); err != nil {
			return nil, interrupted(fp, err)
		}
		d, err := loadOne(fp, opt)
		if err != nil {
			return nil, err
		}
		d.Info.Path = fp
		parts = append(parts, d)
	}
	// Time order; names break ties (two files cannot start at one time
	// without overlapping, which is reported below).
	slices.SortStableFunc(parts, func(a, b *Dataset) int { return compareInt64(a.Bars.Time[0], b.Bars.Time[0]) })
	first := parts[0]
	lastOf := first // the file whose bars reach latest so far
	n := 0
	for i, d := range parts {
		n += d.Bars.Len()
		if i == 0 {
			continue
		}
		if d.Info.Layout != first.Info.Layout || d.Info.PriceScale != first.Info.PriceScale || d.Info.TimeZone != first.Info.TimeZone {
			return nil, &Error{File: p, Reason: "the files are not read alike: " + d.Info.Name + " is " + describePart(d) +
				", " + first.Info.Name + " is " + describePart(first) + ": load them separately"}
		}
		if t := d.Bars.Time[0]; t <= lastOf.Bars.Time[lastOf.Bars.Len()-1] {
			return nil, overlapError(d, lastOf)
		}
		// The files do not overlap: parts[i-1] ends just before d starts.
		prev := parts[i-1]
		if reason := fp32Return(strconv.FormatFloat(d.Bars.Close[0], 'g', -1, 64), d.Bars.Close[0],
			prev.Bars.Close[prev.Bars.Len()-1], prev.Info.Name+" "+prev.lastAt.String()); reason != "" {
			return nil, &Error{File: d.Info.Name, Line: d.firstAt.line, Record: d.firstAt.record, Row: d.firstAt.row,
				Field: "close", Reason: reason}
		}
		if d.Bars.Time[d.Bars.Len()-1] > lastOf.Bars.Time[lastOf.Bars.Len()-1] {
			lastOf = d
		}
	}
	out := &Dataset{}
	b := &out.Bars
	b.Time, b.Open, b.High, b.Low = make([]int64, 0, n), make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	b.Close, b.Volume = make([]float64, 0, n), make([]float64, 0, n)
	manifest := sha256.New()
	in := &out.Info
	*in = Info{Name: p, Path: p, Layout: first.Info.Layout, Files: len(parts), PriceScale: first.Info.PriceScale,
		Times: first.Info.Times, TimeZone: first.Info.TimeZone, Convention: first.Info.Convention}
	for _, d := range parts {
		s := &d.Bars
		b.Time, b.Open, b.High = append(b.Time, s.Time...), append(b.Open, s.Open...), append(b.High, s.High...)
		b.Low, b.Close, b.Volume = append(b.Low, s.Low...), append(b.Close, s.Close...), append(b.Volume, s.Volume...)
		manifest.Write([]byte(d.Info.SHA256 + "  " + filepath.Base(d.Info.Path) + "\n"))
		in.DroppedNaN += d.Info.DroppedNaN
		for _, at := range d.Info.DroppedAt {
			if len(in.DroppedAt) < maxDroppedAt {
				in.DroppedAt = append(in.DroppedAt, filepath.Base(d.Info.Name)+" "+at)
			}
		}
		if d.Info.Times != in.Times {
			in.Times = TimesMixed
		}
	}
	in.SHA256 = sumOf(manifest)
	in.SourceBars = n
	in.setStats(b)
	return out, nil
}

// manyPaths lists the files of a folder or a glob, sorted by name.
func manyPaths(p string, lim Limits) ([]string, error) {
	var paths []string
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, statError(p, err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || !supportedName(name) {
				continue
			}
			fp := filepath.Join(p, name)
			if fi, err := os.Stat(fp); err == nil && fi.IsDir() {
				continue
			}
			paths = append(paths, fp)
		}
		if len(paths) == 0 {
			return nil, &Error{File: p, Reason: "the folder holds no data file (" + strings.Join(SupportedExtensions(), " ") + ")"}
		}
	} else {
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, &Error{File: p, Reason: "bad glob pattern: " + err.Error()}
		}
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.IsDir() {
				continue
			}
			paths = append(paths, m)
		}
		if len(paths) == 0 {
			return nil, &Error{File: p, Reason: "no file matches the pattern (and no file has this name)", Err: fs.ErrNotExist}
		}
	}
	if len(paths) > lim.MaxFiles {
		le := &LimitError{What: "files", Max: int64(lim.MaxFiles), Env: EnvMaxFiles}
		return nil, &Error{File: p, Reason: thousands(len(paths)) + " files: " + le.Error(), Err: le}
	}
	slices.Sort(paths)
	return paths, nil
}

// supportedName reports a file name with one of SupportedExtensions.
func supportedName(name string) bool {
	lower := strings.ToLower(name)
	for _, ext := range SupportedExtensions() {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// overlapError names the file d whose first bar is not after the last bar
// of prev, and both lines.
func overlapError(d, prev *Dataset) *Error {
	t, last := d.Bars.Time[0], prev.Bars.Time[prev.Bars.Len()-1]
	what := "timestamp " + fmtTime(t) + " overlaps " + prev.Info.Name + ", whose bars run to " + fmtTime(last) +
		" (" + prev.lastAt.String() + ")"
	if t == last {
		what = "duplicate timestamp " + fmtTime(t) + ": the same bar as " + prev.Info.Name + " " + prev.lastAt.String()
	}
	return &Error{File: d.Info.Name, Line: d.firstAt.line, Record: d.firstAt.record, Row: d.firstAt.row, Reason: what +
		": the files overlap or repeat bars; remove one of them"}
}

func describePart(d *Dataset) string {
	s := d.Info.Layout
	if r := d.Info.ReadAs(); r != "" {
		s += " (" + r + ")"
	}
	return s
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
