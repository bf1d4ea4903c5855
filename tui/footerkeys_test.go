package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

// statusLine is the last line of the view: the status bar.
func statusLine(m *Model) string {
	v := strings.Split(m.View(), "\n")
	return v[len(v)-1]
}

// TestFooterShowsKeysThatWork: the status line shows the keys that work
// where the focus is (found by a user: at start the focus is in the HMA
// range, where q, ?, B and S are text, "20:200:20q", while the line said
// "? help · q quit"). In a text field it shows esc (leaving it) and f1
// (help, from any field) first; q stays text there and f1 opens and closes
// the help; once esc has left the field the line shows ? and q, and they
// work. In the file picker, which takes every key, it shows the picker's
// keys, esc and f1.
func TestFooterShowsKeysThatWork(t *testing.T) {
	for _, w := range []int{80, 120} {
		d := newDriver(t, smallFlags(), w, 30)
		m := d.m
		if !m.setup.Form().Typing() || m.setup.Form().Focused() != form.HMA {
			t.Fatalf("%d: after the load the focus is not in the HMA range (%q)", w, m.setup.Form().Focused())
		}
		line := statusLine(m)
		for _, want := range []string{"esc leave field", "f1 help"} {
			if !strings.Contains(line, want) {
				t.Errorf("%d columns, in the HMA range: %q not on the status line %q", w, want, line)
			}
		}
		if i, j := strings.Index(line, "esc leave field"), strings.Index(line, "f1 help"); i > j {
			t.Errorf("%d columns: esc should come before f1: %q", w, line)
		}
		for _, bad := range []string{"? help", "q quit", "S saved", "B bench"} {
			if strings.Contains(line, bad) {
				t.Errorf("%d columns, in the HMA range: the status line offers %q, which the field takes: %q", w, bad, line)
			}
		}
	}

	d := newDriver(t, smallFlags(), 120, 40)
	m := d.m
	d.key("q")
	if got := m.setup.Form().Values()[form.HMA]; got != "10:30:10q" || m.quitting || m.showHelp {
		t.Fatalf("q in the HMA range: value %q, quitting %v, help %v; want the text, nothing else", got, m.quitting, m.showHelp)
	}
	d.key("backspace")
	d.send(tea.KeyMsg{Type: tea.KeyF1})
	if !m.showHelp || !strings.Contains(m.View(), "f1") || m.setup.Form().Values()[form.HMA] != "10:30:10" {
		t.Fatalf("f1 in the HMA range: help %v, HMA %q; want the help over the form, the field unchanged", m.showHelp, m.setup.Form().Values()[form.HMA])
	}
	d.send(tea.KeyMsg{Type: tea.KeyF1})
	if m.showHelp || !m.setup.Form().Typing() {
		t.Fatalf("f1 again: help %v, typing %v; want the help closed and the field focused again", m.showHelp, m.setup.Form().Typing())
	}
	d.key("esc")
	if m.setup.Pane() != 0 {
		t.Fatalf("esc left the field for pane %d, want the dataset pane", m.setup.Pane())
	}
	line := statusLine(m)
	if !strings.Contains(line, "? help") || !strings.Contains(line, "q quit") {
		t.Fatalf("after esc the status line does not offer ? and q: %q", line)
	}
	d.key("?")
	if !m.showHelp {
		t.Fatal("? after esc did not open the help")
	}
	d.key("?")

	// The file picker: its keys, esc to leave it and f1; q, ? are not offered.
	d.key("down", "down", "down", "down", "down", "down", "down", "down", "down", "down")
	d.key("enter")
	if !m.setup.Datasets().Picking() {
		t.Fatal("enter on Open a file did not open the picker")
	}
	line = statusLine(m)
	for _, want := range []string{"enter open", "parent", "esc back", "f1 help"} {
		if !strings.Contains(line, want) {
			t.Errorf("in the file picker: %q not on the status line %q", want, line)
		}
	}
	for _, bad := range []string{"? help", "q quit", "tab pane"} {
		if strings.Contains(line, bad) {
			t.Errorf("in the file picker: the status line offers %q, which the picker takes: %q", bad, line)
		}
	}
	d.send(tea.KeyMsg{Type: tea.KeyF1})
	if !m.showHelp {
		t.Fatal("f1 in the file picker did not open the help")
	}
	d.send(tea.KeyMsg{Type: tea.KeyF1})
	d.key("esc")
	if m.setup.Datasets().Picking() || m.screen != common.SetupScreen {
		t.Fatalf("esc did not leave the picker (picking %v, screen %v)", m.setup.Datasets().Picking(), m.screen)
	}
}

// TestFilterFooter: while the metrics filter's text field has the keys
// the status line shows enter, esc and f1, not q and ? (text there).
func TestFilterFooter(t *testing.T) {
	d := newDriver(t, smallFlags(), 120, 40)
	m := d.m
	d.key("enter")
	d.settle()
	d.key("/")
	if !m.results.Editing() {
		t.Fatal("/ did not open the filter")
	}
	line := statusLine(m)
	for _, want := range []string{"enter apply", "esc leave filter", "f1 help"} {
		if !strings.Contains(line, want) {
			t.Errorf("in the filter: %q not on the status line %q", want, line)
		}
	}
	for _, bad := range []string{"? help", "q quit"} {
		if strings.Contains(line, bad) {
			t.Errorf("in the filter: the status line offers %q, which the field takes: %q", bad, line)
		}
	}
	d.send(tea.KeyMsg{Type: tea.KeyF1})
	if !m.showHelp || !m.results.Editing() {
		t.Fatalf("f1 in the filter: help %v, editing %v", m.showHelp, m.results.Editing())
	}
}

// TestFooterBeforeADataset: found by a user: at start without a dataset
// the focus is in the Dataset pane, where the status line offered ←/h,
// which does nothing there; in the form it offered enter run, which only
// says there is no dataset yet, and that error then hid the key hints for
// good. Now the line offers neither, and the error, said on enter, steps
// aside for the hints at the next key (enter says it again).
func TestFooterBeforeADataset(t *testing.T) {
	d := newDriver(t, DefaultFlags(), 120, 40)
	m := d.m
	if m.setup.Pane() != 0 || m.state.Raw != nil {
		t.Fatalf("at start: pane %d, dataset loaded %v; want the Dataset pane, none", m.setup.Pane(), m.state.Raw != nil)
	}
	line := statusLine(m)
	if !strings.Contains(line, "enter select/open") || !strings.Contains(line, "tab pane") || strings.Contains(line, "left") {
		t.Errorf("in the Dataset pane: status line %q; want enter and tab, not ←/h", line)
	}
	before := m.View()
	d.key("left")
	d.key("h")
	if m.View() != before {
		t.Errorf("←/h changed the Dataset pane:\n%s", m.View())
	}
	d.key("tab")
	if m.setup.Pane() != 1 {
		t.Fatalf("tab: pane %d, want the form", m.setup.Pane())
	}
	line = statusLine(m)
	if strings.Contains(line, "run") || !strings.Contains(line, "tab pane") {
		t.Errorf("in the form without a dataset: status line %q; want no enter run", line)
	}
	const noData = "error: no dataset yet"
	d.key("enter")
	if line := statusLine(m); !strings.Contains(line, noData) {
		t.Fatalf("enter in the form without a dataset: status line %q, want %q", line, noData)
	}
	d.key("esc")
	if line := statusLine(m); strings.Contains(line, "error") || !strings.Contains(line, "tab pane") || !strings.Contains(m.status.LastErr, "no dataset yet") {
		t.Errorf("the key after the error: status line %q (error %q); want the key hints back", line, m.status.LastErr)
	}
	d.key("tab", "enter")
	if line := statusLine(m); !strings.Contains(line, noData) {
		t.Errorf("enter again: status line %q, want %q again", line, noData)
	}
}
