package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestFilterHeaders: the filter takes the columns as the headers show
// them, and an unknown column lists the valid ones.
func TestFilterHeaders(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	m := d.m
	d.key("enter")
	d.settle()
	for _, f := range []string{"max_drawdown%<100", "max_drawdown<100", "max_drawdown% < 100%"} {
		d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
		d.send(tea.KeyMsg{Type: tea.KeyCtrlU})
		d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(f), Paste: true})
		d.key("enter")
		if m.results.Metrics().Err() != nil || !strings.HasPrefix(m.results.Metrics().Title(), "Metrics: 9 of 9") {
			t.Fatalf("filter %q: %v, %q", f, m.results.Metrics().Err(), m.results.Metrics().Title())
		}
	}
	d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	d.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("drawdown<1"), Paste: true})
	d.key("enter")
	err := m.results.Metrics().Err()
	if err == nil || !strings.Contains(err.Error(), "max_drawdown%") || !strings.Contains(err.Error(), "hma3") {
		t.Fatalf("unknown column: %v", err)
	}
	if v := m.View(); !strings.Contains(v, "flat_bars") {
		t.Fatalf("the pane does not show the valid columns:\n%s", v)
	}
}
