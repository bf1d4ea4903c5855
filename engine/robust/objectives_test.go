package robust

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"sweepbench/engine"
)

// TestObjectivesOneList (issue 25, item 21): the objectives a study with
// blocks takes are one list: each is accepted, is a metric of the table
// (so the top lists take it too), and is what every refusal lists; mean
// (not a metric of the table) and total_trades (a count: choosing the
// most trades in sample says nothing of skill out of sample) are refused,
// max_drawdown too (not decomposable), and no error lists either.
func TestObjectivesOneList(t *testing.T) {
	names := ObjectiveNames()
	if want := []string{"sharpe", "sortino", "total_return", "cagr", "win_rate"}; !slices.Equal(names, want) {
		t.Fatalf("objectives over blocks %q, want %q", names, want)
	}
	list := strings.Join(names, ", ")
	for _, n := range names {
		if !slices.Contains(engine.MetricNames, n) {
			t.Errorf("objective %s is not a metric of the table", n)
		}
		if _, err := OptionsFor(engine.Spec{Blocks: 8, Objective: n}); err != nil {
			t.Errorf("objective %s refused: %v", n, err)
		}
	}
	for _, c := range []struct {
		name string
		want error
	}{{"mean", ErrValue}, {"total_trades", ErrValue}, {"max_drawdown", ErrNotDecomposable}, {"calmar", ErrNotDecomposable}, {"nope", ErrValue},
		// SPEC Part 2's, over the trades or the bars held: never from blocks
		{"profit_factor", ErrNotDecomposable}, {"expectancy", ErrNotDecomposable}, {"avg_win", ErrNotDecomposable},
		{"avg_loss", ErrNotDecomposable}, {"best_trade", ErrNotDecomposable}, {"worst_trade", ErrNotDecomposable},
		{"avg_trade_bars", ErrNotDecomposable}, {"exposure", ErrNotDecomposable}, {"sqn", ErrNotDecomposable},
		{"max_drawdown_bars", ErrNotDecomposable}} {
		_, err := OptionsFor(engine.Spec{Blocks: 8, Objective: c.name})
		if err == nil {
			t.Errorf("objective %s with blocks accepted", c.name)
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("objective %s: %v, want %v", c.name, err, c.want)
		}
		msg := err.Error()
		if c.want == ErrNotDecomposable && slices.Index(engine.MetricNames, c.name) >= slices.Index(engine.MetricNames, "profit_factor") &&
			!strings.Contains(msg, "which the block statistics do not keep") {
			t.Errorf("objective %s: %q does not say why the blocks cannot give it", c.name, msg)
		}
		if !strings.Contains(msg, "(objectives over blocks: "+list+")") || strings.Contains(msg, "mean,") || strings.Contains(msg, "mean ") && c.name != "mean" {
			t.Errorf("objective %s: %q does not list exactly the objectives (%s)", c.name, msg, list)
		}
	}
}
