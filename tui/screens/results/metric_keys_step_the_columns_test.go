package results

import (
	"slices"
	"testing"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// TestMetricKeysStepTheColumns: m makes the next column (the SPEC metrics,
// then the parity columns of a report with both precisions) the chosen
// metric, M the previous one, wrapping round; p switches the table's
// precision between the two runs.
func TestMetricKeysStepTheColumns(t *testing.T) {
	s := newScreen(t, 80, 24)
	state := s.state
	cols := common.Columns()
	i := slices.Index(cols, state.Metric)
	if i < 0 {
		t.Fatalf("the report starts on %q, not a column", state.Metric)
	}
	s.key("m")
	if want := cols[(i+1)%len(cols)]; state.Metric != want {
		t.Fatalf("m: metric %q, want %q", state.Metric, want)
	}
	s.key("M", "M")
	if want := cols[(i+len(cols)-1)%len(cols)]; state.Metric != want {
		t.Fatalf("m M M: metric %q, want %q", state.Metric, want)
	}
	for range len(cols) {
		s.key("m")
	}
	if want := cols[(i+len(cols)-1)%len(cols)]; state.Metric != want {
		t.Fatalf("m %d times more: metric %q, want %q (round to where it was)", len(cols), state.Metric, want)
	}

	if state.Prec != engine.FP64 {
		t.Fatalf("the report starts in %v, want fp64", state.Prec)
	}
	s.key("p")
	if state.Prec != engine.FP32 || s.m.Metrics().Prec() != engine.FP32 {
		t.Fatalf("p: precision %v (table %v), want fp32", state.Prec, s.m.Metrics().Prec())
	}
	s.key("p")
	if state.Prec != engine.FP64 {
		t.Fatalf("p again: precision %v, want fp64", state.Prec)
	}
}
