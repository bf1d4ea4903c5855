package results

import (
	"fmt"
	"strings"
	"testing"
)

// TestSelectingComboShowsItsParameters: moving the table's cursor selects
// the combo of the row it lands on in every pane: the run state holds it,
// its detail is recomputed for it, and the combo pane (enter opens the
// crossover from the table, tab the combo pane next to it) is titled with
// its hma and hma3, the grid's values for that index.
func TestSelectingComboShowsItsParameters(t *testing.T) {
	s := newScreen(t, 80, 24)
	m, state := s.m, s.state
	first := state.Selected
	if first < 0 || state.Inspect == nil || state.Inspect.Index != first {
		t.Fatalf("the report selects combo %d, detail %+v", first, state.Inspect)
	}
	if m.Focus() != MetricsPane {
		t.Fatalf("focus %v, want the table", m.Focus())
	}
	// The row after the selected one (or before it, on the last row).
	row := -1
	for i := 0; m.Metrics().Row(i) >= 0; i++ {
		if m.Metrics().Row(i) == first {
			row = i
		}
	}
	want, move := m.Metrics().Row(row+1), "down"
	if want < 0 {
		want, move = m.Metrics().Row(row-1), "up"
	}
	s.key(move)
	if state.Selected != want {
		t.Fatalf("%s from row %d: selected %d, want combo %d", move, row, state.Selected, want)
	}
	if in := state.Inspect; in == nil || in.Index != want || in.Err != nil || in.D64 == nil || in.D32 == nil {
		t.Fatalf("the detail of combo %d was not computed in both precisions: %+v", want, in)
	}
	c := state.Study.Grid.At(want)
	s.key("enter")
	if m.Focus() != CrossoverPane {
		t.Fatalf("enter on the table: focus %v, want the crossover", m.Focus())
	}
	if v := m.View(); !strings.Contains(v, fmt.Sprintf("hma %d x hma3 %d", c.HMA, c.HMA3)) {
		t.Errorf("the crossover pane does not name combo %d (hma %d x hma3 %d):\n%s", want, c.HMA, c.HMA3, v)
	}
	s.key("tab")
	if v := m.View(); m.Focus() != ComboPane || !strings.Contains(v, fmt.Sprintf("Combo hma %d x hma3 %d", c.HMA, c.HMA3)) {
		t.Fatalf("tab: focus %v, want the combo pane titled with hma %d x hma3 %d:\n%s", m.Focus(), c.HMA, c.HMA3, v)
	}
	s.key("esc")
	if m.Focus() != MetricsPane {
		t.Errorf("esc: focus %v, want back to the table enter came from", m.Focus())
	}
}
