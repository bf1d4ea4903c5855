package conformance_test

import (
	"os"
	"testing"

	"sweepbench/engine/data/datatest"
)

// TestMain keeps the parsed-dataset cache of the tests' loads in a
// temporary folder rather than the user's.
func TestMain(m *testing.M) { os.Exit(datatest.RunWithTempCache(m)) }
