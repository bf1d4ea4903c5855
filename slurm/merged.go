package slurm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Merged is what the merge job records in SessionsFile once it has saved
// the merged study: the sessions (one per dataset, in the study's order)
// and the database that holds them (absolute), so that the workbench can
// open them.
type Merged struct {
	DB       string  `json:"db"`
	Sessions []int64 `json:"sessions"`
}

// WriteMerged writes m to path (merge --sessions-json), replacing it
// whole.
func WriteMerged(path string, m *Merged) error {
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadMerged reads job folder dir's SessionsFile: nil, nil when there is
// none.
func ReadMerged(dir string) (*Merged, error) {
	path := filepath.Join(dir, SessionsFile)
	js, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m Merged
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}
