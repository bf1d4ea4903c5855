package metrics

import (
	"slices"
	"strings"
	"testing"
)

// TestBadFilterNamesColumn: a filter naming a column the table does not
// have is refused with an error that names it and lists the columns; the
// rows stay as they were, / reopens the broken text to fix it, and esc
// gives the fix up, the error gone.
func TestBadFilterNamesColumn(t *testing.T) {
	m, state := newTable(t, 160, 20)
	before := rows(m)
	typeKeys(m, "/", "sharp>1", "enter")
	err := m.Err()
	if err == nil {
		t.Fatal("the filter sharp>1 was accepted")
	}
	for _, s := range []string{`unknown column "sharp"`, "columns: hma, hma3, total_return%, cagr%, sharpe"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the error %q does not say %q", err, s)
		}
	}
	if v := m.View(); !strings.Contains(v, `unknown column "sharp"`) {
		t.Errorf("the pane does not show the error:\n%s", v)
	}
	if got := rows(m); !slices.Equal(got, before) || state.Filter != "" {
		t.Fatalf("a refused filter changed the rows %v -> %v (filter %q)", before, got, state.Filter)
	}
	typeKeys(m, "/")
	if !m.Editing() || !strings.Contains(m.View(), "/sharp>1") {
		t.Fatalf("/ after a refused filter: editing %v, want its text to fix:\n%s", m.Editing(), m.View())
	}
	typeKeys(m, "esc")
	if m.Editing() || m.Err() != nil || strings.Contains(m.View(), "unknown column") {
		t.Fatalf("esc: editing %v, error %v:\n%s", m.Editing(), m.Err(), m.View())
	}
}
