package sessions

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"sweepbench/engine"
)

// TestExecutionOptionsKept: a study's slippage and risk-free rate (SPEC
// Part 2 "Execution options") are saved with it (schema v15) and read back
// into its Params and Spec, so that a resume computes what the run did;
// its rows keep the 10 new metrics, computed (not NaN) by the reference
// backend, bit for bit; a study with the defaults reads them back as such.
func TestExecutionOptionsKept(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := testStudy(t, 3000, engine.FP64)
	st.Params.Slippage, st.Params.RiskFree = 0.0005, 0.04
	rep, id := saveStudy(t, s, st)
	ss, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if p := ss.Params; p.Fill != engine.FillClose || p.Slippage != 0.0005 || p.RiskFree != 0.04 {
		t.Errorf("params read back: fill %s, slippage %v, risk-free %v; want close, 0.0005, 0.04", p.Fill, p.Slippage, p.RiskFree)
	}
	if sp := ss.Spec; sp.Fill != "" || sp.Slippage != 0.0005 || sp.RiskFree != 0.04 {
		t.Errorf("spec read back: fill %q, slippage %v, risk-free %v", sp.Fill, sp.Slippage, sp.RiskFree)
	}
	got, err := s.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := rep.Runs[0].Results
	if len(got.Runs[0].Results) != len(want) {
		t.Fatalf("%d rows read, %d saved", len(got.Runs[0].Results), len(want))
	}
	for i, r := range got.Runs[0].Results {
		for _, name := range engine.MetricNames {
			a, _ := r.Value(name)
			b, _ := want[i].Value(name)
			if math.Float64bits(a) != math.Float64bits(b) {
				t.Errorf("combo %d %s: %v read, %v saved", r.Index, name, a, b)
			}
		}
		if !r.HasTradeMetrics() {
			t.Errorf("combo %d: the reference backend's trade metrics read as not computed", r.Index)
		}
	}

	_, id2 := saveStudy(t, s, testStudy(t, 3000, engine.FP64))
	ss2, err := s.Get(ctx, id2)
	if err != nil {
		t.Fatal(err)
	}
	if !ss2.Params.Part1() || ss2.Spec.Fill != "" || ss2.Spec.Slippage != 0 || ss2.Spec.RiskFree != 0 {
		t.Errorf("a default study reads back fill %s, slippage %v, risk-free %v", ss2.Params.Fill, ss2.Params.Slippage, ss2.Params.RiskFree)
	}
}
