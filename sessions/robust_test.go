package sessions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/robust"
	"sweepbench/sessions"
)

// TestRunStudyComputesRobustness: a study with blocks run through the run
// path has its robustness summary in the report and in the saved session,
// the same JSON as robust.AnalyseStudy gives on the finished report of the
// same study run without the run path (after it, not beside it); the
// front end's Robustness callback is told once. AnalyseReport, on that
// finished report, gives the same again.
func TestRunStudyComputesRobustness(t *testing.T) {
	bg := context.Background()
	spec := engine.DefaultSpec()
	spec.Head, spec.HMA, spec.HMA3, spec.Backend = 3000, "10:40:10", "12:48:12", "reference"
	spec.Blocks, spec.WF = 4, "anchored"
	reg := pipelineRegistry()
	build := func() *engine.Study {
		st, err := spec.Build(reg)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	s := openStore(t, "")
	var told atomic.Int32
	rep, rec, err := sessions.RunStudy(bg, s, build(), engine.StudyOptions{}, sessions.RecordOptions{
		Robustness: func(*engine.Study) { told.Add(1) },
	})
	if err != nil || rec.Err != nil || rec.Robustness != nil {
		t.Fatal(err, rec.Err, rec.Robustness)
	}
	if n := told.Load(); n != 1 {
		t.Errorf("the Robustness callback was told %d times, want once", n)
	}
	if len(rep.Robustness) == 0 {
		t.Fatal("the run path's report has no robustness summary")
	}

	// The independent computation: the whole study, then the analysis.
	st := build()
	whole, err := engine.RunStudy(bg, st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rob, err := robust.AnalyseStudy(bg, st, whole)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(rob.Summary())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rep.Robustness, want) {
		t.Errorf("the run path's summary:\n%s\nafter the study:\n%s", rep.Robustness, want)
	}
	saved, err := s.Open(bg, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved.Robustness, want) {
		t.Errorf("the session's summary:\n%s\nwant:\n%s", saved.Robustness, want)
	}
	if err := sessions.AnalyseReport(bg, nil, 0, st, whole); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(whole.Robustness, want) {
		t.Errorf("AnalyseReport's summary:\n%s\nwant:\n%s", whole.Robustness, want)
	}
}
