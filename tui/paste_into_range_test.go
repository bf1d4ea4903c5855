package tui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/tui/components/form"
)

// TestPasteIntoRange: a paste into a range field keeps its valid
// characters; the others are dropped, never taken as keys.
func TestPasteIntoRange(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	m := d.m
	if !m.setup.Form().Typing() {
		t.Fatal("the HMA range field is not focused")
	}
	for range len(m.setup.Form().Values()[form.HMA]) {
		d.key("backspace")
	}
	// A paste is text, q and all (issue 15, defect 4): the range shows
	// its error, nothing quits.
	d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("20:4q0:10"), Paste: true})
	if got := m.setup.Form().Values()[form.HMA]; got != "20:4q0:10" || m.quitting || m.setup.Form().Valid() {
		t.Fatalf("pasted range %q (quitting %v, valid %v)", got, m.quitting, m.setup.Form().Valid())
	}
}
