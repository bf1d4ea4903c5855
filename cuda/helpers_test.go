package cuda

import (
	"testing"

	"sweepbench/engine"
)

// Bars come from sweepbench/engine/data/datatest and metric comparisons
// from sweepbench/conformance, as in every backend's tests.

func mustRange(t testing.TB, name, s string) engine.Range {
	r, err := engine.ParseRange(name, s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func defaultParams() engine.Params {
	return engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600}
}
