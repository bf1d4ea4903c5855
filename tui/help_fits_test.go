package tui

import (
	"strings"
	"testing"

	"sweepbench/tui/common"
)

// TestHelpFits: at 80x24 every description of the help overlay is whole.
func TestHelpFits(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	d.key("esc", "?") // out of the focused range, then help
	v := d.m.View()
	for _, g := range d.m.keyMap().FullHelp() {
		for _, b := range g {
			if !strings.Contains(v, b.Help().Desc) {
				t.Fatalf("the help lacks %q:\n%s", b.Help().Desc, v)
			}
		}
	}
	// Both notes whole: how to leave a text field, how to close the help.
	for _, want := range []string{"a text field takes every key, esc leaves it", "? or esc closes"} {
		if !strings.Contains(v, want) {
			t.Fatalf("the help lacks %q:\n%s", want, v)
		}
	}
	checkSize(t, v, 80, 24)
	// The results screen's, the longest.
	d.key("?", "tab", "enter")
	d.settle()
	if d.m.screen != common.ResultsScreen {
		t.Fatalf("screen %d, want the results", d.m.screen)
	}
	d.key("?")
	v = d.m.View()
	for _, g := range d.m.keyMap().FullHelp() {
		for _, b := range g {
			if !strings.Contains(v, b.Help().Desc) {
				t.Fatalf("the results' help lacks %q:\n%s", b.Help().Desc, v)
			}
		}
	}
	checkSize(t, v, 80, 24)
}
