package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
	"sweepbench/reference/conformance"
)

func TestStudyFallbackLane(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(3000)
	ref := reference.New()
	s := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 20, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 24, Step: 12}},
		Params:     engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600},
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: conformance.FP32Only(ref), Fallback: ref}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Run(engine.FP64).Backend; got != "reference" {
		t.Errorf("fp64 lane ran on %q, want the fallback reference", got)
	}
	if got := rep.Run(engine.FP32).Backend; got != "fp32only" {
		t.Errorf("fp32 lane ran on %q, want fp32only", got)
	}
	if note := s.FallbackNote(); note != "fp32only has no fp64: the fp64 lane runs on reference" {
		t.Errorf("fallback note %q does not say which backend runs the fp64 lane", note)
	}
	if strings.Contains(rep.Note, "fp64 lane") {
		t.Errorf("report note %q: the fallback is the study's note (Spec.Study), not RunStudy's", rep.Note)
	}
	if rep.Parity == nil || rep.Parity.Verdict != engine.VerdictPass {
		t.Errorf("parity %+v, want a pass verdict", rep.Parity)
	}

	s.Fallback = nil
	if _, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{}); !errors.Is(err, conformance.ErrNoFP64) {
		t.Errorf("without a fallback: err %v, want the backend's refusal", err)
	}
}

// TestFP32OnlyConformance: a backend without fp64 passes the conformance
// suite, whose study check runs its fp64 lane on the fallback.
func TestFP32OnlyConformance(t *testing.T) {
	conformance.TestBackend(t, conformance.FP32Only(reference.New()), conformance.Options{})
}
