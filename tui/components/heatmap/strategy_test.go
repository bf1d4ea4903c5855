package heatmap_test

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/reference"
	_ "sweepbench/strategy"
	"sweepbench/tui/common"
	"sweepbench/tui/components/heatmap"
	"sweepbench/tui/internal/tuitest"
)

// zscoreHeat runs a real zscore study (length 10:20:5 x entry 1.5:2:0.5 x
// exit 0:1:0.5, 18 combos, fp64, the first 2,000 bars of BTC/USDT 1m)
// and shows it on a heatmap pane 160 x 20.
func zscoreHeat(t *testing.T) (*heatmap.Model, *common.RunState) {
	t.Helper()
	reg := &engine.Registry{}
	reg.Register(reference.New())
	spec := tuitest.SmallSpec()
	spec.Precision = "fp64"
	spec.Strategy = "zscore"
	spec.Params = map[string]string{"length": "10:20:5", "entry": "1.5:2:0.5", "exit": "0:1:0.5"}
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(t.Context(), st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	state := common.NewRunState()
	state.Results = common.NewResults(rep, nil)
	state.Metric, state.Prec, state.Selected = "sharpe", engine.FP64, 0
	m := heatmap.New(tuitest.Context(reg), state)
	m.SetSize(160, 20)
	if n := state.Results.Grid.Len(); n != 18 {
		t.Fatalf("%d combos, want 18", n)
	}
	return m, state
}

// sharpes are the combos' fp64 Sharpe ratios whose length and entry are
// those texts, by combo index (computed from the run, not the pane).
func sharpes(t *testing.T, s *common.RunState, length, entry string) map[int]float64 {
	t.Helper()
	out := map[int]float64{}
	g := s.Results.Grid
	for _, c := range s.Results.R64.Results {
		p := g.Point(c.Index)
		if p[0].Text == length && p[1].Text == entry && !math.IsNaN(c.Metrics.Sharpe) {
			out[c.Index] = c.Metrics.Sharpe
		}
	}
	if len(out) != 3 {
		t.Fatalf("length %s entry %s: %d combos with a Sharpe, want 3 (one per exit)", length, entry, len(out))
	}
	return out
}

// press sends key k to the pane and returns the combo it selects (-1 none).
func press(m *heatmap.Model, k string) int {
	var msg tea.KeyMsg
	switch k {
	case "right":
		msg = tea.KeyMsg{Type: tea.KeyRight}
	case "down":
		msg = tea.KeyMsg{Type: tea.KeyDown}
	default:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	}
	cmd := m.Update(msg)
	if cmd == nil {
		return -1
	}
	if sm, ok := cmd().(common.SelectMsg); ok {
		return sm.Index
	}
	return -1
}

func infoLine(m *heatmap.Model) string { return strings.SplitN(m.View(), "\n", 2)[0] }

// TestHeatmapStrategyBest: a 3-axis zscore grid draws length (rows) x
// entry (columns), each cell the best Sharpe over exit; the cell of
// length 15, entry 2 selects the combo of the max over its three exits,
// computed here from the run's results, and its line shows that value.
func TestHeatmapStrategyBest(t *testing.T) {
	m, s := zscoreHeat(t)
	view := m.View()
	if got := m.Axes(); got != "length x entry; exit: best (max) over 0:1:0.5" {
		t.Fatalf("axes %q", got)
	}
	if !strings.Contains(view, "rows length, cols entry; exit: best (max) over 0:1:0.5;") {
		t.Fatalf("the legend does not say the axes and the reduction:\n%s", view)
	}
	// The row and column labels: length 10, 15, 20; entry 1.5, 2.
	if !regexp.MustCompile(`(?m)^\s*15 `).MatchString(view) || !regexp.MustCompile(`(?m)^\s+1\.5\s+2\s*$`).MatchString(view) {
		t.Fatalf("the axis labels are not length's and entry's:\n%s", view)
	}
	press(m, "down")
	got := press(m, "right") // length 15, entry 2
	vals := sharpes(t, s, "15", "2")
	best, bestV := -1, math.Inf(-1)
	for i, v := range vals {
		if v > bestV || (v == bestV && i < best) {
			best, bestV = i, v
		}
	}
	if got != best {
		t.Fatalf("the cell of length 15, entry 2 selects combo %d (%s), want %d (%s, the max Sharpe %v of %v)",
			got, s.Results.Grid.Label(max(got, 0)), best, s.Results.Grid.Label(best), bestV, vals)
	}
	s.Selected = got
	want := s.Results.Grid.Label(best) + ": sharpe " + common.Value("sharpe", bestV)
	if line := infoLine(m); !strings.Contains(line, want) {
		t.Fatalf("line 1 is %q, want %q", line, want)
	}
}

// TestHeatmapStrategyMedianAndStep: d makes the cells the median over
// exit; > steps through exit, a cell then the combo at the stepped exit.
func TestHeatmapStrategyMedianAndStep(t *testing.T) {
	m, s := zscoreHeat(t)
	g := s.Results.Grid
	press(m, "d") // median
	vals := sharpes(t, s, "10", "1.5")
	var xs []float64
	for _, v := range vals {
		xs = append(xs, v)
	}
	sort.Float64s(xs)
	if line := infoLine(m); !strings.Contains(line, "cell median "+common.Value("sharpe", xs[1])) {
		t.Fatalf("line 1 is %q, want the median %s of %v", line, common.Value("sharpe", xs[1]), xs)
	}
	if !strings.Contains(m.View(), "exit: median over 0:1:0.5;") {
		t.Fatalf("the legend does not say median:\n%s", m.View())
	}

	press(m, "d") // stepped, at exit's first value
	if got := m.Axes(); got != "length x entry; exit = 0 (stepped: < >)" {
		t.Fatalf("axes %q", got)
	}
	got := press(m, ">") // exit 0.5
	want := g.Strategy.IndexOf([]int{0, 0, 1})
	if got != want {
		t.Fatalf("stepped to exit 0.5, the cell selects %d, want %d (%s)", got, want, g.Label(want))
	}
	if !strings.Contains(m.View(), "exit = 0.5 (stepped: < >)") {
		t.Fatalf("the legend does not say the stepped exit:\n%s", m.View())
	}
	s.Selected = got
	v := vals[want]
	if line := infoLine(m); !strings.Contains(line, "length 10, entry 1.5, exit 0.5: sharpe "+common.Value("sharpe", v)) {
		t.Fatalf("line 1 is %q, want combo %s's Sharpe %v", line, g.Label(want), v)
	}
	press(m, "right") // entry 2 at the same exit
	if got := press(m, ">"); got != g.Strategy.IndexOf([]int{0, 1, 2}) {
		t.Fatalf("exit 1 at entry 2 selects %d, want %d", got, g.Strategy.IndexOf([]int{0, 1, 2}))
	}
	if got := press(m, ">"); got != g.Strategy.IndexOf([]int{0, 1, 0}) {
		t.Fatalf("> past the last exit wraps to exit 0: %d", got)
	}

	// x: the columns become exit, entry is reduced (still stepped).
	press(m, "x")
	if got := m.Axes(); got != "length x exit; entry = 1.5 (stepped: < >)" {
		t.Fatalf("after x the axes are %q", got)
	}
	// y: the rows become entry (the other axis than exit), length reduced.
	press(m, "y")
	if got := m.Axes(); got != "entry x exit; length = 10 (stepped: < >)" {
		t.Fatalf("after y the axes are %q", got)
	}
}
