package metrics

import (
	"slices"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
	_ "sweepbench/strategy"
	"sweepbench/tui/common"
	"sweepbench/tui/internal/tuitest"
)

// strategyTable is the pane over a real study of family with params on
// the first 2,000 bars of BTC/USDT 1m, fp64 and fp32.
func strategyTable(t *testing.T, family string, params map[string]string) (*Model, *common.RunState) {
	t.Helper()
	reg := &engine.Registry{}
	reg.Register(reference.New())
	spec := tuitest.SmallSpec()
	spec.Strategy, spec.Params = family, params
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(t.Context(), st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	state := common.NewRunState()
	state.Study, state.Results, state.Prec = st, common.NewResults(rep, nil), engine.FP64
	m := New(tuitest.Context(reg), state)
	m.SetSize(160, 20)
	m.Reload()
	m.Focus(true)
	return m, state
}

// TestTableShowsCrossParameters: a cross study's table has the grid's
// parameter columns (fast_kind, fast, slow_kind, slow), each row the
// values of its combo as the grid gives them (not hma 0, hma3 0), and
// the filter fast=10 keeps the combos whose fast length is 10.
func TestTableShowsCrossParameters(t *testing.T) {
	m, state := strategyTable(t, "cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:20"})
	g := state.Results.Grid
	if g.Len() != 6 {
		t.Fatalf("%d combos, want 6", g.Len())
	}
	var names []string
	for _, c := range m.cols[:4] {
		names = append(names, c.name)
	}
	if want := []string{"fast_kind", "fast", "slow_kind", "slow"}; !slices.Equal(names, want) {
		t.Fatalf("the first columns are %v, want %v", names, want)
	}
	head := strings.Split(m.View(), "\n")[0]
	for _, c := range []string{"fast_kind", "slow_kind", "slow"} {
		if !strings.Contains(head, c) {
			t.Errorf("the header %q has no %s", head, c)
		}
	}
	for i := range g.Len() {
		p := g.Point(i)
		want := []string{"ema", p[0].Text, "sma", p[1].Text}
		if got := m.cells(i)[:4]; !slices.Equal(got, want) {
			t.Errorf("combo %d's row starts %v, want %v", i, got, want)
		}
	}
	typeKeys(m, "/", "fast=10", "enter")
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	var want []int
	for i := range g.Len() {
		if g.Point(i)[0].Text == "10" {
			want = append(want, i)
		}
	}
	got := rows(m)
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) != 2 {
		t.Fatalf("fast=10 lists %v, want %v", got, want)
	}
}

// TestTableShowsZscoreDecimals: a zscore study's thresholds are written
// as the grid's exact decimals (1.75, 0.5).
func TestTableShowsZscoreDecimals(t *testing.T) {
	m, state := strategyTable(t, "zscore", map[string]string{"length": "20", "entry": "1.5:2:0.25", "exit": "0:0.5:0.5"})
	g := state.Results.Grid
	if g.Len() != 6 {
		t.Fatalf("%d combos, want 6", g.Len())
	}
	for i := range g.Len() {
		p := g.Point(i)
		want := []string{"20", p[1].Text, p[2].Text}
		if got := m.cells(i)[:3]; !slices.Equal(got, want) {
			t.Errorf("combo %d's row starts %v, want %v", i, got, want)
		}
	}
	if got := m.cells(g.Strategy.IndexOf([]int{0, 1, 1}))[:3]; !slices.Equal(got, []string{"20", "1.75", "0.5"}) {
		t.Errorf("length 20, entry 1.75, exit 0.5 reads %v", got)
	}
}
