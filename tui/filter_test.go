package tui

import (
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/tui/screens/results"
)

// parityRows are the hma lengths of the combos the parity pane lists, in
// its order.
func parityRows(v string) []string {
	row := regexp.MustCompile(`^\s*>?\s*(\d+)\s+\d+\s+[\d,]+\s+[-+]\d+\s`)
	var out []string
	for _, l := range strings.Split(v, "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestParityFollowsFilter: the / filter of the metrics table keeps the
// parity pane's list to the same combos (the heatmap greys the others),
// says so in its title, and lists every combo again once cleared; a
// filter that keeps none says so (issue 15).
func TestParityFollowsFilter(t *testing.T) {
	d := newDriver(t, smallFlags(), 160, 48)
	m := d.m
	d.key("enter")
	d.settle()
	par := m.results.Parity()
	if got := parityRows(par.View()); len(got) != 9 {
		t.Fatalf("before the filter the parity pane lists %d combos, want 9:\n%s", len(got), par.View())
	}
	d.key("/", "h", "m", "a", "=", "2", "0", "enter")
	if got := m.results.Metrics().Title(); !strings.HasPrefix(got, "Metrics: 3 of 9") {
		t.Fatalf("metrics title %q", got)
	}
	got := parityRows(par.View())
	if len(got) != 3 || got[0] != "20" || got[1] != "20" || got[2] != "20" {
		t.Fatalf("with hma=20 the parity pane lists hma %v, want 20 three times:\n%s", got, par.View())
	}
	if title := par.Title(); !strings.Contains(title, "3 of 9 combos") {
		t.Fatalf("parity title %q does not say the filter holds back combos", title)
	}
	// Its keys move over the kept combos only.
	m.results.SetFocus(results.ParityPane)
	d.key("G")
	if c := m.state.Results.Grid.At(m.state.Selected); c.HMA != 20 {
		t.Fatalf("G in the filtered parity list selected hma %d", c.HMA)
	}
	d.key("/") // the filter in force, to edit: ctrl+u clears it first
	d.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	d.key("h", "m", "a", "=", "9", "9", "enter")
	if v := par.View(); len(parityRows(v)) != 0 || !strings.Contains(v, "keeps none of the 9 combos") {
		t.Fatalf("a filter that keeps nothing:\n%s", v)
	}
	d.key("/")
	d.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	d.key("enter")
	if got := parityRows(par.View()); len(got) != 9 || strings.Contains(par.Title(), " of ") {
		t.Fatalf("after clearing the filter: %d rows, title %q", len(got), par.Title())
	}
}
