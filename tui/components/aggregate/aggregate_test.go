package aggregate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/tui/common"
	"sweepbench/tui/components/aggregate"
	"sweepbench/tui/keys"
	"sweepbench/tui/theme"
)

// TestOpensAtTheTop: an aggregate shown while a combo below the top is
// selected lists from its first row (the best median) once the pane is
// sized, the cursor on the selected combo; it used to scroll the selected
// combo to the first line, hiding the best ones (fresh-user trial).
func TestOpensAtTheTop(t *testing.T) {
	hma, err := engine.ParseRange("hma", "10:109:1")
	if err != nil {
		t.Fatal(err)
	}
	h3, err := engine.ParseRange("hma3", "12:12:1")
	if err != nil {
		t.Fatal(err)
	}
	g := engine.Grid{HMA: hma, HMA3: h3}
	obj, err := engine.ParseObjective("sharpe", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	agg := suite.NewAggregator(g, []string{"a"}, obj, engine.FP64)
	rs := make([]engine.ComboResult, g.Len())
	for i := range rs {
		rs[i].Index, rs[i].Combo = i, g.At(i)
		rs[i].Sharpe = float64(i) // the best median: the last combo
	}
	agg.Add(0, engine.FP64, rs)
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true), Keys: keys.Default()}
	m := aggregate.New(ctx, &common.RunState{Selected: g.Len() - 4}) // the fourth best
	m.Set(agg.Aggregate(), "")
	m.SetSize(60, 20)
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) < 3 || !strings.Contains(lines[1], fmt.Sprintf("%d", g.At(g.Len()-1).HMA)) {
		t.Fatalf("the first row is not the best median (hma %d):\n%s", g.At(g.Len()-1).HMA, v)
	}
	if !strings.Contains(v, fmt.Sprintf("hma %d x hma3 12: median sharpe", g.At(g.Len()-4).HMA)) {
		t.Fatalf("the selected combo's figures are not shown:\n%s", v)
	}
}
