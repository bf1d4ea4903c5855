package metrics

import (
	"slices"
	"strings"
	"testing"
)

// TestSortOrdersRowsByMetric: s sorts the table by the chosen metric in
// the table's precision, best first (the highest return), then worst
// first, then back to grid order; the order is the one the engine's own
// values give, and the title says the sort.
func TestSortOrdersRowsByMetric(t *testing.T) {
	m, state := newTable(t, 160, 20)
	state.Metric = "total_return" // not the objective (sharpe): a plain sort by value
	m.Reload()
	grid := rows(m)
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(grid, want) {
		t.Fatalf("unsorted rows %v, want the grid order %v", grid, want)
	}
	ret := func(i int) float64 { return metric(t, state, i, "total_return") }
	desc := slices.Clone(grid)
	slices.SortStableFunc(desc, func(a, b int) int {
		switch {
		case ret(a) > ret(b):
			return -1
		case ret(a) < ret(b):
			return 1
		}
		return 0
	})
	if ret(desc[0]) == ret(desc[len(desc)-1]) {
		t.Fatal("every combo has the same return: the sort would prove nothing")
	}

	typeKeys(m, "s")
	if got := rows(m); !slices.Equal(got, desc) {
		t.Fatalf("s: rows %v, want by total_return, highest first: %v", got, desc)
	}
	if title := m.Title(); !strings.Contains(title, "by total_return% fp64 best first") {
		t.Errorf("s: title %q does not say the sort", title)
	}

	typeKeys(m, "s")
	asc := slices.Clone(grid)
	slices.SortStableFunc(asc, func(a, b int) int {
		switch {
		case ret(a) < ret(b):
			return -1
		case ret(a) > ret(b):
			return 1
		}
		return 0
	})
	if got := rows(m); !slices.Equal(got, asc) {
		t.Fatalf("s again: rows %v, want by total_return, lowest first: %v", got, asc)
	}
	if title := m.Title(); !strings.Contains(title, "by total_return% fp64 worst first") {
		t.Errorf("s again: title %q does not say the sort", title)
	}

	typeKeys(m, "s")
	if got := rows(m); !slices.Equal(got, grid) {
		t.Fatalf("s a third time: rows %v, want the grid order %v", got, grid)
	}
	if title := m.Title(); strings.Contains(title, " by ") {
		t.Errorf("s a third time: title %q still says a sort", title)
	}
}
