package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sweepbench/engine/data"
	"sweepbench/sessions"
)

// DataRoots are the folders the workbench's users may read datasets from:
// the server reads files with its own permissions, so without a bound a
// user could open (and have the loader's errors quote) any file the
// server can read, the host key and the other users' databases included.
// The embedded datasets are always allowed; a file, a folder, a zip member
// or a glob only when every file it names resolves (symbolic links
// followed) inside a root.
type DataRoots []string

// NewDataRoots resolves dirs (each an existing folder) to absolute paths
// without symbolic links.
func NewDataRoots(dirs []string) (DataRoots, error) {
	var r DataRoots
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
				err = errors.New("not a folder")
			}
		}
		if err != nil {
			return nil, &ConfigError{Field: "DataRoots", Value: d, Err: err}
		}
		r = append(r, abs)
	}
	return r, nil
}

// DataError is a dataset the server does not let its users read.
type DataError struct {
	Spec  string
	Roots DataRoots
}

func (e *DataError) Error() string {
	where := "this server reads only the embedded datasets"
	if len(e.Roots) > 0 {
		where = "this server reads datasets from " + strings.Join(e.Roots, ", ") + " and the embedded ones"
	}
	return fmt.Sprintf("dataset %s: not allowed: %s", data.Sanitize(e.Spec), where)
}

// Allow reports whether spec may be read (nil) or a *DataError.
func (r DataRoots) Allow(spec string) error {
	if strings.HasPrefix(spec, "embedded:") {
		return nil
	}
	refuse := &DataError{Spec: spec, Roots: r}
	if len(r) == 0 || spec == "" {
		return refuse
	}
	p := spec
	if i := strings.LastIndex(p, "#"); i > 0 {
		p = p[:i] // FILE.zip#MEMBER: the zip decides
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return refuse
	}
	var files []string
	if strings.ContainsAny(abs, "*?[") {
		// The pattern's fixed part must be inside, and every match.
		fixed := abs[:strings.IndexAny(abs, "*?[")]
		if !r.inside(filepath.Dir(fixed + "x")) {
			return refuse
		}
		files, _ = filepath.Glob(abs)
	} else {
		files = []string{abs}
	}
	for _, f := range files {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			// Not there (yet): the loader says so, for a path inside.
			if !r.inside(f) {
				return refuse
			}
			continue
		}
		if !r.inside(real) {
			return refuse
		}
		if fi, err := os.Stat(real); err == nil && fi.IsDir() {
			// A folder is one dataset of the files in it.
			entries, _ := os.ReadDir(real)
			for _, e := range entries {
				if er, err := filepath.EvalSymlinks(filepath.Join(real, e.Name())); err == nil && !r.inside(er) {
					return refuse
				}
			}
		}
	}
	return nil
}

// inside reports whether the absolute, cleaned path p is a root or below one.
func (r DataRoots) inside(p string) bool {
	for _, root := range r {
		rel, err := filepath.Rel(root, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// Loader is sessions.LoadSpec for the datasets Allow allows: opening,
// comparing and resuming a saved session read its dataset again.
func (r DataRoots) Loader() sessions.Loader {
	return func(ctx context.Context, ss *sessions.Session) (*data.Dataset, error) {
		if err := r.Allow(ss.Spec.Data); err != nil {
			return nil, err
		}
		return sessions.LoadSpec(ctx, ss)
	}
}
