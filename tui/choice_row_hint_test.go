package tui

import (
	"strings"
	"testing"
)

// TestChoiceRowHint: on a choice row of the form the status line says
// what enter does there (run) and that left/right change the choice, not
// the results' "enter select/open" (found by a fresh-user trial).
func TestChoiceRowHint(t *testing.T) {
	d := newDriver(t, smallFlags(), 120, 40)
	m := d.m
	for i := 0; i < 10 && m.setup.Form().Typing(); i++ {
		d.key("down")
	}
	if m.setup.Form().Typing() {
		t.Fatal("no choice row reached")
	}
	bar := lastLine(m.View())
	if !strings.Contains(bar, "enter run") || strings.Contains(bar, "select/open") {
		t.Errorf("status line on a choice row: %q", bar)
	}
}
