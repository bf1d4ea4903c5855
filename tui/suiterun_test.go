package tui

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/reference"
	"sweepbench/sessions"
	"sweepbench/sessions/sessionstest"
	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

// typeData puts text in the form's data field as a user types it: down
// to the field (the form has the keys once the dataset loaded), the
// old value erased, text typed.
func typeData(t *testing.T, d *driver, text string) {
	t.Helper()
	f := d.m.setup.Form()
	for range 40 {
		if f.Focused() == form.Data {
			break
		}
		d.key("down")
	}
	if f.Focused() != form.Data {
		t.Fatalf("the form's data field is not reached (focused %q)", f.Focused())
	}
	for range len(f.Values()[form.Data]) + 1 {
		d.key("backspace")
	}
	d.key(text)
	if got := f.Values()[form.Data]; got != text {
		t.Fatalf("data field %q, typed %q", got, text)
	}
}

// TestSuiteRunFromTheForm: two datasets typed into the form's data field
// run as a suite, as `run --data A --data B` runs one: two sessions
// labelled with suite.SuiteID's id (the CLI's: TestSuiteLabelsAsTheWorkbench
// checks the CLI gives the same for this spec), each dataset's results
// those of its own study run on its own (the CLI's path: each dataset's
// spec, Suite set, built and run by the engine), and the results open on
// the last dataset with the suite's line, [ and ] stepping between them.
func TestSuiteRunFromTheForm(t *testing.T) {
	ctx := context.Background()
	st := tempStore(t)
	f := smallFlags()
	d := newStoreDriver(t, storeConfig(f, st), 160, 48)
	m := d.m
	datasets := []string{"embedded:filusdt-1m", "embedded:btcusdt-1m"}
	typeData(t, d, strings.Join(datasets, ", "))
	if v := m.View(); !strings.Contains(v, "2 datasets, a suite") {
		t.Fatalf("the form does not say 2 datasets:\n%s", v)
	}
	d.key("enter")
	if m.screen != common.ResultsScreen || m.run.Running() {
		t.Fatalf("screen %v, running %v (err %q, warn %q)", m.screen, m.run.Running(), m.status.LastErr, m.status.Warn)
	}

	// The Spec `run` builds from the same flags: its --objective is
	// "sharpe" by default, as the form's field (cmd_suiterun_test.go's
	// TestSuiteLabelsAsTheWorkbench runs the CLI and checks this id).
	cliSpec := f.Spec
	cliSpec.Objective = "sharpe"
	id := suite.SuiteID(cliSpec, datasets)
	list, err := st.List(ctx, sessions.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%d sessions saved, want 2", len(list))
	}
	if !strings.Contains(m.status.Saved, "suite "+id+": sessions ") {
		t.Fatalf("saved %q, want the suite %s", m.status.Saved, id)
	}
	// Each dataset's study on its own, as the CLI builds and runs it.
	sessionstest.CheckSuiteSessions(t, ctx, st, list, f.Spec, datasets, id, testRegistry())

	// The results: the last dataset, the suite's line; [ and ] step.
	if ref, ok := m.results.InSuite(); !ok || ref.ID != id || ref.D != 2 || ref.N != 2 {
		t.Fatalf("results in suite %+v %v", ref, ok)
	}
	if v := m.View(); !strings.Contains(v, "dataset 2/2: btcusdt-1m") {
		t.Fatalf("the results do not say dataset 2/2:\n%s", v)
	}
	d.key("[")
	if v := m.View(); !strings.Contains(v, "dataset 1/2: filusdt-1m") {
		t.Fatalf("[ does not open dataset 1/2 (err %q):\n%s", m.status.LastErr, v)
	}
	d.key("]")
	if ref, _ := m.results.InSuite(); ref.D != 2 || !strings.Contains(m.View(), "dataset 2/2: btcusdt-1m") {
		t.Fatalf("] does not open dataset 2/2 (err %q)", m.status.LastErr)
	}
	d.key("a")
	if !m.results.AllDatasets() || !strings.Contains(m.View(), "over 2 datasets") {
		t.Fatalf("a does not show the suite's aggregate (err %q):\n%s", m.status.LastErr, m.View())
	}

	// r runs dataset 2's study again: a study of its own, in no suite
	// (saved into the suite's run it stood in for that run's session, the
	// first left unreachable: fresh-user trial).
	d.key("a", "r")
	d.settle()
	if ss, err := st.Get(ctx, 3); err != nil || ss.Spec.Suite != "" || ss.Spec.Data != datasets[1] {
		t.Fatalf("the rerun's session: %+v (%v), want no suite", ss, err)
	}
	if _, ok := m.results.InSuite(); ok {
		t.Fatal("the rerun's results read as a suite's")
	}

	// e edits dataset 2's study: run from the form, it is a study of its
	// own, in no suite.
	d.key("e")
	if got := m.setup.Form().Values()[form.Data]; got != datasets[1] {
		t.Fatalf("e: data field %q, want %q", got, datasets[1])
	}
	d.key("enter")
	ss, err := st.Get(ctx, 4)
	if err != nil || ss.Spec.Suite != "" || ss.Spec.Data != datasets[1] {
		t.Fatalf("the edited study's session: %+v (%v), want no suite", ss, err)
	}
	if _, ok := m.results.InSuite(); ok {
		t.Fatal("the edited study's results read as a suite's")
	}
}

// TestSuiteFormErrors: the data field's errors are ExpandDatasets' (a
// dataset given twice), on its row, and nothing runs; without a sessions
// database a suite is refused with the reason.
func TestSuiteFormErrors(t *testing.T) {
	d := newStoreDriver(t, Config{Registry: testRegistry(), Flags: smallFlags(), NoSave: true}, 160, 48)
	m := d.m
	typeData(t, d, "embedded:btcusdt-1m embedded:btcusdt-1m")
	if v := m.View(); !strings.Contains(v, "embedded:btcusdt-1m is given twice") {
		t.Fatalf("the form does not say the dataset is given twice:\n%s", v)
	}
	d.key("enter")
	if m.run.Started() != 0 || !strings.Contains(m.status.LastErr, "given twice") {
		t.Fatalf("started %d, err %q", m.run.Started(), m.status.LastErr)
	}
	typeData(t, d, "embedded:btcusdt-1m,embedded:filusdt-1m")
	d.key("enter")
	if m.run.Started() != 0 || !strings.Contains(m.status.LastErr, "a suite (several datasets) needs the sessions database") {
		t.Fatalf("started %d, err %q", m.run.Started(), m.status.LastErr)
	}
	// One dataset that does not load (a missing file, a pattern that
	// matches nothing, an embedded name mistyped): the field says why and
	// enter runs nothing (it ran the dataset loaded before: fresh-user
	// trial).
	typeData(t, d, "embedded:filusdt-1m")
	d.settle()
	for _, bad := range []string{filepath.Join(t.TempDir(), "nosuch.csv"), filepath.Join(t.TempDir(), "*.nomatch"), "embedded:filusdt-1mx"} {
		typeData(t, d, bad)
		d.settle()
		v := m.View()
		d.key("enter")
		if m.run.Started() != 0 || !strings.Contains(m.status.LastErr, "data") || !strings.Contains(v, "!") {
			t.Fatalf("%s: started %d, err %q:\n%s", bad, m.run.Started(), m.status.LastErr, v)
		}
	}
	typeData(t, d, "embedded:filusdt-1m")
	d.settle()
	if _, perField, general := m.setup.Build(); len(perField) > 0 || general != nil {
		t.Fatalf("a dataset that loads: %v %v", perField, general)
	}
}

// blockOn is the reference backend that holds the lanes of a dataset
// whose first close is above 1,000 (BTC/USDT, not FIL/USDT) until the
// sweep is cancelled, closing entered when it starts holding.
type blockOn struct {
	engine.Backend
	entered chan struct{}
	once    *sync.Once
}

func (blockOn) Name() string { return "blockon" }

func (b blockOn) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	k, err := b.Backend.Prepare(ctx, job)
	if err != nil || job.Bars.Close[0] < 1000 {
		return k, err
	}
	return &blockKernel{Kernel: k, b: b}, nil
}

type blockKernel struct {
	engine.Kernel
	b blockOn
}

func (k *blockKernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	k.b.once.Do(func() { close(k.b.entered) })
	<-ctx.Done()
	return ctx.Err()
}

// TestSuiteRunCancel: the run screen names the dataset computing and the
// suite's progress; esc stops the suite there, the dataset that
// completed saved whole and the one cancelled saved as far as it got
// (resumable), and the results open on the completed one with the
// suite's line.
func TestSuiteRunCancel(t *testing.T) {
	ctx := context.Background()
	st := tempStore(t)
	reg := testRegistry()
	b := blockOn{Backend: reference.New(), entered: make(chan struct{}), once: &sync.Once{}}
	reg.Register(b)
	f := smallFlags()
	f.Backend = "blockon"
	cfg := storeConfig(f, st)
	cfg.Registry = reg
	d := newStoreDriver(t, cfg, 120, 40)
	m := d.m
	datasets := []string{"embedded:filusdt-1m", "embedded:btcusdt-1m"}
	typeData(t, d, strings.Join(datasets, " "))
	d.hold = true
	d.key("enter")
	if m.screen != common.RunScreen || d.pending == nil {
		t.Fatalf("screen %v: the suite did not start (err %q)", m.screen, m.status.LastErr)
	}
	select {
	case <-b.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("dataset 2 never started")
	}
	if v := m.View(); !strings.Contains(v, "dataset 2 of 2: embedded:btcusdt-1m") || !strings.Contains(v, "50% of the 2 datasets") {
		t.Fatalf("the run screen does not say dataset 2 of 2 at 50%%:\n%s", v)
	}
	// The events that follow, up to dataset 2's mark (sent before its
	// lanes started): the lanes turn to dataset 2's there, and none of
	// dataset 1's events (queued before the mark) moves them after it.
	for range 1000 {
		if strings.Contains(m.View(), "embedded:btcusdt-1m[:5000] on blockon") || d.pending == nil {
			break
		}
		c := d.pending
		d.pending = nil
		d.run(c)
	}
	if v := m.View(); !strings.Contains(v, "embedded:btcusdt-1m[:5000] on blockon") || !strings.Contains(v, "0/9") || !strings.Contains(v, "50% of the 2 datasets") {
		t.Fatalf("the lanes are not dataset 2's:\n%s", v)
	}
	d.key("esc")
	d.drain()
	if m.screen != common.ResultsScreen {
		t.Fatalf("screen %v after the cancel (err %q)", m.screen, m.status.LastErr)
	}
	if !strings.Contains(m.status.Info, "cancelled on dataset 2 of 2 (embedded:btcusdt-1m): 1 complete") {
		t.Fatalf("info %q", m.status.Info)
	}
	// The saved line names the cancelled dataset's session too (it named
	// the complete ones only: fresh-user trial).
	if !strings.Contains(m.status.Saved, ": session 1 (session 2 saved as far as it got: R in the sessions browser resumes it)") {
		t.Fatalf("saved %q", m.status.Saved)
	}
	list, err := st.List(ctx, sessions.ListOptions{})
	if err != nil || len(list) != 2 {
		t.Fatalf("%d sessions (%v), want 2", len(list), err)
	}
	for _, ss := range list {
		ref, _, _ := suite.ParseSuiteRef(ss.Spec.Suite)
		complete := ss.Status == engine.StatusComplete
		if ref.N != 2 || complete != (ref.D == 1) {
			t.Fatalf("session %d: suite %q, status %v", ss.ID, ss.Spec.Suite, ss.Status)
		}
	}
	if ref, ok := m.results.InSuite(); !ok || ref.D != 1 || !strings.Contains(m.View(), "dataset 1/2: filusdt-1m") {
		t.Fatalf("results in suite %+v %v:\n%s", ref, ok, m.View())
	}
}

// TestSuiteQueued: a suite asked for while a study computes is queued as
// a study is, and runs when that one ends.
func TestSuiteQueued(t *testing.T) {
	st := tempStore(t)
	reg := testRegistry()
	b := blockOn{Backend: reference.New(), entered: make(chan struct{}), once: &sync.Once{}}
	reg.Register(b)
	f := smallFlags() // BTC/USDT: held until cancelled
	f.Backend, f.Head = "blockon", 2000
	cfg := storeConfig(f, st)
	cfg.Registry = reg
	d := newStoreDriver(t, cfg, 120, 40)
	m := d.m
	d.hold = true
	d.key("enter")
	if !m.run.Running() {
		t.Fatalf("the study did not start (err %q)", m.status.LastErr)
	}
	d.key("e")
	csv, err := filepath.Abs("../testdata/data/binance_archive_FILUSDT-1m-2023-08_head.csv")
	if err != nil {
		t.Fatal(err)
	}
	typeData(t, d, "embedded:filusdt-1m,"+csv)
	d.key("enter")
	if m.run.Queued() == nil || !strings.Contains(m.status.Info, "queued: a suite of 2 datasets") {
		t.Fatalf("queued %v, info %q (err %q)", m.run.Queued() != nil, m.status.Info, m.status.LastErr)
	}
	d.key("esc") // the form: back to the running study
	d.key("esc") // cancel it
	d.drain()
	if m.run.Running() || m.screen != common.ResultsScreen {
		t.Fatalf("running %v, screen %v (err %q)", m.run.Running(), m.screen, m.status.LastErr)
	}
	if ref, ok := m.results.InSuite(); !ok || ref.D != 2 || ref.N != 2 || !strings.Contains(m.View(), "dataset 2/2: binance_archive_FILUSDT") {
		t.Fatalf("results in suite %+v %v (err %q)", ref, ok, m.status.LastErr)
	}
	list, err := st.List(context.Background(), sessions.ListOptions{})
	if err != nil || len(list) != 3 {
		t.Fatalf("%d sessions (%v), want the cancelled study's and the suite's 2", len(list), err)
	}
}

// TestSuiteFromTheFlags: `sweepbench tui --data A --data B` fills the
// data field with both, loads the first and says 2 datasets.
func TestSuiteFromTheFlags(t *testing.T) {
	f := smallFlags()
	f.Data, f.Datasets = "embedded:filusdt-1m", []string{"embedded:filusdt-1m", "embedded:btcusdt-1m"}
	d := newStoreDriver(t, storeConfig(f, tempStore(t)), 160, 48)
	m := d.m
	if got := m.setup.Form().Values()[form.Data]; got != "embedded:filusdt-1m, embedded:btcusdt-1m" {
		t.Fatalf("data field %q", got)
	}
	if m.state.Raw == nil || !strings.Contains(m.state.Raw.Info.Name, "filusdt") || !strings.Contains(m.View(), "2 datasets, a suite") {
		t.Fatalf("loaded %v (err %q):\n%s", m.state.Raw != nil, m.status.LastErr, m.View())
	}
}

// TestSuiteEstimate: with several datasets the estimate is for them all,
// the first dataset's time for each.
func TestSuiteEstimate(t *testing.T) {
	m := newModel(context.Background(), storeConfig(smallFlags(), tempStore(t)), termenv.Ascii, true, false)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	typeData(t, d, "embedded:filusdt-1m embedded:btcusdt-1m")
	est := m.setup.Estimate()
	if !regexp.MustCompile(`^estimate ~\S+ for the 2 datasets \(~\S+ each, the first's\) on the CPU reference, \d+ cores`).MatchString(est) {
		t.Fatalf("estimate %q", est)
	}
}
