package engine

import (
	"errors"
	"fmt"

	"sweepbench/engine/text"
)

// ErrNotKept: a report whose runs kept only their best results
// (StudyOptions.Discard) cannot be written whole; its rows went to the
// study's sink as they came.
var ErrNotKept = errors.New("the results were streamed, not kept")

// Kept refuses a report with a run that kept only its best results.
func (r *Report) Kept() error {
	for _, run := range r.Runs {
		if run.Kept {
			return fmt.Errorf("%s run: %w (%s of %s combos kept in memory)", run.Precision, ErrNotKept,
				text.Thousands(len(run.Results)), text.Thousands(run.Computed))
		}
	}
	return nil
}
