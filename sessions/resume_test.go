package sessions_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// TestResumeAfterCancel cancels a study after a few batches, resumes it,
// and compares the whole session with an uninterrupted run of the same
// study: every metric bit for bit, and the parity report.
func TestResumeAfterCancel(t *testing.T) {
	ds := btcusdt(t, 8000)
	st := newStudy(t, ds, "10:100:5", "12:96:12")
	s := openStore(t, "")
	bg := context.Background()

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	w, err := begin(ctx, s, st, origin(8000), "")
	if err != nil {
		t.Fatal(err)
	}
	w.BatchRows = 16
	seen := 0
	sink := func(p engine.Precision, rs []engine.ComboResult) error {
		err := w.Save(p, rs)
		if seen += len(rs); seen >= 40 {
			cancel()
		}
		return err
	}
	rep, runErr := engine.RunStudy(ctx, st, engine.StudyOptions{Sink: sink})
	if !errors.Is(runErr, context.Canceled) {
		t.Fatalf("RunStudy: %v, want cancelled", runErr)
	}
	if err := w.Finish(rep, runErr); err != nil {
		t.Fatal(err)
	}
	ss, err := s.Get(bg, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	done, total := ss.Done()
	if ss.Status != engine.StatusCancelled || done < 40 || done >= total {
		t.Fatalf("after cancel: %s, %d of %d saved", ss.Status, done, total)
	}

	got, lanes, err := s.Resume(bg, w.ID(), st, sessions.ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lanes) != 2 || lanes[0].Saved != done || lanes[0].Saved+lanes[0].Computed != st.Grid.Len() ||
		lanes[1].Saved != 0 || lanes[1].Computed != st.Grid.Len() {
		t.Errorf("lanes %+v: want fp64 %d saved + the rest computed, fp32 all computed", lanes, done)
	}
	if ss, _ := s.Get(bg, w.ID()); ss.Status != engine.StatusComplete {
		t.Errorf("after resume: %s", ss.Status)
	}

	s2 := openStore(t, "")
	_, id2 := runSaved(t, s2, newStudy(t, ds, "10:100:5", "12:96:12"), origin(8000), "")
	want, err := s2.Open(bg, id2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Runs {
		w, g := *want.Runs[i], *got.Runs[i]
		g.Prepare, g.Elapsed, g.Device = w.Prepare, w.Elapsed, w.Device // timings differ
		compareRuns(t, &w, &g)
	}
	if !reflect.DeepEqual(got.Parity, want.Parity) {
		t.Errorf("parity after resume differs:\n got %+v\nwant %+v", got.Parity, want.Parity)
	}

	if _, _, err := s.Resume(bg, w.ID(), st, sessions.ResumeOptions{}); !errors.Is(err, sessions.ErrComplete) {
		t.Errorf("resuming a complete session: %v, want ErrComplete", err)
	}
}

// TestResumeRefusesChangedData: the dataset must be the one saved, by its
// SHA-256 and its bars.
func TestResumeRefusesChangedData(t *testing.T) {
	ds := btcusdt(t, 4000)
	st := newStudy(t, ds, "10:40:10", "12:48:12", engine.FP64)
	s := openStore(t, "")
	bg := context.Background()
	w, err := begin(bg, s, st, origin(4000), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Save(engine.FP64, []engine.ComboResult{{Index: 0, Combo: st.Grid.At(0)}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(nil, context.Canceled); err != nil {
		t.Fatal(err)
	}

	changed := *ds
	changed.Info.SHA256 = "0123456789abcdef" + ds.Info.SHA256[16:]
	longer := btcusdt(t, 4001)
	for name, d := range map[string]*engine.Study{
		"sha256": newStudy(t, &changed, "10:40:10", "12:48:12", engine.FP64),
		"bars":   newStudy(t, longer, "10:40:10", "12:48:12", engine.FP64),
	} {
		_, _, err := s.Resume(bg, w.ID(), d, sessions.ResumeOptions{})
		var dc *sessions.DatasetChangedError
		if !errors.As(err, &dc) {
			t.Errorf("%s changed: %v, want *DatasetChangedError", name, err)
		}
	}
	if ss, _ := s.Get(bg, w.ID()); ss.Status != engine.StatusCancelled {
		t.Errorf("a refused resume left the session %s, want cancelled", ss.Status)
	}
}

// TestResumeParityOnly: a session cancelled after both runs completed but
// before its parity report (Ctrl-C during the parity) resumes by computing
// the parity alone.
func TestResumeParityOnly(t *testing.T) {
	ds := btcusdt(t, 5000)
	st := newStudy(t, ds, "10:50:10", "12:48:12")
	s := openStore(t, "")
	bg := context.Background()
	w, err := begin(bg, s, st, origin(5000), "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(bg, st, engine.StudyOptions{Sink: w.Save})
	if err != nil {
		t.Fatal(err)
	}
	want := rep.Parity
	rep.Parity = nil
	if err := w.Finish(rep, context.Canceled); err != nil {
		t.Fatal(err)
	}
	got, lanes, err := s.Resume(bg, w.ID(), st, sessions.ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lanes {
		if !l.Complete || l.Computed != 0 {
			t.Errorf("lane %+v: want complete, nothing computed", l)
		}
	}
	if !reflect.DeepEqual(got.Parity, want) {
		t.Errorf("parity computed on resume:\n got %+v\nwant %+v", got.Parity, want)
	}
	if ss, _ := s.Get(bg, w.ID()); ss.Status != engine.StatusComplete {
		t.Errorf("status %s, want complete", ss.Status)
	}
}

// TestResumeLaneSavedNotFinished: the process died after every fp64 combo
// was saved but before it recorded the run complete (the fp32 lane had not
// started). Resume computes the fp32 lane only; the fp64 run is recorded
// complete, its saved time not counted twice, and the session is complete.
func TestResumeLaneSavedNotFinished(t *testing.T) {
	ds := btcusdt(t, 5000)
	st := newStudy(t, ds, "10:50:10", "12:48:12")
	s := openStore(t, "")
	bg := context.Background()
	w, err := begin(bg, s, st, origin(5000), "")
	if err != nil {
		t.Fatal(err)
	}
	full, err := engine.RunStudy(bg, st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r64 := *full.Run(engine.FP64)
	if err := w.Save(engine.FP64, r64.Results); err != nil {
		t.Fatal(err)
	}
	r64.Status, r64.Err, r64.Elapsed = engine.StatusCancelled, context.Canceled, 3*time.Second
	if err := w.Finish(&engine.Report{Runs: []*engine.Run{&r64}}, context.Canceled); err != nil {
		t.Fatal(err)
	}
	got, lanes, err := s.Resume(bg, w.ID(), st, sessions.ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lanes) != 2 || !lanes[0].Complete || lanes[0].Computed != 0 || lanes[1].Computed != st.Grid.Len() {
		t.Errorf("lanes %+v: want fp64 complete (nothing computed), fp32 computed whole", lanes)
	}
	ss, err := s.Get(bg, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if ss.Status != engine.StatusComplete || ss.Runs[0].Status != engine.StatusComplete || ss.Runs[0].Elapsed != 3*time.Second {
		t.Errorf("session %s, fp64 run %s in %v: want complete, complete, the 3s saved", ss.Status, ss.Runs[0].Status, ss.Runs[0].Elapsed)
	}
	if !reflect.DeepEqual(got.Parity, full.Parity) {
		t.Errorf("parity after resume differs from the uninterrupted study's")
	}
}

// TestResumeAfterOverlappingBatches: a run saved as batches that overlap
// (each holding chunks that lanes computed side by side, so the batches'
// ranges interleave), interrupted, and resumed, the resume's batches
// filling the holes between them: every read has the combos in grid order,
// each the uninterrupted study's, and the resume refuses nothing saved.
func TestResumeAfterOverlappingBatches(t *testing.T) {
	bg := context.Background()
	ds := btcusdt(t, 3000)
	st := newStudy(t, ds, "10:100:10", "12:96:12", engine.FP64) // 80 combos
	full, err := engine.RunStudy(bg, st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	computed := full.Run(engine.FP64).Results
	s := openStore(t, "")
	w, err := begin(bg, s, st, origin(3000), "")
	if err != nil {
		t.Fatal(err)
	}
	w.BatchRows, w.BatchAge = 1<<20, time.Hour // a batch at each Flush
	chunk := func(lo, hi int) []engine.ComboResult { return computed[lo:hi] }
	var saved []int
	for _, batch := range [][][2]int{{{40, 44}, {0, 4}}, {{60, 62}, {4, 8}, {20, 22}}, {{10, 12}}} {
		for _, c := range batch {
			if err := w.Save(engine.FP64, chunk(c[0], c[1])); err != nil {
				t.Fatal(err)
			}
			for i := c[0]; i < c[1]; i++ {
				saved = append(saved, i)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(saved)
	cut := &engine.Run{Backend: "reference", Precision: engine.FP64, Grid: st.Grid, Status: engine.StatusCancelled, Err: context.Canceled}
	if err := w.Finish(&engine.Report{Runs: []*engine.Run{cut}}, context.Canceled); err != nil {
		t.Fatal(err)
	}
	db := rawSQL(t, s.Path())
	rid := runID(t, db, w.ID(), engine.FP64)
	batches := readBatches(t, db, rid)
	if len(batches) != 3 || batches[0].last < batches[1].first {
		t.Fatalf("batches %+v: want 3 that overlap", batches)
	}
	got, err := s.Open(bg, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	rs := got.Runs[0].Results
	if len(rs) != len(saved) {
		t.Fatalf("%d combos read, %d saved", len(rs), len(saved))
	}
	for i, idx := range saved {
		if !sameResult(&rs[i], &computed[idx]) {
			t.Fatalf("row %d: combo %d, want %d as computed", i, rs[i].Index, idx)
		}
	}

	resumed, lanes, err := s.Resume(bg, w.ID(), st, sessions.ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lanes[0].Saved != len(saved) || lanes[0].Computed != st.Grid.Len()-len(saved) {
		t.Errorf("lane %+v: want %d saved, the rest computed", lanes[0], len(saved))
	}
	if n := len(readBatches(t, db, rid)); n <= 3 {
		t.Errorf("%d batches after the resume: it added none", n)
	}
	for _, run := range []*engine.Run{resumed.Runs[0], mustOpenRun(t, s, w.ID(), engine.FP64)} {
		if len(run.Results) != len(computed) {
			t.Fatalf("%d combos after the resume, want %d", len(run.Results), len(computed))
		}
		for i := range computed {
			if !sameResult(&run.Results[i], &computed[i]) {
				t.Fatalf("row %d after the resume: combo %d, want %d as computed", i, run.Results[i].Index, i)
			}
		}
	}
}

// sameResult is bit equality of two results (any NaN equal to any NaN).
func sameResult(a, b *engine.ComboResult) bool {
	if a.Index != b.Index || a.Combo != b.Combo {
		return false
	}
	for _, name := range engine.MetricNames {
		x, _ := a.Value(name)
		y, _ := b.Value(name)
		if !sameFloat(x, y) {
			return false
		}
	}
	return true
}

func mustOpenRun(t *testing.T, s *sessions.Store, id int64, p engine.Precision) *engine.Run {
	t.Helper()
	run, _, err := s.OpenRun(context.Background(), id, p)
	if err != nil {
		t.Fatal(err)
	}
	return run
}
