package metrics

import (
	"os"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/tui/common"
	"sweepbench/tui/keys"
	"sweepbench/tui/theme"
)

// TestMain keeps the parsed-dataset cache of the tests' loads in a
// temporary folder rather than the user's.
func TestMain(m *testing.M) { os.Exit(datatest.RunWithTempCache(m)) }

// newTable is the pane over a small real study's report: the first 2,000
// bars of embedded BTC/USDT 1m, hma 10:30:10 x hma3 12:36:12 (9 combos)
// in both precisions on the reference backend, sized w x h and focused.
func newTable(t *testing.T, w, h int) (*Model, *common.RunState) {
	t.Helper()
	reg := &engine.Registry{}
	reg.Register(reference.New())
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.Backend = "embedded:btcusdt-1m", 2000, "10:30:10", "12:36:12", "reference"
	s, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(t.Context(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true), Keys: keys.Default(), Registry: reg, Deterministic: true}
	state := common.NewRunState()
	state.Study, state.Results, state.Prec = s, common.NewResults(rep, nil), engine.FP64
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
