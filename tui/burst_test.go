package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
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
