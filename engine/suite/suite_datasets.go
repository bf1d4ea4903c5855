package suite

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sweepbench/engine/data"
)

// A suite's datasets: the values of a repeated --data (list files
// expanded) and the matches of --data-each, each dataset once.

// DatasetsError is a list of datasets that cannot be used: empty, a list
// file that cannot be read, a pattern that matches nothing, or one dataset
// given twice (Err is then a *DuplicateDatasetError). The front end names
// the flag: Each says which of ExpandDatasets' arguments Value is.
type DatasetsError struct {
	Each  bool   // Value is ExpandDatasets' each pattern, not one of its values
	Value string // the value at fault: as given, "@FILE" for a list file
	Err   error
}

func (e *DatasetsError) Error() string { return fmt.Sprintf("data %s: %v", e.Value, e.Err) }
func (e *DatasetsError) Unwrap() error { return e.Err }

// DatasetOrigin is where one of a suite's datasets came from.
type DatasetOrigin struct {
	Dataset string // the dataset as expanded (a list's line joined to the list's folder)
	Each    bool   // a match of ExpandDatasets' each pattern
	Value   string // the value (or the each pattern) that gave it: the dataset itself, or "@FILE"
	// Line is the line of list file Value that named it (from 1; 0 when
	// Value is not a list), and Written that line as written (trimmed).
	Line    int
	Written string
}

// DuplicateDatasetError is one dataset given twice, under one spelling or
// two: the same embedded dataset, or the same files (equal cleaned
// absolute paths, or os.SameFile: "./x.csv" and "x.csv", a symbolic link
// and its target, a file and a glob's match of it). Second is the later.
type DuplicateDatasetError struct {
	First, Second DatasetOrigin
}

func (e *DuplicateDatasetError) Error() string {
	if e.First.Dataset == e.Second.Dataset {
		return fmt.Sprintf("%s is given twice: each dataset runs once", e.Second.Dataset)
	}
	return fmt.Sprintf("%s is %s again: each dataset runs once", e.Second.Dataset, e.First.Dataset)
}

// ExpandDatasets turns the values of a repeated --data into the suite's
// datasets, in order: "@FILE" is a list file (one dataset a line; blank
// lines and lines starting with # ignored; relative paths are relative to
// the list's folder), any other value one dataset as data.Open reads it (a
// folder or a glob stays one dataset: its files joined). each, when set,
// is a glob whose every match is a dataset of its own (sorted), or a
// folder whose every data file (those a folder given to --data joins:
// data.FolderFiles) is one, sorted by name. A dataset
// given twice, under any spelling (DuplicateDatasetError), is an error, and
// so is, when there are several, one that is not there (data.Exists: an
// unknown embedded name, a missing file, a pattern that takes in no data
// file), before anything is read. Errors are *DatasetsError.
func ExpandDatasets(values []string, each string) ([]string, error) {
	var origins []DatasetOrigin
	for _, v := range values {
		if !strings.HasPrefix(v, "@") {
			origins = append(origins, DatasetOrigin{Dataset: v, Value: v})
			continue
		}
		list, err := readDatasetList(v[1:])
		if err != nil {
			return nil, &DatasetsError{Value: v, Err: err}
		}
		for _, e := range list {
			origins = append(origins, DatasetOrigin{Dataset: e.dataset, Value: v, Line: e.line, Written: e.written})
		}
	}
	if each != "" {
		m, err := eachDatasets(each)
		if err != nil {
			return nil, &DatasetsError{Each: true, Value: each, Err: err}
		}
		for _, d := range m {
			origins = append(origins, DatasetOrigin{Dataset: d, Each: true, Value: each})
		}
	}
	if len(origins) == 0 {
		return nil, &DatasetsError{Value: `""`, Err: errors.New("no dataset")}
	}
	if err := checkDistinct(origins); err != nil {
		return nil, err
	}
	if len(origins) > 1 {
		// A suite: every dataset is there before the first runs (else a
		// missing third one is found after two have computed).
		for _, o := range origins {
			if err := data.Exists(o.Dataset); err != nil {
				if o.Line > 0 {
					err = fmt.Errorf("line %d (%s): %w", o.Line, o.Written, err)
				}
				return nil, &DatasetsError{Each: o.Each, Value: o.Value, Err: err}
			}
		}
	}
	out := make([]string, len(origins))
	for i, o := range origins {
		out[i] = o.Dataset
	}
	return out, nil
}

// eachDatasets is the datasets of an each pattern, sorted: the data files
// directly in it when it is a folder (data.FolderFiles, the files a
// folder given to --data joins), else the glob's matches.
func eachDatasets(each string) ([]string, error) {
	if fi, err := os.Stat(each); err == nil && fi.IsDir() {
		files, err := data.FolderFiles(each)
		if de := (*data.Error)(nil); errors.As(err, &de) && de.File == each && de.Reason != "" {
			return nil, errors.New(de.Reason) // the value is named already
		}
		return files, err
	}
	m, err := filepath.Glob(each)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, errors.New("matches no file")
	}
	sort.Strings(m)
	return m, nil
}

// checkDistinct refuses a dataset given twice (DuplicateDatasetError).
// Datasets are put in buckets by a cheap identity (datasetIdentity.key:
// the embedded name, or the files' sizes and times), and compared in full
// only within a bucket: a list of thousands of files costs a stat each.
func checkDistinct(origins []DatasetOrigin) error {
	buckets := map[string][]int{}
	ids := make([]datasetIdentity, len(origins))
	for i, o := range origins {
		ids[i] = identityOf(o.Dataset)
		k := ids[i].key()
		for _, j := range buckets[k] {
			if ids[i].same(&ids[j]) {
				return &DatasetsError{Each: o.Each, Value: o.Value, Err: &DuplicateDatasetError{First: origins[j], Second: o}}
			}
		}
		buckets[k] = append(buckets[k], i)
	}
	return nil
}

// datasetIdentity is what makes two dataset specs one dataset: the
// embedded name, or the files the spec reads (data.Sources) and the zip
// member; a file that cannot be read stands as its cleaned absolute path
// (loading it says why).
type datasetIdentity struct {
	embedded string
	member   string
	paths    []string      // the files' cleaned absolute paths
	infos    []os.FileInfo // nil where the file cannot be read
}

func identityOf(spec string) datasetIdentity {
	if strings.HasPrefix(spec, "embedded:") {
		return datasetIdentity{embedded: spec}
	}
	src := data.Sources(spec)
	id := datasetIdentity{}
	if src.Member {
		id.member = spec[strings.LastIndexByte(spec, '#')+1:]
	}
	files := src.Files
	if len(files) == 0 { // a folder or glob that takes in no file
		files = []string{spec}
	}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			abs = filepath.Clean(f)
		}
		fi, _ := os.Stat(f)
		id.paths, id.infos = append(id.paths, abs), append(id.infos, fi)
	}
	return id
}

// key is equal for two identities that may be the same dataset.
func (id *datasetIdentity) key() string {
	if id.embedded != "" {
		return id.embedded
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d#%s", len(id.paths), id.member)
	for i, fi := range id.infos {
		if fi == nil {
			fmt.Fprintf(&b, "|%s", id.paths[i])
		} else {
			fmt.Fprintf(&b, "|%d@%d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// same reports whether the two are one dataset: the same embedded
// dataset, or the same member of files that are each the same file.
func (id *datasetIdentity) same(o *datasetIdentity) bool {
	if id.embedded != "" || o.embedded != "" {
		return id.embedded == o.embedded
	}
	if id.member != o.member || len(id.paths) != len(o.paths) {
		return false
	}
	for i := range id.paths {
		if id.paths[i] == o.paths[i] {
			continue
		}
		if id.infos[i] == nil || o.infos[i] == nil || !os.SameFile(id.infos[i], o.infos[i]) {
			return false
		}
	}
	return true
}

// listEntry is one dataset of a list file: its line, as written and as
// expanded.
type listEntry struct {
	line             int
	written, dataset string
}

// readDatasetList reads a list file of datasets.
func readDatasetList(path string) ([]listEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []listEntry
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		d := t
		if !strings.HasPrefix(t, "embedded:") && !filepath.IsAbs(t) {
			d = filepath.Join(filepath.Dir(path), t)
		}
		out = append(out, listEntry{line: line, written: t, dataset: d})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("the list names no dataset")
	}
	return out, nil
}
