package tui

import (
	"strings"
	"testing"

	"sweepbench/engine"

	_ "sweepbench/strategy"
)

// TestStrategyStudyOnTheWorkbench: a zscore study given on the command
// line (--strategy zscore --param ...) shows its rows on the form, runs
// with enter, and its results screen names the combos by their
// parameters: the table's columns length, entry, exit, the heatmap's
// axes and reduction, the status line's grid; never "hma 0".
func TestStrategyStudyOnTheWorkbench(t *testing.T) {
	f := smallFlags()
	f.Head = 2000
	f.Strategy = "zscore"
	f.Params = map[string]string{"length": "10:20:5", "entry": "1.5:2:0.5", "exit": "0:1:0.5"}
	d := newDriver(t, f, 160, 48)
	v := d.m.View()
	for _, s := range []string{"strategy     zscore", "length       10:20:5", "grid 3 x 2 x 3 = 18 combos"} {
		if !strings.Contains(v, s) {
			t.Fatalf("the setup screen does not show %q:\n%s", s, v)
		}
	}
	// The estimate says once that a family's study is not calibrated.
	d.settle()
	v = d.m.View()
	if want := "estimate: - (only hull studies are calibrated, not a zscore grid)"; !strings.Contains(v, want) || strings.Contains(v, "estimate: estimate") {
		t.Errorf("the setup screen does not say %q:\n%s", want, v)
	}
	d.key("enter")
	d.settle()
	r := d.m.state.Results
	if r == nil || !r.Complete() || r.Grid.Family() != "zscore" {
		t.Fatalf("the zscore study did not complete: %+v", r)
	}
	v = d.m.View()
	for _, s := range []string{"length", "entry", "exit", "rows length, cols entry; exit: best", "zscore length 10:20:5 x entry 1.5:2:0.5 x exit 0:1:0.5"} {
		if !strings.Contains(v, s) {
			t.Errorf("the results screen does not show %q", s)
		}
	}
	if strings.Contains(v, "hma 0") || strings.Contains(v, "hma3 0") {
		t.Errorf("the results screen shows hma 0:\n%s", v)
	}
	// The selected combo is recomputed as the sweep computed it: its
	// metrics are the run's, its trades their count; the signal chart
	// and the trade list draw it.
	in := d.m.state.Inspect
	if in == nil || in.Err != nil || in.D64 == nil || in.D32 == nil {
		t.Fatalf("the selected combo was not recomputed: %+v", in)
	}
	for _, p := range []struct {
		d   *engine.ComboDetail
		run *engine.Run
	}{{in.D64, r.R64}, {in.D32, r.R32}} {
		c := p.run.Lookup(in.Index)
		if c == nil || p.d.Metrics != c.Metrics || len(p.d.Trades) != c.Metrics.TotalTrades {
			t.Fatalf("%s: the recomputed combo %d has %+v (%d trades), the run %+v", p.run.Precision, in.Index, p.d.Metrics, len(p.d.Trades), c)
		}
	}
	name := r.Grid.Label(in.Index)
	for _, s := range []string{"Signal", name + ": ", "Combo " + name, "z 10 1  +entry =  -entry =", "position + long - short . flat"} {
		if !strings.Contains(v, s) {
			t.Errorf("the results screen does not show %q:\n%s", s, v)
		}
	}
	if e := d.m.status.LastErr; e != "" {
		t.Errorf("the status line has an error: %q", e)
	}

	// x makes exit the columns; the heatmap says so.
	d.key("x")
	if v := d.m.View(); !strings.Contains(v, "rows length, cols exit; entry: best") {
		t.Errorf("after x the heatmap does not draw length x exit:\n%s", v)
	}
	// The help lists the heatmap's axis keys.
	d.key("?")
	if v := d.m.View(); !strings.Contains(v, "heatmap x axis") || !strings.Contains(v, "best/median/stepped") {
		t.Errorf("the help does not list the heatmap's axis keys:\n%s", v)
	}
	d.key("esc")
	// e edits the study: the form shows zscore's rows with its ranges.
	d.key("e")
	v = d.m.View()
	for _, s := range []string{"strategy     zscore", "length       10:20:5", "entry        1.5:2:0.5", "exit         0:1:0.5"} {
		if !strings.Contains(v, s) {
			t.Fatalf("e: the form does not show %q:\n%s", s, v)
		}
	}
}
