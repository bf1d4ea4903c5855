package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/sessions"
	"sweepbench/sessions/sessionstest"
	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

// seedSuite saves a suite of three datasets as `run --data A --data B
// --data C` saves one (each dataset's study a session whose Spec.Suite is
// "ID D/3"): sessions 1, 2, 3 are datasets 1, 2, 3. It returns the
// suite's id and each dataset's report.
func seedSuite(t *testing.T, st *sessions.Store) (string, []*engine.Report) {
	t.Helper()
	ctx := context.Background()
	csv, err := filepath.Abs("../testdata/data/binance_archive_FILUSDT-1m-2023-08_head.csv")
	if err != nil {
		t.Fatal(err)
	}
	datasets := []string{"embedded:btcusdt-1m", "embedded:filusdt-1m", csv}
	spec := smallFlags().Spec
	spec.Head = 2000
	id := suite.SuiteID(spec, datasets)
	var reps []*engine.Report
	for d, path := range datasets {
		sp := spec
		sp.Data, sp.Suite = path, suite.SuiteRef{ID: id, D: d + 1, N: len(datasets)}.String()
		s, err := sp.Build(testRegistry())
		if err != nil {
			t.Fatal(err)
		}
		rep, _, err := sessions.RunStudy(ctx, st, s, engine.StudyOptions{}, sessions.RecordOptions{}) // saved as run saves
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	return id, reps
}

// TestSuiteDatasets: a session of a suite opened from the browser says
// which dataset it is; ] and [ open the next and the previous dataset's
// session with the combo, the metric and the pane kept, and the panes show
// that dataset's values; a shows the aggregate over the datasets (checked
// against a computation of its own); a dataset removed from the store is
// said and skipped, and the aggregate is over the others.
func TestSuiteDatasets(t *testing.T) {
	st := tempStore(t)
	id, reps := seedSuite(t, st)
	d := newStoreDriver(t, storeConfig(smallFlags(), st), 160, 48)
	m := d.m
	d.global("S")
	if v := m.View(); !strings.Contains(v, "suite") || !strings.Contains(v, "3/3 "+id) || !strings.Contains(v, "dataset 3 of 3 of suite "+id) {
		t.Fatalf("the browser does not show the suite:\n%s", v)
	}
	d.key("down", "enter") // session 2: dataset 2
	if ref, ok := m.results.InSuite(); !ok || ref.D != 2 || ref.N != 3 || ref.ID != id || m.screen != common.ResultsScreen {
		t.Fatalf("in suite %+v %v, screen %v (err %q)", ref, ok, m.screen, m.status.LastErr)
	}
	if v := m.View(); !strings.Contains(v, "dataset 2/3: filusdt-1m") {
		t.Fatalf("the results do not say which dataset:\n%s", v)
	}

	// A combo, a metric and a pane of its own, then the next dataset.
	d.send(common.SelectMsg{Index: 5})
	d.key("m", "m", "tab", "tab") // sortino? whichever: two metrics on; the heatmap
	metric, focus := m.state.Metric, m.results.Focus()
	if metric == "sharpe" || focus != results.HeatmapPane {
		t.Fatalf("metric %s, focus %v", metric, focus)
	}
	d.key("]")
	d.settle()
	if m.status.Saved != "session 3" || m.state.Selected != 5 || m.state.Metric != metric || m.results.Focus() != focus {
		t.Fatalf("after ]: %s, combo %d, metric %s, focus %v (err %q)", m.status.Saved, m.state.Selected, m.state.Metric, m.results.Focus(), m.status.LastErr)
	}
	want := reps[2].Run(engine.FP64).Lookup(5)
	got, _ := m.state.Results.Value(5, metric, engine.FP64)
	wv, _ := want.Metrics.Value(metric)
	c := m.state.Results.Grid.At(5)
	if got != wv {
		t.Fatalf("dataset 3's %s of combo 5: shown %v, saved %v", metric, got, wv)
	}
	if v := m.View(); !strings.Contains(v, fmt.Sprintf("hma %d x hma3 %d: %s %s", c.HMA, c.HMA3, metric, common.Value(metric, wv))) ||
		!strings.Contains(v, "dataset 3/3: binance_archive_FILUSDT") {
		t.Fatalf("the heatmap does not show dataset 3's value %s:\n%s", common.Value(metric, wv), v)
	}
	d.key("]")
	if !strings.Contains(m.status.Info, "dataset 3/3 is the last of suite "+id) || m.status.LastErr != "" {
		t.Fatalf("] on the last dataset: note %q, error %q", m.status.Info, m.status.LastErr)
	}

	// All datasets, opened with a combo selected below the top of its list.
	ref, _ := m.results.InSuite()
	su, err := st.SuiteOf(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := st.Aggregate(context.Background(), su)
	if err != nil {
		t.Fatal(err)
	}
	low := pre.Top(len(pre.Median))[3]
	d.send(common.SelectMsg{Index: low})
	d.key("a")
	if !m.results.AllDatasets() || m.state.Metric != common.ColMedian {
		t.Fatalf("a: all %v, metric %s", m.results.AllDatasets(), m.state.Metric)
	}
	g := m.results.Aggregate().Aggregate()
	sessionstest.CheckAggregate(t, g, reps, []int{0, 1, 2})
	best := m.results.Aggregate().Order()[0]
	v := m.View()
	bc := g.Grid.At(best)
	if !strings.Contains(v, "All 3 datasets: best median sharpe first") || !strings.Contains(v, "median sharpe over 3 datasets") ||
		!strings.Contains(v, fmt.Sprintf("%d/3", g.Profitable[best])) {
		t.Fatalf("the all datasets view:\n%s", v)
	}
	// Opened with the fourth combo selected: the list still shows from
	// its first row (the best median).
	if m.state.Selected != low || best == low {
		t.Fatalf("selected %d, want %d (the best: %d)", m.state.Selected, low, best)
	}
	if !regexp.MustCompile(fmt.Sprintf(`\b%d\s+%d\s+-?\d`, bc.HMA, bc.HMA3)).MatchString(v) {
		t.Fatalf("the list hides its first row (hma %d x hma3 %d):\n%s", bc.HMA, bc.HMA3, v)
	}
	d.key("b")
	if m.state.Selected != best || !strings.Contains(m.View(), fmt.Sprintf("hma %d x hma3 %d: median sharpe %s", bc.HMA, bc.HMA3, common.Value("sharpe", g.Median[best]))) {
		t.Fatalf("b selects %d, want the best median %d:\n%s", m.state.Selected, best, m.View())
	}
	d.key("a")
	if m.results.AllDatasets() || m.state.Metric != metric {
		t.Fatalf("a again: all %v, metric %s (want %s)", m.results.AllDatasets(), m.state.Metric, metric)
	}

	// Dataset 1 removed: said, skipped, left out of the aggregate.
	if err := st.Delete(context.Background(), 1, false); err != nil {
		t.Fatal(err)
	}
	d.key("[")
	if m.status.Saved != "session 2" {
		t.Fatalf("[ from dataset 3: %s (err %q)", m.status.Saved, m.status.LastErr)
	}
	if v := m.View(); !strings.Contains(v, "dataset 1/3 is not in the store (removed?)") {
		t.Fatalf("the removed dataset is not said:\n%s", v)
	}
	d.key("[")
	if !strings.Contains(m.status.LastErr, "no earlier dataset of suite "+id+" in the store: 1/3 not there") {
		t.Fatalf("[ past a removed dataset: %q", m.status.LastErr)
	}
	d.key("a")
	sessionstest.CheckAggregate(t, m.results.Aggregate().Aggregate(), reps, []int{1, 2})
	if v := m.View(); !strings.Contains(v, "the figures are over the 2") || !strings.Contains(v, "all datasets of the suite: 2 of 3 in the store") ||
		!strings.Contains(v, "All 2 datasets: best median sharpe first") {
		t.Fatalf("the aggregate does not say it is over 2 datasets:\n%s", v)
	}
}

// TestNotASuite: on a study of one dataset [ ] and a say why they do
// nothing, and the results have no dataset line.
func TestNotASuite(t *testing.T) {
	st := tempStore(t)
	seedStore(t, st)
	d := newStoreDriver(t, storeConfig(smallFlags(), st), 80, 24)
	m := d.m
	d.global("S")
	d.key("down", "down", "enter") // session 1, complete
	if m.screen != common.ResultsScreen || m.status.Saved != "session 1" {
		t.Fatalf("screen %v, %s (err %q)", m.screen, m.status.Saved, m.status.LastErr)
	}
	if _, ok := m.results.InSuite(); ok || strings.Contains(m.View(), "dataset 1/") {
		t.Fatal("a study of one dataset reads as one of a suite")
	}
	for _, k := range []string{"]", "[", "a"} {
		d.key(k)
		if !strings.Contains(m.status.LastErr, "not one dataset of a suite") || m.results.AllDatasets() {
			t.Fatalf("%s: %q", k, m.status.LastErr)
		}
	}
}

// TestSuiteSmall: at 80x24 the all-datasets view shows its list or its
// heatmap, named in the tab bar, tab switching them.
func TestSuiteSmall(t *testing.T) {
	st := tempStore(t)
	seedSuite(t, st)
	d := newStoreDriver(t, storeConfig(smallFlags(), st), 80, 24)
	m := d.m
	d.global("S")
	d.key("enter", "a") // dataset 3, all datasets
	v := m.View()
	checkSize(t, v, 80, 24)
	if !strings.Contains(v, "[All datasets] Heatmap") || !strings.Contains(v, "median sharpe") {
		t.Fatalf("the all-datasets view at 80x24:\n%s", v)
	}
	d.key("tab")
	if v := m.View(); !strings.Contains(v, "All datasets [Heatmap]") || !strings.Contains(v, "Heatmap: median sharpe over 3 datasets") {
		t.Fatalf("tab to the heatmap:\n%s", v)
	}
	d.key("m")
	if m.state.Metric != common.ColWorst || !strings.Contains(m.View(), "worst (min) sharpe over 3 datasets") {
		t.Fatalf("m in the all-datasets view: %s", m.state.Metric)
	}
	d.key("esc")
	if m.results.AllDatasets() || m.state.Metric != "sharpe" {
		t.Fatalf("esc: all %v, metric %s", m.results.AllDatasets(), m.state.Metric)
	}
}
