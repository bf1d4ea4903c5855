package metrics

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestFilterKeepsMatchingRows: a filter typed after / and applied with
// enter lists exactly the combos whose values meet it, as the engine's
// results give them (a count and a percent column, in percent as the
// table shows it); the heatmap's Keeps agrees, the run state carries the
// filter, and the pane's last line says it.
func TestFilterKeepsMatchingRows(t *testing.T) {
	m, state := newTable(t, 160, 20)
	trades := make([]int, 9)
	for i := range trades {
		trades[i] = int(metric(t, state, i, "total_trades"))
	}
	sorted := slices.Sorted(slices.Values(trades))
	bound := sorted[len(sorted)/2] // the median: some combos above, some not
	// The second largest drawdown of the combos trading more: one of
	// them is left out by it.
	var dds []float64
	for i, n := range trades {
		if n > bound {
			dds = append(dds, metric(t, state, i, "max_drawdown")*100)
		}
	}
	slices.Sort(dds)
	if len(dds) < 2 {
		t.Fatalf("only %d combos trade more than %d", len(dds), bound)
	}
	dd := dds[len(dds)-2]
	src := fmt.Sprintf("total_trades>%d max_drawdown<=%s", bound, strconvF(dd))

	var want []int
	for i, n := range trades {
		if n > bound && metric(t, state, i, "max_drawdown")*100 <= dd {
			want = append(want, i)
		}
	}
	if len(want) == 0 || len(want) == 9 {
		t.Fatalf("the filter %q keeps %v: pick one that keeps some combos", src, want)
	}

	typeKeys(m, "/")
	if !m.Editing() {
		t.Fatal("/ did not open the filter line")
	}
	typeKeys(m, src, "enter")
	if m.Editing() || m.Err() != nil {
		t.Fatalf("after enter: editing %v, error %v", m.Editing(), m.Err())
	}
	if got := rows(m); !slices.Equal(got, want) {
		t.Fatalf("filter %q: rows %v, want %v (trades %v)", src, got, want, trades)
	}
	for i := range 9 {
		if m.Keeps(i) != slices.Contains(want, i) {
			t.Errorf("Keeps(%d) = %v, the rows say %v", i, m.Keeps(i), slices.Contains(want, i))
		}
	}
	if state.Filter != src {
		t.Errorf("the run state's filter %q, want %q", state.Filter, src)
	}
	if v := m.View(); !strings.Contains(v, "filter: "+src+"  (/ to change)") {
		t.Errorf("the pane does not say the filter:\n%s", v)
	}
	if title := m.Title(); !strings.Contains(title, fmt.Sprintf("Metrics: %d of 9 combos", len(want))) {
		t.Errorf("title %q does not count the rows listed", title)
	}
}

// strconvF writes v with enough digits that the filter compares it as
// equal to itself.
func strconvF(v float64) string { return fmt.Sprintf("%.17g", v) }
