package metrics

import (
	"os"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/tui/common"
	"sweepbench/tui/internal/tuitest"
)

// TestMain keeps the parsed-dataset cache of the tests' loads in a
// temporary folder rather than the user's.
func TestMain(m *testing.M) { os.Exit(datatest.RunWithTempCache(m)) }

// newTable is the pane over a small real study's report: the first 2,000
// bars of embedded BTC/USDT 1m, hma 10:30:10 x hma3 12:36:12 (9 combos)
// in both precisions on the reference backend, sized w x h and focused.
func newTable(t *testing.T, w, h int) (*Model, *common.RunState) {
	t.Helper()
	reg, st, rep := tuitest.SmallStudy(t)
	ctx := tuitest.Context(reg)
	state := common.NewRunState()
	state.Study, state.Results, state.Prec = st, common.NewResults(rep, nil), engine.FP64
	m := New(ctx, state)
	m.SetSize(w, h)
	m.Reload()
	m.Focus(true)
	return m, state
}

// metric is combo idx's metric name in the fp64 run, read from the
// engine's results (not through the pane).
func metric(t *testing.T, state *common.RunState, idx int, name string) float64 {
	t.Helper()
	c := state.Results.R64.Lookup(idx)
	if c == nil {
		t.Fatalf("combo %d is not in the fp64 run", idx)
	}
	v, ok := c.Metrics.Value(name)
	if !ok {
		t.Fatalf("no metric %q", name)
	}
	return v
}

// rows are the combos the table lists, in order.
func rows(m *Model) []int {
	var out []int
	for i := 0; m.Row(i) >= 0; i++ {
		out = append(out, m.Row(i))
	}
	return out
}

// typeKeys sends each string as one key (enter, esc, backspace by name,
// anything else as the characters typed).
func typeKeys(m *Model, ks ...string) {
	for _, k := range ks {
		switch k {
		case "enter":
			m.Update(tea.KeyMsg{Type: tea.KeyEnter})
		case "esc":
			m.Update(tea.KeyMsg{Type: tea.KeyEsc})
		default:
			for _, r := range k {
				m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			}
		}
	}
}
