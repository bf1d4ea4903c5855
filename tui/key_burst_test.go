package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

// TestKeyBurst: characters that arrive together come as one KeyMsg with
// several runes; each acts as its own key, in order.
func TestKeyBurst(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	m := d.m
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen || m.results.Focus() != results.MetricsPane {
		t.Fatalf("screen %d, focus %s (last error %q)", m.screen, results.PaneNames[m.results.Focus()], m.status.LastErr)
	}
	// The reference: j, j one at a time from the first row.
	d.key("g", "j", "j")
	want := m.state.Selected
	d.key("g")
	first := m.state.Selected
	if want == first {
		t.Fatal("j, j did not move")
	}
	d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jj")})
	if m.state.Selected != want {
		t.Fatalf("jj in one message: combo %d, want %d (from %d)", m.state.Selected, want, first)
	}
	cols := common.Columns()
	i := 0
	for j, c := range cols {
		if c == m.state.Metric {
			i = j
		}
	}
	d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("mm")})
	if w := cols[(i+2)%len(cols)]; m.state.Metric != w {
		t.Fatalf("mm in one message: metric %q, want %q", m.state.Metric, w)
	}
	// A burst that opens the filter types the rest into it.
	d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/hma=20")})
	d.key("enter")
	if got := m.results.Metrics().Title(); !strings.HasPrefix(got, "Metrics: 3 of 9") {
		t.Fatalf("filter typed in a burst: %q", got)
	}
}
