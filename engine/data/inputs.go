package data

import (
	"os"
	"path/filepath"
	"strings"
)

// Source is what a dataset spec (as Open takes it) reads from disk, so
// that a command can refuse to write a report over its input.
type Source struct {
	Spec string
	// Files are the files the spec reads now: the file itself (the zip
	// archive for "z.zip#member"), or every file a folder or a glob
	// takes in. None for "embedded:NAME", nor for a folder or glob that
	// takes in no file.
	Files []string
	// Many: the spec is a folder or a glob pattern, which takes in new
	// files too (see Takes).
	Many bool
	// Member: Files[0] is the zip archive of the member the spec names.
	Member bool
}

// Sources resolves spec to the files it reads (see Source). It fails
// never: a file that cannot be listed is left out (loading it says why).
func Sources(spec string) Source {
	src := Source{Spec: spec}
	if spec == "" || strings.HasPrefix(spec, embeddedPrefix) {
		return src
	}
	if many, _ := isMany(spec); many {
		src.Many = true
		src.Files, _ = manyPaths(spec, Limits{MaxFiles: int(^uint(0) >> 1)})
		return src
	}
	file, member := splitMember(spec)
	src.Files, src.Member = []string{file}, member != ""
	return src
}

// Takes reports whether a file at path, were it created, would be read by
// spec: a data file (by its extension, not hidden) in a folder spec, a
// file a glob spec matches. A report written there would become part of
// the input the next time the spec is loaded. Directories are compared as
// the same directory (os.SameFile), so symbolic links and relative paths
// do not hide one.
func Takes(spec, path string) bool {
	if spec == "" || strings.HasPrefix(spec, embeddedPrefix) {
		return false
	}
	if many, _ := isMany(spec); !many {
		return false
	}
	dir, base := filepath.Split(filepath.Clean(path))
	if fi, err := os.Stat(spec); err == nil && fi.IsDir() {
		return !strings.HasPrefix(base, ".") && supportedName(base) && sameDir(spec, dir)
	}
	dirPat, basePat := filepath.Split(spec)
	if ok, err := filepath.Match(basePat, base); err != nil || !ok {
		return false
	}
	dirs := []string{dirPat}
	if hasMeta(dirPat) {
		dirs, _ = filepath.Glob(filepath.Clean(dirPat))
	}
	for _, d := range dirs {
		if sameDir(d, dir) {
			return true
		}
	}
	return false
}

// hasMeta reports glob metacharacters in p.
func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[") }

// sameDir reports whether a and b ("" is ".") are one directory.
func sameDir(a, b string) bool {
	if a == "" {
		a = "."
	}
	if b == "" {
		b = "."
	}
	ai, err := os.Stat(a)
	if err != nil || !ai.IsDir() {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && os.SameFile(ai, bi)
}

// Exists checks, without reading it, that spec names data that is there:
// a known embedded dataset, a file (a zip archive for a member) that
// exists, a folder or glob that takes in at least one data file. Errors
// are *Error naming the spec or the file, what Open would say first; nil
// does not mean the data parses (only loading it tells).
func Exists(spec string) error {
	if name, ok := strings.CutPrefix(spec, embeddedPrefix); ok {
		_, err := embeddedEntryOf(name)
		return err
	}
	src := Sources(spec)
	if src.Many {
		if len(src.Files) == 0 {
			return &Error{File: spec, Reason: "takes in no data file (a folder or a pattern: none of its files is one the loaders read)"}
		}
		return nil
	}
	if _, err := os.Stat(src.Files[0]); err != nil {
		return &Error{File: src.Files[0], Reason: "no such file", Err: err}
	}
	return nil
}
