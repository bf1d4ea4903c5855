package tui

import (
	"strconv"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/strategy"
	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

// TestSignalPaneJudgesDivergencesByTheirRoot: zscore has memory, so SPEC
// Part 2 judges a divergence (a run of bars where fp32's and fp64's
// positions differ) by its root bar's fp64 margin alone. The combo
// length 15, entry 3, exit 1 on btcusdt-1m has a divergence whose root
// is borderline while a later bar's margin is over the tolerance: the
// Signal pane calls it borderline, steps through divergences (not bars),
// and its counts are the parity row's.
func TestSignalPaneJudgesDivergencesByTheirRoot(t *testing.T) {
	f := smallFlags()
	f.Head = 0
	f.Strategy = "zscore"
	f.Params = map[string]string{"length": "15:15:1", "entry": "3:3:1", "exit": "1:1:1"}
	d := newDriver(t, f, 160, 48)
	d.key("enter")
	d.settle()
	r := d.m.state.Results
	if r == nil || !r.Complete() || r.Report.Parity == nil {
		t.Fatalf("the zscore study did not complete with a parity report: %+v", r)
	}
	in := d.m.state.Inspect
	if in == nil || in.Err != nil || in.D64 == nil || in.D32 == nil {
		t.Fatalf("the combo was not recomputed: %+v", in)
	}
	var row *engine.ComboParity
	for k := range r.Report.Parity.Combos {
		if r.Report.Parity.Combos[k].Index == in.Index {
			row = &r.Report.Parity.Combos[k]
		}
	}
	if row == nil || row.Flips == 0 {
		t.Fatalf("the parity report has no flips for combo %d: %+v", in.Index, row)
	}
	tol := r.Report.Parity.Tolerance
	// The divergences as SPEC defines them, recomputed here.
	held := len(in.D64.Pos) - 1
	ds := strategy.Divergences(in.D64.Pos[:held], in.D32.Pos[:held], in.Margin[:held], tol)
	inner := false // some divergence's later bar is over the tolerance while its root is not
	var bars, nb int
	for _, dv := range ds {
		bars += dv.Bars
		if !dv.Borderline {
			nb++
		}
		for b := dv.Root + 1; b < dv.Root+dv.Bars; b++ {
			inner = inner || (dv.Borderline && in.Margin[b] >= tol)
		}
	}
	if !inner {
		t.Fatalf("no divergence with a borderline root and a later bar over %g: %+v", tol, ds)
	}
	if bars != row.Flips || nb != row.NonBorderline {
		t.Fatalf("strategy.Divergences: %d bars, %d non-borderline; the parity row %d, %d", bars, nb, row.Flips, row.NonBorderline)
	}
	cp := d.m.results.Crossover()
	c := cp.Counts()
	if c.Flips != row.Flips || c.NonBorderline != row.NonBorderline || c.MaxMargin != row.MaxFlipMargin || c.Divergences != len(ds) {
		t.Fatalf("the pane counts %+v; the parity row %d flips, %d non-borderline, max margin %g; %d divergences",
			c, row.Flips, row.NonBorderline, row.MaxFlipMargin, len(ds))
	}
	// Step to every divergence: each says borderline (or not) by its root.
	for k := 0; d.m.results.Focus() != results.CrossoverPane && k < 10; k++ {
		d.key("tab")
	}
	for range len(ds) {
		v := d.m.View()
		title := cp.Title()
		var k int
		for i, dv := range ds {
			if strings.Contains(v, "at bar "+common.Thousands(dv.Root)+",") {
				k = i + 1
			}
		}
		if k == 0 || !strings.Contains(title, "divergence ") {
			t.Fatalf("the pane does not show a divergence's root (%q):\n%s", title, v)
		}
		dv := ds[k-1]
		want := "borderline: root margin"
		if !dv.Borderline {
			want = "NON-BORDERLINE: root margin"
		}
		if !strings.Contains(v, want) || (dv.Borderline && strings.Contains(v, "NON-BORDERLINE")) {
			t.Fatalf("divergence at bar %d (root margin %g, borderline %v): the pane does not say %q:\n%s", dv.Root, dv.Margin, dv.Borderline, want, v)
		}
		if !strings.Contains(v, common.Plural(dv.Bars, "bar")) {
			t.Errorf("divergence at bar %d: the pane does not give its length %d bars", dv.Root, dv.Bars)
		}
		d.key("n")
	}
	v := d.m.View()
	summary := common.Plural(row.Flips, "flip bar") + " in " + common.Plural(len(ds), "divergence") + ", " + strconv.Itoa(row.NonBorderline) + " non-borderline"
	if !strings.Contains(v, summary) {
		t.Errorf("the pane does not say %q:\n%s", summary, v)
	}
}
