package tui

import (
	"strings"
	"testing"

	"sweepbench/engine/robust"
	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

// robustFlags is the small real study with 8 blocks and a rolling:4
// walk-forward (issue 14's workbench part).
func robustFlags() Flags {
	f := smallFlags()
	f.Blocks, f.WF = 8, "rolling:4"
	return f
}

// TestRobustnessFormFields: the form's rows for the window, the blocks,
// the walk-forward, the objective and its constraints are read by the
// CLI's functions (engine.Spec.Parse and Derive, robust.OptionsFor): a bad
// value marks its own row with the engine's reason, all at once, and never
// crashes; good values build the study `run` builds from the same flags.
func TestRobustnessFormFields(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*Flags)
		field string
		why   string
	}{
		{"one block", func(f *Flags) { f.Blocks = 1 }, form.Blocks, "blocks 1: want 0 (none) or 2 to 64 blocks"},
		{"too many blocks", func(f *Flags) { f.Blocks = 65 }, form.Blocks, "blocks 65: want 0 (none) or 2 to 64"},
		{"a walk-forward without blocks", func(f *Flags) { f.Blocks, f.WF = 0, "rolling:4" }, form.WF, "walk-forward rolling:4: the walk-forward runs over blocks"},
		{"rolling without K", func(f *Flags) { f.WF = "rolling" }, form.WF, "rolling needs its in-sample block count"},
		{"K as large as the blocks", func(f *Flags) { f.WF = "rolling:8" }, form.WF, "8 blocks in sample leave none out of sample of the 8 blocks"},
		{"a walk-forward of no kind", func(f *Flags) { f.WF = "weekly" }, form.WF, "want rolling:K or anchored"},
		{"an objective the blocks cannot take", func(f *Flags) { f.Objective = "max_drawdown" }, form.Objective,
			"objective max_drawdown: with blocks, the robustness statistics need a metric they can take over blocks"},
		{"max drawdown above 1", func(f *Flags) { f.MaxDrawdown = 1.5 }, form.MaxDrawdown, "max drawdown 1.5: want a fraction in [0, 1]"},
		{"negative min trades", func(f *Flags) { f.MinTrades = -3 }, form.MinTrades, "min trades -3: want a count >= 0"},
		{"a date of no form", func(f *Flags) { f.From = "2025-13-01" }, form.From, "from 2025-13-01: want a date"},
		{"to before from", func(f *Flags) { f.From, f.To = "2025-06-03", "2025-06-02" }, form.To, "to 2025-06-02: is not after --from"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := robustFlags()
			c.edit(&f)
			d := newDriver(t, f, 120, 40)
			s, perField, general := d.m.setup.Build()
			if s != nil {
				t.Fatal("a study from a form with an error")
			}
			err := perField[c.field]
			if err == nil {
				t.Fatalf("no error on %s (fields %v, general %v)", c.field, perField, general)
			}
			if got := d.m.setup.Form().Describe(err); !strings.Contains(got, c.why) {
				t.Errorf("%s: %q, want %q", c.field, got, c.why)
			}
			if strings.Contains(d.m.status.LastErr, "internal error") {
				t.Fatal(d.m.status.LastErr)
			}
			// The row is marked and the reason is on the form.
			v := d.m.View()
			if !strings.Contains(v, " !") || !strings.Contains(strings.Join(strings.Fields(v), " "), strings.Fields(c.why)[0]) {
				t.Errorf("the form does not show the error:\n%s", v)
			}
		})
	}

	t.Run("typed", func(t *testing.T) {
		d := newDriver(t, smallFlags(), 80, 24)
		m := d.m
		// blocks is the 17th field: down 16 from HMA range; a 1 is refused
		// on its row, 16 is taken; the walk-forward (next) takes letters.
		for range 16 {
			d.key("down")
		}
		d.key("backspace", "1")
		if m.setup.Form().Values()[form.Blocks] != "1" {
			t.Fatalf("blocks %q", m.setup.Form().Values()[form.Blocks])
		}
		if _, perField, _ := m.setup.Build(); perField[form.Blocks] == nil {
			t.Fatal("blocks 1 is not refused")
		}
		if v := m.View(); !strings.Contains(v, "blocks 1: want 0 (none) or 2 to 64") {
			t.Errorf("the form does not say why:\n%s", v)
		}
		d.key("6", "down")
		d.key(strings.Split("anchored", "")...)
		s, perField, general := m.setup.Build()
		if s == nil || s.Blocks != 16 || s.Spec.WF != "anchored" {
			t.Fatalf("study %v from blocks 16, walk-forward anchored: %v %v", s != nil, perField, general)
		}
		if v := m.View(); !strings.Contains(v, "blocks       16") || !strings.Contains(v, "walk-forward anchored") {
			t.Errorf("the rows scrolled into view do not show the values:\n%s", v)
		}
	})

	t.Run("valid", func(t *testing.T) {
		f := robustFlags()
		f.WF, f.Objective, f.MinTrades, f.MaxDrawdown, f.From, f.To = "anchored", "sortino", 100, 0.9, "2025-06-02", "2025-06-04"
		d := newDriver(t, f, 120, 40)
		got, perField, general := d.m.setup.Build()
		if got == nil {
			t.Fatalf("no study: %v %v", perField, general)
		}
		want, err := f.Spec.Build(testRegistry())
		if err != nil {
			t.Fatal(err)
		}
		if got.Blocks != 8 || got.Blocks != want.Blocks || got.Objective != want.Objective || got.Grid != want.Grid ||
			got.Dataset.Bars.Len() != want.Dataset.Bars.Len() || got.Dataset.Bars.Time[0] != want.Dataset.Bars.Time[0] {
			t.Fatalf("form study blocks %d objective %+v, %d bars; run's blocks %d objective %+v, %d bars",
				got.Blocks, got.Objective, got.Dataset.Bars.Len(), want.Blocks, want.Objective, want.Dataset.Bars.Len())
		}
		o, err := robust.OptionsFor(got.Spec)
		if err != nil || o.WF == nil || o.WF.String() != "anchored" || o.Objective.Metric != robust.MetricSortino || o.MinTrades != 100 {
			t.Fatalf("robustness options %+v (%v)", o, err)
		}
		v := d.m.setup.Form().Values()
		if v[form.From] != "2025-06-02" || v[form.To] != "2025-06-04" || v[form.MaxDrawdown] != "0.9" || v[form.Objective] != "sortino" {
			t.Fatalf("form values %v", v)
		}
	})
}

// TestSessionFillsRobustnessFields: a session run with blocks, a
// walk-forward, an objective, a constraint and a window, opened again
// from the browser, fills the form's rows (e) with them (the blocks and
// the walk-forward from its saved summary), and its Robustness pane shows
// the saved section, the stitched curve included.
func TestSessionFillsRobustnessFields(t *testing.T) {
	st := tempStore(t)
	f := robustFlags()
	f.Objective, f.MinTrades, f.From = "sortino", 10, "2025-06-02"
	d := newStoreDriver(t, storeConfig(f, st), 120, 40)
	d.key("enter")
	if d.m.status.Saved != "session 1" || d.m.state.Results.Robust == nil {
		t.Fatalf("saved %q, robustness %v (warning %q)", d.m.status.Saved, d.m.state.Results.Robust != nil, d.m.status.Warn)
	}
	ran := d.m.state.Results.Robust

	d = newStoreDriver(t, storeConfig(smallFlags(), st), 120, 40)
	m := d.m
	d.key("esc", "S", "enter") // out of the focused range, Sessions, open
	d.settle()
	if m.screen != common.ResultsScreen || m.status.Saved != "session 1" || m.state.Results.Robust == nil {
		t.Fatalf("screen %d, saved %q (err %q)", m.screen, m.status.Saved, m.status.LastErr)
	}
	if got := m.state.Results.Robust; len(got.WF.Equity) != len(ran.WF.Equity) || got.WF.Equity[len(got.WF.Equity)-1] != ran.WF.Equity[len(ran.WF.Equity)-1] ||
		got.LogitHistogram == nil {
		t.Fatal("the saved summary lost its curve or histogram")
	}
	d.key("o")
	if txt := words(m.results.Robustness().Lines()); !strings.Contains(txt, "walk-forward rolling:4, 4 folds") || !strings.Contains(txt, "objective max sortino") {
		t.Errorf("the saved section:\n%s", txt)
	}
	d.key("e")
	v := m.setup.Form().Values()
	for k, want := range map[string]string{form.Blocks: "8", form.WF: "rolling:4", form.Objective: "sortino", form.MinTrades: "10",
		form.From: "2025-06-02", form.MaxDrawdown: "0"} {
		if v[k] != want {
			t.Errorf("the form's %s is %q, want %q", k, v[k], want)
		}
	}
}
