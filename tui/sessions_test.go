package tui

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	enginebench "sweepbench/engine/bench"
	"sweepbench/engine/data"
	"sweepbench/reference"
	"sweepbench/sessions"
	"sweepbench/tui/common"
	"sweepbench/tui/components/bench"
	"sweepbench/tui/screens/results"
)

// Every test here opens its own store in t.TempDir(): never the user's.

func tempStore(t *testing.T) *sessions.Store {
	t.Helper()
	st, err := sessions.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func storeConfig(f Flags, st *sessions.Store) Config {
	return Config{Registry: testRegistry(), Flags: f, Sessions: st, LoadSession: sessions.LoadSpec}
}

func newStoreDriver(t *testing.T, cfg Config, w, h int) *driver {
	m := newModel(context.Background(), cfg, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	return d
}

// smallStudy is smallFlags' study with fee, built from its Spec as the
// workbench builds it.
func smallStudy(t *testing.T, fee float64) *engine.Study {
	t.Helper()
	spec := smallFlags().Spec
	spec.Fee = fee
	s, err := spec.Build(testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seedStore saves three sessions as `run` would: 1 complete, 2 complete
// with fee 0.1%, 3 cancelled after 4 fp64 combos.
func seedStore(t *testing.T, st *sessions.Store) {
	t.Helper()
	ctx := context.Background()
	var first *engine.Report
	for _, fee := range []float64{engine.DefaultFee, 0.001} {
		s := smallStudy(t, fee)
		rep, _, err := sessions.RunStudy(ctx, st, s, engine.StudyOptions{}, sessions.RecordOptions{}) // saved as run saves
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = rep
		}
	}
	s := smallStudy(t, engine.DefaultFee)
	w, err := st.Begin(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	part := *first.Run(engine.FP64)
	part.Results = part.Results[:4]
	part.Status, part.Err = engine.StatusCancelled, context.Canceled
	if err := w.Save(engine.FP64, part.Results); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(&engine.Report{Runs: []*engine.Run{&part}}, context.Canceled); err != nil {
		t.Fatal(err)
	}
}

// TestRunSaved: a run of the workbench is saved as `run` saves it (the
// Writer's Sink, final status, parity), --no-save saves nothing, and a
// store that cannot be opened is a warning while the run is still shown.
func TestRunSaved(t *testing.T) {
	t.Run("saved", func(t *testing.T) {
		st := tempStore(t)
		d := newStoreDriver(t, storeConfig(smallFlags(), st), 80, 24)
		d.key("enter")
		m := d.m
		if m.screen != common.ResultsScreen || m.status.Saved != "session 1" {
			t.Fatalf("screen %d saved %q warn %q err %q", m.screen, m.status.Saved, m.status.Warn, m.status.LastErr)
		}
		ss, err := st.Get(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if ss.Status != engine.StatusComplete || len(ss.Runs) != 2 || ss.Spec.Data != "embedded:btcusdt-1m" || ss.Spec.Head != 5000 {
			t.Fatalf("saved session: status %s, %d runs, spec %+v", ss.Status, len(ss.Runs), ss.Spec)
		}
		for _, r := range ss.Runs {
			if r.Done != 9 || r.Status != engine.StatusComplete {
				t.Fatalf("run %s: %d done, %s", r.Precision, r.Done, r.Status)
			}
		}
		rep, err := st.Open(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		got := m.state.Results.Report.Parity
		if rep.Parity == nil || rep.Parity.Verdict != got.Verdict || rep.Parity.ShiftedTrades != got.ShiftedTrades {
			t.Fatalf("saved parity %+v, shown %+v", rep.Parity, got)
		}
		if v := m.View(); !strings.Contains(v, "session 1") {
			t.Fatalf("the status line does not say where the run was saved:\n%s", v)
		}
	})
	t.Run("no-save", func(t *testing.T) {
		st := tempStore(t)
		cfg := storeConfig(smallFlags(), st)
		cfg.NoSave = true
		d := newStoreDriver(t, cfg, 80, 24)
		d.key("enter")
		list, err := st.List(context.Background(), sessions.ListOptions{})
		if err != nil || len(list) != 0 || d.m.status.Saved != "" {
			t.Fatalf("--no-save saved %d sessions (%v)", len(list), err)
		}
	})
	t.Run("no database", func(t *testing.T) {
		cfg := storeConfig(smallFlags(), nil)
		cfg.StoreErr = errors.New("sessions database /nowhere/sessions.db: open: permission denied")
		d := newStoreDriver(t, cfg, 100, 30)
		d.key("enter")
		m := d.m
		if m.screen != common.ResultsScreen || m.state.Results == nil {
			t.Fatalf("the run was not shown: screen %d, err %q", m.screen, m.status.LastErr)
		}
		if v := m.View(); !strings.Contains(v, "warning: this run is not saved") {
			t.Fatalf("no warning in the status line:\n%s", v)
		}
		d.global("S")
		if v := m.View(); !strings.Contains(v, "permission denied") {
			t.Fatalf("the sessions screen does not say why:\n%s", v)
		}
	})
	t.Run("read-only database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sessions.db")
		rw, err := sessions.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rw.Close()
		ro, err := sessions.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		d := newStoreDriver(t, storeConfig(smallFlags(), ro), 100, 30)
		d.key("enter")
		if d.m.state.Results == nil || !strings.Contains(d.m.status.Warn, "not saved") {
			t.Fatalf("results %v, warning %q", d.m.state.Results != nil, d.m.status.Warn)
		}
	})
}

// TestSessionsBrowser: the list, marking two runs and comparing them,
// opening one into the results panes, removing one after a confirmation.
func TestSessionsBrowser(t *testing.T) {
	st := tempStore(t)
	seedStore(t, st)
	d := newStoreDriver(t, storeConfig(smallFlags(), st), 80, 24)
	m := d.m
	d.key("esc", "S") // out of the focused range: S is a key again
	if m.screen != common.SessionsScreen || m.sessions.List().Len() != 3 {
		t.Fatalf("screen %d, %d sessions (err %q)", m.screen, m.sessions.List().Len(), m.status.LastErr)
	}
	// Newest first: 3, 2, 1.
	if c := m.sessions.List().Current(); c == nil || c.ID != 3 {
		t.Fatal("the cursor is not on the newest session")
	}

	t.Run("compare needs two marks", func(t *testing.T) {
		d.key("c")
		if !strings.Contains(m.status.LastErr, "two marked runs") || m.sessions.Comparing() {
			t.Fatalf("last error %q", m.status.LastErr)
		}
	})
	t.Run("mark two and compare", func(t *testing.T) {
		d.key("down", "down", " ", "up", " ") // A = 1, B = 2
		marks := m.sessions.List().Marks()
		if len(marks) != 2 || marks[0].ID != 1 || marks[1].ID != 2 || marks[0].Precision != engine.FP64 {
			t.Fatalf("marks %v", marks)
		}
		d.key("up", " ") // a third (session 3) is refused, said whole under the list
		if v := strings.Join(strings.Fields(m.sessions.List().View()), " "); !strings.Contains(v, "two runs are already marked: unmark one with space") {
			t.Fatalf("the refusal is not shown whole in the list:\n%s", m.sessions.List().View())
		}
		if len(m.sessions.List().Marks()) != 2 || !strings.Contains(m.status.LastErr, "two runs are already marked") {
			t.Fatalf("marks %v, last error %q", m.sessions.List().Marks(), m.status.LastErr)
		}
		d.key("c")
		if !m.sessions.Comparing() {
			t.Fatalf("no compare (last error %q)", m.status.LastErr)
		}
		txt := m.sessions.Compare().Text()
		for _, want := range []string{"session 2 fp64", "session 1 fp64", "fee 0.045% -> 0.1%", "verdict n/a"} {
			if !strings.Contains(txt, want) {
				t.Fatalf("the compare lacks %q:\n%s", want, txt)
			}
		}
		checkSize(t, m.View(), 80, 24)
		d.key("esc")
		if m.sessions.Comparing() || m.screen != common.SessionsScreen {
			t.Fatal("esc did not go back to the list")
		}
	})
	t.Run("a session's own fp32 against its fp64", func(t *testing.T) {
		m.sessions.List().ClearMarks()
		m.sessions.List().Select(1)
		d.key(" ", " ", " ") // fp64, fp32, then both
		marks := m.sessions.List().Marks()
		if len(marks) != 2 || marks[0].Precision != engine.FP64 || marks[1].Precision != engine.FP32 {
			t.Fatalf("marks %v", marks)
		}
		d.key("c")
		if !m.sessions.Comparing() || !strings.Contains(m.sessions.Compare().Text(), "Parity B vs A: PASS") {
			t.Fatalf("compare:\n%s\n(last error %q)", m.sessions.Compare().Text(), m.status.LastErr)
		}
		d.key("esc", " ") // unmark
		if len(m.sessions.List().Marks()) != 0 {
			t.Fatalf("marks %v", m.sessions.List().Marks())
		}
	})
	t.Run("open into the results", func(t *testing.T) {
		m.sessions.List().Select(2)
		d.key("enter")
		d.settle()
		if m.screen != common.ResultsScreen || m.state.Results == nil || m.state.Study == nil {
			t.Fatalf("screen %d, results %v, study %v (err %q)", m.screen, m.state.Results != nil, m.state.Study != nil, m.status.LastErr)
		}
		if m.state.Study.Params.Fee != 0.001 || m.status.Saved != "session 2" || !m.state.Results.Complete() {
			t.Fatalf("fee %v, saved %q", m.state.Study.Params.Fee, m.status.Saved)
		}
		if in := m.state.Inspect; in == nil || in.Err != nil || in.D64 == nil {
			t.Fatal("the crossover/combo panes did not recompute the combo")
		}
		// e edits the study on screen: the opened session's, not the form's
		// earlier one (fee 0.045%), so enter reruns it as changed.
		d.key("e")
		d.settle()
		if v := m.setup.Form().Values(); m.screen != common.SetupScreen || v["fee"] != "0.001" || v["hma"] != "10:30:10" {
			t.Fatalf("screen %d, form %v after e on session 2", m.screen, v)
		}
		if s, _, _ := m.setup.Build(); s == nil || s.Params.Fee != 0.001 || s.Grid != m.state.Study.Grid {
			t.Fatalf("the form's study after e: %+v", s)
		}
		d.global("S")
	})
	t.Run("remove with a confirmation", func(t *testing.T) {
		m.sessions.List().Select(2)
		d.key("x")
		if m.sessions.List().Confirming() != 2 || !strings.Contains(m.View(), "remove session 2") {
			t.Fatalf("no confirmation:\n%s", m.View())
		}
		d.key("n") // anything but y keeps it
		if m.sessions.List().Confirming() != 0 || m.sessions.List().Len() != 3 {
			t.Fatal("n did not keep the session")
		}
		d.key("x", "y")
		if m.sessions.List().Len() != 2 {
			t.Fatalf("%d sessions after removing one (err %q)", m.sessions.List().Len(), m.status.LastErr)
		}
		if _, err := st.Get(context.Background(), 2); !errors.Is(err, sessions.ErrNotFound) {
			t.Fatalf("session 2 is still in the store: %v", err)
		}
	})
	t.Run("resume an interrupted one", func(t *testing.T) {
		m.sessions.List().Select(3)
		d.key("R")
		if m.screen != common.ResultsScreen || m.state.Results == nil || !m.state.Results.Complete() {
			t.Fatalf("screen %d (err %q)", m.screen, m.status.LastErr)
		}
		ss, err := st.Get(context.Background(), 3)
		if err != nil || ss.Status != engine.StatusComplete {
			t.Fatalf("session 3 after resume: %v %v", ss.Status, err)
		}
		if !strings.Contains(m.status.Info, "fp64: 4 saved, 5 computed now") {
			t.Fatalf("info %q", m.status.Info)
		}
		d.key("S", "R") // complete now: nothing to resume
		if !strings.Contains(m.status.LastErr, "nothing to resume") {
			t.Fatalf("last error %q", m.status.LastErr)
		}
	})
}

// TestSessionWithoutData: a session whose dataset cannot be loaded again
// opens with its metrics, parity and heatmap; the chart panes say why not.
func TestSessionWithoutData(t *testing.T) {
	st := tempStore(t)
	seedStore(t, st)
	cfg := storeConfig(smallFlags(), st)
	cfg.LoadSession = func(context.Context, *sessions.Session) (*data.Dataset, error) {
		return nil, errors.New("open /data/gone.csv: no such file or directory")
	}
	d := newStoreDriver(t, cfg, 120, 40)
	m := d.m
	d.global("S", "down", "down", "enter")
	if m.screen != common.ResultsScreen || m.state.Results == nil || m.state.Study != nil {
		t.Fatalf("screen %d (err %q)", m.screen, m.status.LastErr)
	}
	v := m.View()
	for _, want := range []string{"charts unavailable", "gone.csv", "VERDICT: PASS", "Metrics: 9 of 9"} {
		if !strings.Contains(v, want) {
			t.Fatalf("no %q:\n%s", want, v)
		}
	}
	for p := range results.NumPanes {
		m.results.SetFocus(p)
		checkSize(t, m.View(), 120, 40)
	}
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	for p := range results.NumPanes {
		m.results.SetFocus(p)
		checkSize(t, m.View(), 80, 24)
	}
}

// fakeRungs is a fast, deterministic ladder: real results (the reference
// on the test's small grid) with fixed wall times, so combos/s, speedups
// and parity are the same on every machine.
func fakeRungs() []enginebench.Rung {
	fixed := func(wall time.Duration, tweak bool) enginebench.RungFunc {
		return func(ctx context.Context, job *engine.Job) (*engine.Run, time.Duration, error) {
			run, _, err := engine.RungBackend(reference.New(), engine.Direct, 1)(ctx, job)
			if err != nil {
				return nil, 0, err
			}
			if tweak { // an unfaithful method: 20 trades more on one combo
				run.Results[0].TotalTrades += 20
			}
			run.Elapsed = wall
			return run, wall / 4, nil
		}
	}
	return []enginebench.Rung{
		{ID: "M0", Method: "naive (fake)", Precision: engine.FP64, Run: fixed(9*time.Second, false)},
		{ID: "M1", Method: "prefix fp64 (fake)", Precision: engine.FP64, Run: fixed(90*time.Millisecond, true)},
		{ID: "M2", Method: "direct fp64 serial (fake)", Precision: engine.FP64, Run: fixed(30*time.Millisecond, false)},
		{ID: "M3", Method: "direct fp64 all cores (fake)", Precision: engine.FP64, Run: fixed(9*time.Millisecond, false)},
		{ID: "M4", Method: "direct fp32 all cores (fake)", Precision: engine.FP32, Run: fixed(900*time.Microsecond, false)},
		{ID: "M5", Method: "GPU indicators", Precision: engine.FP32, Skip: "no NVIDIA driver found (libcuda.so.1)"},
		{ID: "M6", Method: "fused GPU fp32 (fake)", Precision: engine.FP32, Run: fixed(9*time.Microsecond, false)},
	}
}

func TestBench(t *testing.T) {
	t.Run("the ladder and its chart", func(t *testing.T) {
		cfg := Config{Registry: testRegistry(), Flags: smallFlags(), Rungs: fakeRungs, BenchRepeat: 1}
		d := newStoreDriver(t, cfg, 80, 24)
		m := d.m
		d.global("B")
		if m.screen != common.BenchScreen || !strings.Contains(m.View(), "enter runs the ladder") {
			t.Fatalf("bench screen:\n%s", m.View())
		}
		d.key("enter")
		res := m.bench.Ladder().Results()
		if len(res) != 7 || m.bench.Running() {
			t.Fatalf("%d rungs (err %q)", len(res), m.status.LastErr)
		}
		want := map[string]string{"M0": "pass", "M1": "collapse", "M2": "ref", "M3": "pass", "M4": "pass", "M5": "skip", "M6": "pass"}
		for i := range res {
			if got := verdictOf(res, i); got != want[res[i].ID] {
				t.Fatalf("%s: verdict %q, want %q", res[i].ID, got, want[res[i].ID])
			}
		}
		if r := res[6]; r.SpeedupVsM0 < 999_999 || r.SpeedupVsM0 > 1_000_001 {
			t.Fatalf("M6 speedup over M0 %v", r.SpeedupVsM0)
		}
		d.key("esc")
		if m.screen != common.SetupScreen {
			t.Fatalf("esc went to screen %d", m.screen)
		}
	})
	t.Run("live and esc cancels", func(t *testing.T) {
		release := make(chan struct{})
		var started atomic.Int32
		slow := func() []enginebench.Rung {
			return []enginebench.Rung{
				{ID: "M2", Method: "fast", Precision: engine.FP64, Run: engine.RungBackend(reference.New(), engine.Direct, 1)},
				{ID: "M3", Method: "blocks until cancelled", Precision: engine.FP64,
					Run: func(ctx context.Context, job *engine.Job) (*engine.Run, time.Duration, error) {
						started.Add(1)
						select {
						case <-ctx.Done():
							return nil, 0, ctx.Err()
						case <-release:
							return nil, 0, errors.New("released")
						}
					}},
			}
		}
		defer close(release)
		cfg := Config{Registry: testRegistry(), Flags: smallFlags(), Rungs: slow, BenchRepeat: 1}
		tm := teatest.NewTestModel(t, newModel(context.Background(), cfg, termenv.Ascii, true, true), teatest.WithInitialTermSize(80, 24))
		waitOutput(t, tm, "5,000 bars")
		tm.Send(keyMsg("esc")) // out of the focused range: B is a key again
		tm.Send(keyMsg("B"))
		tm.Send(keyMsg("enter"))
		waitOutput(t, tm, "running")
		waitFor(t, "M3 to start", func() bool { return started.Load() > 0 })
		tm.Send(keyMsg("esc"))
		waitOutput(t, tm, "cancelled")
		tm.Send(keyMsg("q"))
		m := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
		res := m.bench.Ladder().Results()
		if len(res) != 2 || res[0].Err != "" || res[1].Err == "" {
			t.Fatalf("results after cancel: %+v", res)
		}
	})
}

// verdictOf is the parity column as the bench pane shows it.
func verdictOf(res []enginebench.RungResult, i int) string {
	return bench.Verdict(res, i)
}

// TestCancelledSession: session 3 was cancelled during its fp64 lane, so
// it has no fp32 run at all. Opened, its panes say so instead of showing
// recomputed fp32 numbers, and the cancel reads as a note that goes with
// the screen.
func TestCancelledSession(t *testing.T) {
	st := tempStore(t)
	seedStore(t, st)
	d := newStoreDriver(t, storeConfig(smallFlags(), st), 80, 24)
	m := d.m
	d.global("S")
	m.sessions.List().Select(3)
	if v := m.View(); strings.Contains(v, "context canceled") || !strings.Contains(v, "cancelled by the user") {
		t.Fatalf("the sessions detail:\n%s", v)
	}
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen || m.state.Results == nil || m.state.Results.R32 != nil {
		t.Fatalf("screen %d (err %q)", m.screen, m.status.LastErr)
	}
	if m.status.LastErr != "" || m.status.Warn != "" || !strings.Contains(m.status.Info, "session 3: cancelled by the user") {
		t.Fatalf("status: error %q, warning %q, info %q", m.status.LastErr, m.status.Warn, m.status.Info)
	}
	if in := m.state.Inspect; in == nil || in.D32 != nil || in.D64 == nil {
		t.Fatalf("inspection: %+v", in)
	}
	const want = "fp32 not computed (run cancelled)"
	m.results.SetFocus(results.ComboPane)
	if v := m.View(); !strings.Contains(v, want) || strings.Contains(v, "fp32: return") {
		t.Fatalf("the Combo pane:\n%s", v)
	}
	m.results.SetFocus(results.CrossoverPane)
	if v := m.View(); !strings.Contains(v, want+": no flips to compare") {
		t.Fatalf("the Crossover pane:\n%s", v)
	}
	m.results.SetFocus(results.ParityPane)
	if v := m.View(); !strings.Contains(v, "fp32 lane never ran") || strings.Contains(v, "precision both") {
		t.Fatalf("the Parity pane:\n%s", v)
	}
	if v := m.View(); strings.Contains(v, "context canceled") || strings.Contains(v, "warning:") {
		t.Fatalf("the footer:\n%s", v)
	}
	d.global("B")
	if m.status.Info != "" || strings.Contains(m.View(), "cancelled by the user") {
		t.Fatalf("the note followed to the bench: %q", m.status.Info)
	}
}
