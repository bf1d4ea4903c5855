package tui

import (
	"testing"

	"sweepbench/tui/common"
)

// TestEditsKept: edits made in the form after e survive an esc back to
// the results and a second e (found by a fresh-user trial: they were
// replaced by the study's values); a study of its own on screen fills the
// form again (TestNoStaleState).
func TestEditsKept(t *testing.T) {
	d := newDriver(t, smallFlags(), 120, 40)
	m := d.m
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen {
		t.Fatalf("screen %d (err %q)", m.screen, m.status.LastErr)
	}
	d.key("e")
	if m.screen != common.SetupScreen || !m.setup.Form().Typing() {
		t.Fatalf("e: screen %d, typing %v", m.screen, m.setup.Form().Typing())
	}
	d.key("5") // HMA range 10:30:10 -> 10:30:105
	if v := m.setup.Form().Values()["hma"]; v != "10:30:105" {
		t.Fatalf("hma %q after typing 5", v)
	}
	d.key("esc")
	if m.screen != common.ResultsScreen {
		t.Fatalf("esc: screen %d, want the results", m.screen)
	}
	d.key("e")
	if v := m.setup.Form().Values()["hma"]; v != "10:30:105" {
		t.Errorf("hma %q after esc and e: the edit was lost", v)
	}
}
