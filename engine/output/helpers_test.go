package output_test

import "sweepbench/internal/studytest"

// The shared helpers (package studytest), under the names these tests
// call them by.
var (
	openDataset = studytest.OpenDataset
	head        = studytest.Head
	mustRange   = studytest.MustRange
	study       = studytest.Study
)
