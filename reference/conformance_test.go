package reference_test

import (
	"testing"

	"sweepbench/conformance"
	"sweepbench/reference"
)

// TestConformance: the reference backend passes the suite every backend
// passes, bit for bit against the by-hand reference, on every core and on
// one.
func TestConformance(t *testing.T) {
	t.Run("all cores", func(t *testing.T) { conformance.TestBackend(t, reference.New(), conformance.Options{}) })
	t.Run("one thread", func(t *testing.T) { conformance.TestBackend(t, &reference.Backend{Threads: 1}, conformance.Options{}) })
}
