package setup

import (
	"regexp"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/tui/components/form"
)

// TestFormBuildsZscoreSpec: the strategy row picks zscore; its rows
// (length, entry, exit) stand where the HMA ranges were, at zscore's
// defaults; a length typed there and the defaults build a zscore Spec
// and a study of length x entry x exit; a bad entry is marked on its
// row with the family's reason; hull again brings its ranges back as
// they were.
func TestFormBuildsZscoreSpec(t *testing.T) {
	s := newScreen(t, 100, 40)
	m := s.m
	s.key("up") // from the first row up: the last, the strategy
	if m.Form().Focused() != form.Strategy {
		t.Fatalf("up from the first row focuses %q, want the strategy row", m.Form().Focused())
	}
	s.key("l", "l") // hull -> cross -> zscore
	v := m.Form().Values()
	if v[form.Strategy] != "zscore" {
		t.Fatalf("the strategy row holds %q, want zscore", v[form.Strategy])
	}
	for k, want := range map[string]string{form.ParamKey("length"): "10:60:5", form.ParamKey("entry"): "1.5:3:0.25", form.ParamKey("exit"): "0:1:0.5"} {
		if v[k] != want {
			t.Errorf("row %s = %q, want zscore's default %q", k, v[k], want)
		}
	}
	if m.Form().Has(form.HMA) || m.Form().Has(form.HMA3) {
		t.Error("zscore's form still has the HMA rows")
	}
	view := m.View()
	for _, l := range []string{"length", "entry", "exit"} {
		if !regexp.MustCompile(`\s` + l + `\s+\S`).MatchString(view) {
			t.Errorf("no %s row in the view:\n%s", l, view)
		}
	}

	s.key("down") // wraps to the first row: length
	if m.Form().Focused() != form.ParamKey("length") {
		t.Fatalf("the first row is %q, want zscore's length", m.Form().Focused())
	}
	s.erase()
	s.key("10:20:5")
	st := m.Submit()
	if st == nil {
		t.Fatalf("the zscore form gives no study: %q\n%s", s.host.St.LastErr, m.View())
	}
	sp := st.Spec
	if sp.Strategy != "zscore" || sp.FastBelowSlow {
		t.Fatalf("spec strategy %q fast-below-slow %v, want zscore, false", sp.Strategy, sp.FastBelowSlow)
	}
	want := map[string]string{"length": "10:20:5", "entry": "1.5:3:0.25", "exit": "0:1:0.5"}
	if len(sp.Params) != len(want) {
		t.Fatalf("spec params %v, want %v", sp.Params, want)
	}
	for k, w := range want {
		if sp.Params[k] != w {
			t.Errorf("spec param %s = %q, want %q", k, sp.Params[k], w)
		}
	}
	// length 10, 15, 20 x entry 1.5 .. 3 by 0.25 (7) x exit 0, 0.5, 1.
	if g := st.Grid; g.Family() != "zscore" || g.Len() != 3*7*3 {
		t.Fatalf("grid %s of %d combos, want zscore's 63", g.Text(), g.Len())
	}
	if got := lines(m.View(), "grid 3 x 7 x 3 = 63 combos"); len(got) != 1 {
		t.Errorf("the grid line of 3 x 7 x 3 is not shown:\n%s", m.View())
	}
	if p := st.Grid.Point(st.Grid.Len() - 1); p[0].Text != "20" || p[1].Text != "3" || p[2].Text != "1" {
		t.Errorf("the last combo is %v, want length 20, entry 3, exit 1", p)
	}

	// A bad entry: its row is marked and named.
	s.key("down")
	if m.Form().Focused() != form.ParamKey("entry") {
		t.Fatalf("below length is %q, want entry", m.Form().Focused())
	}
	s.erase()
	s.key("0:1:0.5")
	view = m.View()
	if m.Form().Valid() {
		t.Fatalf("entry 0:1:0.5 validates:\n%s", view)
	}
	if !regexp.MustCompile(`!\s*entry`).MatchString(view) {
		t.Fatalf("the entry row is not marked:\n%s", view)
	}
	if !strings.Contains(view, "entry 0:1:0.5:") {
		t.Fatalf("the entry's error is not shown by its row:\n%s", view)
	}
	if m.Submit() != nil {
		t.Fatal("a bad entry gave a study")
	}

	// Back to hull: the HMA ranges as the command line gave them.
	s.key("up", "up") // entry -> length -> (wraps) strategy
	if m.Form().Focused() != form.Strategy {
		t.Fatalf("focused %q, want the strategy row", m.Form().Focused())
	}
	s.key("h", "h")
	v = m.Form().Values()
	if v[form.Strategy] != engine.FamilyHull || v[form.HMA] != "10:30:10" || v[form.HMA3] != "12:36:12" {
		t.Fatalf("back to hull: %v", v)
	}
	if st := m.Submit(); st == nil || st.Spec.Strategy != "" || st.Spec.Params != nil || st.Grid.Len() != 9 {
		t.Fatalf("the hull form again: %+v", st)
	}
	// And zscore again finds what was typed in its rows.
	s.key("l", "l")
	if v := m.Form().Values(); v[form.ParamKey("length")] != "10:20:5" || v[form.ParamKey("entry")] != "0:1:0.5" {
		t.Fatalf("zscore again: %v", v)
	}
}

// TestFormCrossLegs: cross's rows are its legs as KIND:RANGE text and
// the fast < slow choice, bound to Params and FastBelowSlow.
func TestFormCrossLegs(t *testing.T) {
	s := newScreen(t, 100, 40)
	m := s.m
	s.key("up", "l") // the strategy row: cross
	s.key("down")    // the fast leg
	if m.Form().Focused() != form.ParamKey("fast") {
		t.Fatalf("focused %q, want the fast leg", m.Form().Focused())
	}
	s.erase()
	s.key("ema:5:15:5", "down")
	s.erase()
	s.key("sma:10:20:10", "down", "l") // fast < slow on
	st := m.Submit()
	if st == nil {
		t.Fatalf("no study: %q\n%s", s.host.St.LastErr, m.View())
	}
	if st.Spec.Strategy != "cross" || st.Spec.Params["fast"] != "ema:5:15:5" || st.Spec.Params["slow"] != "sma:10:20:10" || !st.Spec.FastBelowSlow {
		t.Fatalf("spec %q %v fast-below-slow %v", st.Spec.Strategy, st.Spec.Params, st.Spec.FastBelowSlow)
	}
	// fast 5, 10, 15 x slow 10, 20 with fast < slow: (5,10) (5,20) (10,20) (15,20).
	if n := st.Grid.Len(); n != 4 {
		t.Fatalf("%d combos, want 4", n)
	}
	if got := st.Grid.Label(0); got != "fast ema 5, slow sma 10" {
		t.Errorf("combo 0 is %q", got)
	}
	// A bad kind is the fast row's error.
	s.key("up", "up")
	s.erase()
	s.key("foo:5:15:5")
	if v := m.View(); !regexp.MustCompile(`!\s*fast leg`).MatchString(v) {
		t.Fatalf("the fast row is not marked:\n%s", v)
	}
}
