package sessions_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/text"
	"sweepbench/sessions"
	_ "sweepbench/strategy" // engine.NewStrategy: the families' grids
)

// Strategy studies (SPEC Part 2) in the store: saved with their family,
// parameters and restriction, read back as the grid they swept, results
// and parity by combo index, labels from the rebuilt grid.

// strategySpec is a reference-backend study of family on the first 3,000
// embedded BTC/USDT minutes, fp64 and fp32.
func strategySpec(family string, params map[string]string) engine.Spec {
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.Backend = "embedded:btcusdt-1m", 3000, "reference"
	spec.Strategy, spec.Params = family, params
	return spec
}

// saveSpec builds spec, runs it saved in s (sessions.RunStudy, as `run`
// does) and returns the live report and the session's id.
func saveSpec(t *testing.T, s *sessions.Store, reg *engine.Registry, spec engine.Spec) (*engine.Study, *engine.Report, int64) {
	t.Helper()
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	rep, rec, err := sessions.RunStudy(context.Background(), s, st, engine.StudyOptions{},
		sessions.RecordOptions{SaveError: func(e *sessions.SaveError) { t.Errorf("save: %v", e) }})
	if err != nil || rec.ID == 0 {
		t.Fatalf("run: %v (session %d)", err, rec.ID)
	}
	return st, rep, rec.ID
}

// checkStrategyRoundTrip reopens session id of s's file and checks it
// against the live study st and its report live: the Spec, the grid, the
// results by index, the combo at coords (its label want), the parity
// report with its labels.
func checkStrategyRoundTrip(t *testing.T, path string, id int64, st *engine.Study, live *engine.Report, coords []int, want string) {
	t.Helper()
	bg := context.Background()
	s := openStore(t, path) // reopened: nothing from the writer's process
	ss, err := s.Get(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	g := st.Grid
	if ss.Spec.Strategy != g.Family() || !reflect.DeepEqual(ss.Spec.Params, g.Strategy.Texts()) || ss.Spec.FastBelowSlow != g.Strategy.FastBelowSlow() {
		t.Errorf("saved spec: strategy %q params %v fast-below-slow %v, want %s %v %v",
			ss.Spec.Strategy, ss.Spec.Params, ss.Spec.FastBelowSlow, g.Family(), g.Strategy.Texts(), g.Strategy.FastBelowSlow())
	}
	if ss.Spec.HMA != st.Spec.HMA || ss.Spec.HMA3 != st.Spec.HMA3 || ss.Spec.Head != st.Spec.Head || ss.Spec.Data != st.Spec.Data {
		t.Errorf("saved spec %+v, want the run's %+v", ss.Spec, st.Spec)
	}
	if ss.Grid.Strategy == nil || ss.Grid.Family() != g.Family() || ss.Grid.Len() != g.Len() || ss.Grid.Text() != g.Text() {
		t.Fatalf("saved grid %q (%d combos), want %s %q (%d)", ss.Grid.Text(), ss.Grid.Len(), g.Family(), g.Text(), g.Len())
	}
	if got := sessions.GridName(ss.Grid); got != g.Family()+" "+g.Text() {
		t.Errorf("grid name %q", got)
	}
	// Rebuilt (resume, the workbench's edit) to the same grid.
	re, err := sessions.Rebuild(bg, ss, pipelineRegistry(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if re.Grid.Strategy == nil || !reflect.DeepEqual(re.Grid.Strategy.Texts(), g.Strategy.Texts()) || re.Grid.Len() != g.Len() {
		t.Errorf("rebuilt grid %q, want %q", re.Grid.Text(), g.Text())
	}
	if !reflect.DeepEqual(re.Spec.Params, ss.Spec.Params) || re.Spec.Strategy != ss.Spec.Strategy {
		t.Errorf("rebuilt spec %+v, want %+v", re.Spec, ss.Spec)
	}

	got, err := s.Open(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	idx := g.Strategy.IndexOf(coords)
	if idx < 0 {
		t.Fatalf("coords %v: not in the grid", coords)
	}
	if l := got.Grid.Label(idx); l != want {
		t.Errorf("combo %d: label %q, want %q", idx, l, want)
	}
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		lr, gr := live.Run(p), got.Run(p)
		if gr == nil || len(gr.Results) != g.Len() || gr.Status != engine.StatusComplete {
			t.Fatalf("%s: read back %v", p, gr)
		}
		if len(lr.Results) != g.Len() {
			t.Fatalf("%s: the live run has %d results, want %d", p, len(lr.Results), g.Len())
		}
		a, b := lr.Lookup(idx), gr.Lookup(idx)
		if a == nil || b == nil || b.Index != idx || a.Metrics != b.Metrics || b.Combo != (engine.Combo{}) {
			t.Errorf("%s combo %d (%s): read back %+v, live %+v", p, idx, want, b, a)
		}
		if a.TotalTrades <= 0 {
			t.Errorf("%s combo %d: %d trades: a study that trades, please", p, idx, a.TotalTrades)
		}
		if !reflect.DeepEqual(gr.Results, lr.Results) {
			t.Errorf("%s: the results read back differ from the live run's", p)
		}
		rr, err := s.OpenRunReader(bg, id, p)
		if err != nil {
			t.Fatal(err)
		}
		band, err := rr.Range(bg, idx, idx+1)
		if err != nil || len(band) != 1 || band[0].Metrics != a.Metrics {
			t.Errorf("%s: Range(%d, %d) = %v (%v), want the combo", p, idx, idx+1, band, err)
		}
		// The window of the first two axes' cell holds every combo there.
		win, err := rr.Window(bg, coords[0], coords[0]+1, coords[1], coords[1]+1)
		if err != nil {
			t.Fatal(err)
		}
		n := 1
		for _, ax := range g.Strategy.Axes()[2:] {
			n *= len(ax.Values)
		}
		if len(win) != n {
			t.Errorf("%s: window at %v: %d combos, want %d", p, coords[:2], len(win), n)
		}
		for _, r := range win {
			if co := g.Strategy.Coords(r.Index); co[0] != coords[0] || co[1] != coords[1] {
				t.Errorf("%s: window at %v holds combo %d at %v", p, coords[:2], r.Index, co)
			}
		}
	}
	lp, gp := live.Parity, got.Parity
	if lp == nil || gp == nil {
		t.Fatalf("parity: live %v, read back %v", lp, gp)
	}
	if len(gp.Combos) != g.Len() {
		t.Errorf("parity: %d rows, want %d", len(gp.Combos), g.Len())
	}
	for _, c := range gp.Combos {
		if c.Name != g.Label(c.Index) || c.Label() != g.Label(c.Index) {
			t.Errorf("parity row %d: label %q, want %q", c.Index, c.Label(), g.Label(c.Index))
		}
	}
	for _, f := range gp.Flips {
		if f.Label() != g.Label(f.Index) || f.HMA != 0 || f.HMA3 != 0 {
			t.Errorf("flip of combo %d: label %q (hma %d, hma3 %d), want %q", f.Index, f.Label(), f.HMA, f.HMA3, g.Label(f.Index))
		}
	}
	if !reflect.DeepEqual(gp, lp) {
		t.Errorf("parity read back differs from the live one:\n got %+v\nwant %+v", gp, lp)
	}
}

// TestStrategyCrossSaved: a crossover study (fast ema 5:15:5 x slow sma
// 20:40:10, 9 combos) saved and reopened is the live study: its Spec, its
// grid, combo (fast ema 10, slow sma 30)'s metrics, every result, and the
// parity report whose flips are labelled by their combo.
func TestStrategyCrossSaved(t *testing.T) {
	s := openStore(t, "")
	reg := pipelineRegistry()
	st, live, id := saveSpec(t, s, reg, strategySpec("cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}))
	if st.Grid.Len() != 9 {
		t.Fatalf("grid of %d combos, want 9", st.Grid.Len())
	}
	if len(live.Parity.Flips) == 0 {
		t.Fatal("the live parity has no flip to check the label of")
	}
	path := s.Path()
	s.Close()
	checkStrategyRoundTrip(t, path, id, st, live, []int{1, 1}, "fast ema 10, slow sma 30")
}

// TestStrategyZscoreSaved: a z-score study given only its length keeps
// its grid's every parameter (the defaults of entry and exit as they were
// swept), and reads back as the live study.
func TestStrategyZscoreSaved(t *testing.T) {
	s := openStore(t, "")
	reg := pipelineRegistry()
	st, live, id := saveSpec(t, s, reg, strategySpec("zscore", map[string]string{"length": "10:30:10"}))
	if want := map[string]string{"length": "10:30:10", "entry": "1.5:3:0.25", "exit": "0:1:0.5"}; !reflect.DeepEqual(st.Grid.Strategy.Texts(), want) {
		t.Fatalf("grid texts %v, want %v", st.Grid.Strategy.Texts(), want)
	}
	path := s.Path()
	s.Close()
	checkStrategyRoundTrip(t, path, id, st, live, []int{1, 2, 1}, "length 20, entry 2, exit 0.5")
	s = openStore(t, path)
	ss, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if want := (map[string]string{"length": "10:30:10", "entry": "1.5:3:0.25", "exit": "0:1:0.5"}); !reflect.DeepEqual(ss.Spec.Params, want) {
		t.Errorf("saved params %v, want %v", ss.Spec.Params, want)
	}
}

// TestStrategyResume: a cancelled crossover study resumed computes only
// the combos it is missing and ends with the uninterrupted study's
// results and parity; a hull study beside it reads as hull.
func TestStrategyResume(t *testing.T) {
	s := openStore(t, "")
	reg := pipelineRegistry()
	spec := strategySpec("cross", map[string]string{"fast": "ema:5:50:5", "slow": "sma:20:200:10"})
	id := interruptedSession(t, s, reg, spec, 20)
	ss, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	done, total := ss.Done()
	if total != 2*190 || done == 0 || done >= total {
		t.Fatalf("the interrupted study saved %d of %d combos, want some of 380", done, total)
	}
	got := resumeAndCompare(t, s, reg, id, spec)
	if got.Grid.Family() != "cross" || got.Run(engine.FP64).Count() != 190 {
		t.Errorf("resumed: %s grid, %d fp64 results", got.Grid.Family(), got.Run(engine.FP64).Count())
	}

	hull := engine.DefaultSpec()
	hull.Data, hull.Head, hull.Backend, hull.HMA, hull.HMA3 = "embedded:btcusdt-1m", 3000, "reference", "10:30:10", "12:36:12"
	_, _, hid := saveSpec(t, s, reg, hull)
	hs, err := s.Get(context.Background(), hid)
	if err != nil {
		t.Fatal(err)
	}
	if hs.Grid.Strategy != nil || hs.Grid.Family() != "hull" || hs.Spec.Strategy != "" || hs.Spec.Params != nil || hs.Grid.Len() != 9 {
		t.Errorf("a hull session reads as %s %q (spec strategy %q, params %v)", hs.Grid.Family(), hs.Grid.Text(), hs.Spec.Strategy, hs.Spec.Params)
	}
}

// TestStrategyDiff: two crossover studies of one grid differing in their
// fee compare combo by combo, rows labelled by the grid; a crossover
// against a z-score study, or against another crossover grid, is refused
// naming both.
func TestStrategyDiff(t *testing.T) {
	s := openStore(t, "")
	reg := pipelineRegistry()
	cross := map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}
	a := strategySpec("cross", cross)
	a.Precision = "fp64"
	_, ra, ida := saveSpec(t, s, reg, a)
	b := a
	b.Fee = 0.001
	_, rb, idb := saveSpec(t, s, reg, b)
	bg := context.Background()
	d, err := s.Diff(bg, sessions.RunRef{ID: ida}, sessions.RunRef{ID: idb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.MetricsOnly || d.VerdictApplies || len(d.Parity.Combos) != 9 || d.Parity.FlipCount != 0 {
		t.Errorf("diff: metrics only %v (%s), verdict applies %v, %d rows, %d flips", d.MetricsOnly, d.Why, d.VerdictApplies, len(d.Parity.Combos), d.Parity.FlipCount)
	}
	for _, c := range d.Parity.Combos {
		want := 100 * (rb.Runs[0].Lookup(c.Index).TotalReturn - ra.Runs[0].Lookup(c.Index).TotalReturn)
		if c.Label() != d.Grid.Label(c.Index) || c.DPnLpp != want {
			t.Errorf("diff row %d: %q dPnL %v, want %q %v", c.Index, c.Label(), c.DPnLpp, d.Grid.Label(c.Index), want)
		}
	}
	var tbl strings.Builder
	if err := d.WriteTable(&tbl, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"grid    cross fast ema:5:15:5 x slow sma:20:40:10 = 9 combos", "fast_kind  fast  slow_kind  slow  tradesA"} {
		if !strings.Contains(tbl.String(), want) {
			t.Errorf("diff table does not say %q:\n%s", want, tbl.String())
		}
	}
	// fp32 as A: the family recomputes positions against fp64 only, so
	// the saved metrics are compared, rows still labelled.
	both := strategySpec("cross", cross)
	_, _, idf := saveSpec(t, s, reg, both)
	d, err = s.Diff(bg, sessions.RunRef{ID: idf, Precision: engine.FP32, Explicit: true}, sessions.RunRef{ID: ida}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.MetricsOnly || !strings.Contains(d.Why, "recomputed against fp64 only, and A is fp32") || len(d.Parity.Combos) != 9 {
		t.Errorf("diff of an fp32 A: metrics only %v (%q), %d rows", d.MetricsOnly, d.Why, len(d.Parity.Combos))
	}
	for _, c := range d.Parity.Combos {
		if c.Label() != d.Grid.Label(c.Index) {
			t.Errorf("metrics-only diff row %d: %q, want %q", c.Index, c.Label(), d.Grid.Label(c.Index))
		}
	}
	z := strategySpec("zscore", map[string]string{"length": "10:30:10"})
	z.Precision = "fp64"
	_, _, idz := saveSpec(t, s, reg, z)
	if _, err := s.Diff(bg, sessions.RunRef{ID: ida}, sessions.RunRef{ID: idz}, nil); err == nil ||
		!strings.Contains(err.Error(), "different strategy families (cross fast ema:5:15:5 x slow sma:20:40:10; zscore length 10:30:10 x entry 1.5:3:0.25 x exit 0:1:0.5)") {
		t.Errorf("cross vs zscore: %v, want it refused naming both", err)
	}
	c2 := strategySpec("cross", map[string]string{"fast": "ema:5:20:5", "slow": "sma:20:40:10"})
	c2.Precision = "fp64"
	_, _, idc := saveSpec(t, s, reg, c2)
	if _, err := s.Diff(bg, sessions.RunRef{ID: ida}, sessions.RunRef{ID: idc}, nil); err == nil ||
		!strings.Contains(err.Error(), "swept different cross grids (fast ema:5:15:5 x slow sma:20:40:10; fast ema:5:20:5 x slow sma:20:40:10)") {
		t.Errorf("two cross grids: %v, want it refused naming both", err)
	}
}

// TestStrategyDiffSides: a strategy diff whose positions are recomputed
// (both fp64, the fee raised tenfold in B) names the sides A and B in its
// collapse reasons, with the worst combo's returns and trades from the
// saved runs, its figures those of engine.CompareRuns (which names them
// fp64 and fp32); a diff of another price source is of the saved metrics,
// naming the sources and the family, not the HMA.
func TestStrategyDiffSides(t *testing.T) {
	s := openStore(t, "")
	reg := pipelineRegistry()
	bg := context.Background()
	a := strategySpec("cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"})
	a.Precision = "fp64"
	_, ra, ida := saveSpec(t, s, reg, a)
	b := a
	b.Fee = 10 * a.Fee
	_, rb, idb := saveSpec(t, s, reg, b)
	d, err := s.Diff(bg, sessions.RunRef{ID: ida}, sessions.RunRef{ID: idb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := d.Parity
	if d.MetricsOnly || p.Verdict != engine.VerdictCollapse || len(p.Reasons) == 0 {
		t.Fatalf("metrics only %v (%s), verdict %s, reasons %q: want positions recomputed and a collapse", d.MetricsOnly, d.Why, p.Verdict, p.Reasons)
	}
	// The worst |dPnL| recomputed from the two saved runs.
	worst, wv := -1, 0.0
	for _, r := range ra.Runs[0].Results {
		if v := 100 * (rb.Runs[0].Lookup(r.Index).TotalReturn - r.TotalReturn); worst < 0 || math.Abs(v) > math.Abs(wv) {
			worst, wv = r.Index, v
		}
	}
	x, y := ra.Runs[0].Lookup(worst), rb.Runs[0].Lookup(worst)
	trades := text.Thousands(x.TotalTrades) + " trades in both"
	if x.TotalTrades != y.TotalTrades {
		trades = fmt.Sprintf("trades %s A, %s B", text.Thousands(x.TotalTrades), text.Thousands(y.TotalTrades))
	}
	want := fmt.Sprintf("max |dPnL| %s pp > %g pp on (%s): return %.2f%% A, %.2f%% B; %s",
		text.TrimFloat(math.Abs(wv), 4), engine.MaxDPnLpp, d.Grid.Label(worst), 100*x.TotalReturn, 100*y.TotalReturn, trades)
	if p.Reasons[0] != want {
		t.Errorf("reason %q\n  want %q", p.Reasons[0], want)
	}
	for _, r := range p.Reasons {
		if strings.Contains(r, "fp64") || strings.Contains(r, "fp32") {
			t.Errorf("reason %q names fp64 or fp32, not A and B", r)
		}
	}
	// The same figures as CompareRuns', only the sides' names differ.
	ss, err := s.Get(bg, ida)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := sessions.LoadSpec(bg, ss)
	if err != nil {
		t.Fatal(err)
	}
	job := &engine.Job{Bars: &ds.Bars, Grid: d.Grid, Params: ss.Params, Precision: engine.FP64, WMA: engine.Direct}
	plain, err := engine.CompareRuns(bg, job, d.A.Run, d.B.Run, ss.Tolerance, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.TotalTrades64 != p.TotalTrades64 || plain.TotalTrades32 != p.TotalTrades32 || plain.FlipCount != p.FlipCount ||
		plain.CombosDiffering != p.CombosDiffering || plain.MaxAbsDPnLpp != p.MaxAbsDPnLpp || plain.Verdict != p.Verdict ||
		len(plain.Reasons) != len(p.Reasons) || !reflect.DeepEqual(plain.Flips, p.Flips) || plain.Explanation != p.Explanation {
		t.Errorf("CompareRunsSides differs from CompareRuns beyond the names:\n%+v\n%+v", p, plain)
	}
	if !strings.Contains(plain.Reasons[0], "% fp64, ") {
		t.Errorf("CompareRuns' reason %q: want fp64 and fp32", plain.Reasons[0])
	}

	c := a
	c.Source = "hl2"
	_, _, idc := saveSpec(t, s, reg, c)
	d, err = s.Diff(bg, sessions.RunRef{ID: ida}, sessions.RunRef{ID: idc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := "the price sources differ (close -> hl2): the cross study's series are not comparable"; !d.MetricsOnly || d.Why != w || d.Parity.FlipCount != 0 {
		t.Errorf("metrics only %v, why %q, want %q", d.MetricsOnly, d.Why, w)
	}
	if strings.Contains(d.Why, "HMA") {
		t.Errorf("a cross diff's why names the HMA: %q", d.Why)
	}
}
