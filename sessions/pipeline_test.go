package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/sessions"
)

// The study pipeline end to end: a Spec built into a Study (engine.Spec),
// run and saved (sessions.RunStudy), interrupted, rebuilt from the saved
// Spec (sessions.Rebuild) and resumed (Store.Resume = engine.RunStudy
// with the saved results as Prior), compared with an uninterrupted run.

func pipelineRegistry() *engine.Registry {
	r := &engine.Registry{}
	r.Register(reference.New())
	r.Register(conformance.FP32Only(reference.New()))
	return r
}

// interruptedSession runs spec, saved, and cancels it once `after` combos
// are computed: a session to resume. It returns the session's id.
func interruptedSession(t *testing.T, s *sessions.Store, reg *engine.Registry, spec engine.Spec, after int) int64 {
	t.Helper()
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	_, rec, runErr := sessions.RunStudy(ctx, s, st, engine.StudyOptions{Sink: func(p engine.Precision, rs []engine.ComboResult) error {
		if seen += len(rs); seen >= after {
			cancel()
		}
		return nil
	}}, sessions.RecordOptions{SaveError: func(e *sessions.SaveError) { t.Errorf("save: %v", e) }})
	if !errors.Is(runErr, context.Canceled) || rec.ID == 0 {
		t.Fatalf("the interrupted run: err %v, session %d", runErr, rec.ID)
	}
	return rec.ID
}

// resumeAndCompare resumes session id as `sessions resume` does and
// compares every metric of every combo, and the parity report, with an
// uninterrupted run of the same Spec.
func resumeAndCompare(t *testing.T, s *sessions.Store, reg *engine.Registry, id int64, spec engine.Spec) *engine.Report {
	t.Helper()
	bg := context.Background()
	ss, err := s.Get(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if ss.Spec.WMA != spec.WMA || ss.Spec.HMA != spec.HMA || ss.Spec.Data != spec.Data || ss.Spec.Head != spec.Head ||
		ss.Spec.From != spec.From || ss.Spec.To != spec.To {
		t.Fatalf("saved spec %+v, want the run's %+v", ss.Spec, spec)
	}
	st, err := sessions.Rebuild(bg, ss, reg, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, lanes, err := s.Resume(bg, id, st, sessions.ResumeOptions{})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	for _, l := range lanes {
		if l.Saved+l.Computed != st.Grid.Len() {
			t.Errorf("lane %s: %d saved + %d computed, want the %d combos", l.Precision, l.Saved, l.Computed, st.Grid.Len())
		}
	}
	fresh, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := engine.RunStudy(bg, fresh, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != len(want.Runs) {
		t.Fatalf("%d runs resumed, %d uninterrupted", len(got.Runs), len(want.Runs))
	}
	for i := range want.Runs {
		w, g := *want.Runs[i], *got.Runs[i]
		g.Prepare, g.Elapsed, g.Device, g.Saving, g.Indicators = w.Prepare, w.Elapsed, w.Device, w.Saving, w.Indicators
		compareRuns(t, &w, &g)
	}
	if !reflect.DeepEqual(got.Parity, want.Parity) {
		t.Errorf("parity after resume differs:\n got %+v\nwant %+v", got.Parity, want.Parity)
	}
	return got
}

// TestResumePrefixKeepsDirectReference is defect 1 of the pipeline issue:
// a resumed `--wma prefix` session prepared its fp64 lane with prefix sums
// (resume built its own jobs) while labelling it direct. The fp64 lane is
// always the direct formulation: the resumed session equals an
// uninterrupted one on every metric of every combo.
func TestResumePrefixKeepsDirectReference(t *testing.T) {
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 8000
	spec.HMA, spec.HMA3, spec.WMA, spec.Backend = "20:200:20", "30:240:30", "prefix", "reference"
	s := openStore(t, "")
	reg := pipelineRegistry()
	id := interruptedSession(t, s, reg, spec, 30)
	got := resumeAndCompare(t, s, reg, id, spec)
	if r := got.Run(engine.FP64); r.WMA != engine.Direct {
		t.Errorf("the fp64 run says wma %s, want direct", r.WMA)
	}
	if got.Parity == nil || got.Parity.Verdict != engine.VerdictCollapse {
		t.Errorf("prefix fp32 against the direct reference: parity %+v, want the collapse", got.Parity)
	}
}

// TestResumeWindow: a study of a window of the data (--from, --to, as
// given, in the data's zone) is saved with it and resumed on the same bars:
// equal to an uninterrupted run of the window on every metric.
func TestResumeWindow(t *testing.T) {
	spec := engine.DefaultSpec()
	spec.Data, spec.From, spec.To = "embedded:btcusdt-1m", "2025-06-05", "2025-06-10 12:00"
	spec.HMA, spec.HMA3, spec.Backend = "10:100:10", "12:96:12", "reference"
	s := openStore(t, "")
	reg := pipelineRegistry()
	id := interruptedSession(t, s, reg, spec, 20)
	got := resumeAndCompare(t, s, reg, id, spec)
	first, last := got.Dataset.First.UTC(), got.Dataset.Last.UTC()
	if first.Format("2006-01-02 15:04") != "2025-06-05 00:00" || !last.Before(time.Date(2025, 6, 10, 12, 0, 0, 0, time.UTC)) || last.Before(time.Date(2025, 6, 10, 11, 0, 0, 0, time.UTC)) {
		t.Errorf("the resumed study's bars run %s .. %s, want 2025-06-05 00:00 .. just before 2025-06-10 12:00", first, last)
	}
}

// TestResumeUsesFallback is defect 2: a session whose backend has no fp64
// (Metal) could not be resumed ("prepare: no fp64"): resume ignored
// Study.Fallback. Now its fp64 lane runs on the reference, as it did.
func TestResumeUsesFallback(t *testing.T) {
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 4000
	spec.HMA, spec.HMA3, spec.Backend = "10:100:10", "12:96:12", "fp32only"
	s := openStore(t, "")
	reg := pipelineRegistry()
	id := interruptedSession(t, s, reg, spec, 20)
	got := resumeAndCompare(t, s, reg, id, spec)
	if b64, b32 := got.Run(engine.FP64).Backend, got.Run(engine.FP32).Backend; b64 != "reference" || b32 != "fp32only" {
		t.Errorf("lanes ran on %s (fp64) and %s (fp32), want reference and fp32only", b64, b32)
	}
	if want := "fp32only has no fp64: the fp64 lane runs on reference"; !strings.Contains(got.Note, want) {
		t.Errorf("note %q does not say %q", got.Note, want)
	}
}

// TestShowKeepsRunNotes is defect 3: `sessions show` lost the notes run
// printed (the median trade count, the parity explanation). The session's
// report carries every note the run's report had.
func TestShowKeepsRunNotes(t *testing.T) {
	bg := context.Background()
	spec := engine.DefaultSpec()
	spec.Head, spec.HMA, spec.HMA3, spec.Backend = 2000, "200:300:100", "240:300:60", "reference"
	spec.Fee = 0.02 // a fee that looks like a percentage: a note known before the run
	s := openStore(t, "")
	reg := pipelineRegistry()
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	rep, rec, err := sessions.RunStudy(bg, s, st, engine.StudyOptions{}, sessions.RecordOptions{})
	if err != nil || rec.Err != nil {
		t.Fatal(err, rec.Err)
	}
	for _, want := range []string{"the median combo made", "fee 0.02 is 2% per side"} {
		if !strings.Contains(rep.Note, want) {
			t.Fatalf("the run's note %q lacks %q", rep.Note, want)
		}
	}
	shown, err := s.Open(bg, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if shown.Note != rep.Note {
		t.Errorf("show's note %q, run's %q", shown.Note, rep.Note)
	}
	if (shown.Parity == nil) != (rep.Parity == nil) || shown.Parity != nil && shown.Parity.Explanation != rep.Parity.Explanation {
		t.Errorf("show's parity %+v, run's %+v", shown.Parity, rep.Parity)
	}
}

// TestShowKeepsParityExplanation: a parity report where only the per-combo
// trade limit fired is explained when it is read back, as when run
// printed it.
func TestShowKeepsParityExplanation(t *testing.T) {
	bg := context.Background()
	s := openStore(t, "")
	st := newStudy(t, btcusdt(t, 3000), "10:20:10", "12:24:12")
	w, err := begin(bg, s, st, origin(3000), "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(bg, st, engine.StudyOptions{Sink: w.Sink(nil)})
	if err != nil {
		t.Fatal(err)
	}
	// One combo's fp32 trade count moved by 5 with every flip borderline:
	// the limit fires alone.
	p := *rep.Parity
	p.Combos = append([]engine.ComboParity(nil), p.Combos...)
	p.Combos[0].Dn, p.Combos[0].Trades32, p.Combos[0].DnLimitBreached = 5, p.Combos[0].Trades64+5, true
	p.Reasons = []string{fmt.Sprintf("1 combo with |dn| > max(1%% of fp64 trades, 2); worst (hma 10, hma3 12): dn +5 of %d", p.Combos[0].Trades64)}
	p.Verdict = engine.VerdictCollapse
	p.Explain()
	if p.Explanation == "" {
		t.Fatal("no explanation for a collapse where only the trade limit fired")
	}
	rep.Parity = &p
	if err := w.Finish(rep, nil); err != nil {
		t.Fatal(err)
	}
	shown, err := s.Open(bg, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if shown.Parity == nil || shown.Parity.Explanation != p.Explanation {
		t.Errorf("show's explanation %q, run's %q", shown.Parity.Explanation, p.Explanation)
	}
}

// TestHangupSavedAsInterrupted (issue 15, defect 9): a study whose context
// is cancelled by a hang-up (engine.Interrupted: SIGHUP, SIGTERM) is saved
// as interrupted, study and runs, so `sessions resume` completes it; the
// user's own cancel (Ctrl-C, esc) is saved as cancelled.
func TestHangupSavedAsInterrupted(t *testing.T) {
	s := openStore(t, "")
	reg := pipelineRegistry()
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.Backend = "embedded:btcusdt-1m", 3000, "10:60:2", "12:60:4", "reference"
	for _, c := range []struct {
		cause error
		want  engine.Status
	}{{&engine.Interrupted{Signal: "hangup"}, sessions.StatusInterrupted}, {context.Canceled, engine.StatusCancelled}} {
		st, err := spec.Build(reg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		seen := 0
		_, rec, runErr := sessions.RunStudy(ctx, s, st, engine.StudyOptions{Sink: func(p engine.Precision, rs []engine.ComboResult) error {
			if seen += len(rs); seen >= 40 {
				cancel(c.cause)
			}
			return nil
		}}, sessions.RecordOptions{})
		cancel(nil)
		if !errors.Is(runErr, context.Canceled) {
			t.Fatalf("%v: the run returned %v, want a cancellation", c.cause, runErr)
		}
		ss, err := s.Get(context.Background(), rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ss.Status != c.want || len(ss.Runs) == 0 || ss.Runs[0].Status != c.want {
			t.Errorf("%v: session %s, runs %+v; want %s", c.cause, ss.Status, ss.Runs, c.want)
		}
		if c.want == sessions.StatusInterrupted && !strings.Contains(ss.Error+ss.Runs[0].Error, "hangup") {
			t.Errorf("hang-up: errors %q / %q, want them to say so", ss.Error, ss.Runs[0].Error)
		}
	}
}

// TestShowNamesTheParityCombos (issue 25, items 19 and 20): a collapse
// that only max |dPnL| fired is read back, by show (Open) and by a large
// study's summary (OpenSummary, no row per combo held), with the reason,
// the explanation and each figure's combo that run printed.
func TestShowNamesTheParityCombos(t *testing.T) {
	bg := context.Background()
	s := openStore(t, "")
	st := newStudy(t, btcusdt(t, 3000), "10:20:10", "12:24:12")
	w, err := begin(bg, s, st, origin(3000), "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(bg, st, engine.StudyOptions{Sink: w.Sink(nil)})
	if err != nil {
		t.Fatal(err)
	}
	// Combo 3 (hma 20, hma3 24) moves by 6 pp with its trades unchanged;
	// the verdict recomputed over the rows (MergeParity, as Compare).
	q := *rep.Parity
	q.Combos = append([]engine.ComboParity(nil), q.Combos...)
	c := &q.Combos[3]
	ret64, _ := c.Returns()
	*c = engine.NewComboParity(&engine.ComboResult{Index: c.Index, Combo: c.Combo, Metrics: engine.Metrics{TotalTrades: c.Trades64, TotalReturn: ret64}},
		&engine.ComboResult{Index: c.Index, Combo: c.Combo, Metrics: engine.Metrics{TotalTrades: c.Trades64, TotalReturn: ret64 - 0.06}})
	for k := range q.Combos {
		q.Combos[k].NonBorderline = 0
	}
	p := engine.MergeParity([]*engine.Parity{&q})
	if len(p.Reasons) != 1 || !strings.Contains(p.Reasons[0], "on (hma 20, hma3 24)") || !strings.Contains(p.Explanation, "only max |dPnL| fired, on (hma 20, hma3 24)") {
		t.Fatalf("run's reasons %q, explanation %q", p.Reasons, p.Explanation)
	}
	rep.Parity = p
	if err := w.Finish(rep, nil); err != nil {
		t.Fatal(err)
	}
	wantDn, wantPnL := p.MaxFigures()
	shown, err := s.Open(bg, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	summary, err := s.OpenSummary(bg, w.ID(), engine.SummaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*engine.Report{"Open": shown, "OpenSummary": summary} {
		got := r.Parity
		if got == nil {
			t.Fatalf("%s: no parity", name)
		}
		if !reflect.DeepEqual(got.Reasons, p.Reasons) || got.Explanation != p.Explanation {
			t.Errorf("%s: reasons %q explanation %q, run's %q %q", name, got.Reasons, got.Explanation, p.Reasons, p.Explanation)
		}
		if dn, pnl := got.MaxFigures(); dn != wantDn || pnl != wantPnL {
			t.Errorf("%s: figures %q, %q; run's %q, %q", name, dn, pnl, wantDn, wantPnL)
		}
	}
}
