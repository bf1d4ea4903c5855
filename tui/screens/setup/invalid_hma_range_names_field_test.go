package setup

import (
	"regexp"
	"strings"
	"testing"

	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

// TestInvalidHMARangeNamesField: an empty HMA range typed into the form
// is marked on its row (!), the engine's error naming the parameter and
// the range is shown, the form is invalid and the grid line goes; enter
// then runs nothing and puts the error on the status line; fixing the
// range brings the grid back and clears that error.
func TestInvalidHMARangeNamesField(t *testing.T) {
	s := newScreen(t, 80, 30)
	m := s.m
	if m.Form().Focused() != form.HMA {
		t.Fatalf("the form starts on %q, want the HMA range", m.Form().Focused())
	}
	s.erase()
	s.key("10:5:1")
	v := m.View()
	if m.Form().Valid() {
		t.Fatalf("hma 10:5:1 validates:\n%s", v)
	}
	if !strings.Contains(v, "HMA range 10:5:1: empty range (stop 5 < start 10;") {
		t.Fatalf("the range's error is not shown with its parameter:\n%s", v)
	}
	if !regexp.MustCompile(`!\s*HMA range`).MatchString(v) {
		t.Fatalf("the HMA row is not marked:\n%s", v)
	}
	if got := lines(v, "grid "); len(got) != 0 {
		t.Errorf("an invalid form still shows a grid: %q", got)
	}

	if st := m.Submit(); st != nil {
		t.Fatal("an invalid form gave a study to run")
	}
	if e := s.host.St.LastErr; !strings.Contains(e, "HMA range 10:5:1: empty range") {
		t.Fatalf("the status line says %q, want the HMA range's error", e)
	}

	s.erase()
	s.key("10:40:10")
	v = m.View()
	if !m.Form().Valid() || s.host.St.LastErr != "" {
		t.Fatalf("hma 10:40:10: valid %v, status %q:\n%s", m.Form().Valid(), s.host.St.LastErr, v)
	}
	if got := lines(v, "grid 4 x 3 = 12 combos x 2 precisions on 2,000 bars"); len(got) != 1 {
		t.Fatalf("the grid line of hma 10:40:10 x hma3 12:36:12 is not shown:\n%s", v)
	}
	for _, in := range s.host.Intents {
		if _, ok := in.(common.RunMsg); ok {
			t.Fatal("the form asked for a run")
		}
	}
}
