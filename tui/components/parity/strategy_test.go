package parity

import (
	"regexp"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
	_ "sweepbench/strategy"
	"sweepbench/tui/common"
	"sweepbench/tui/internal/tuitest"
)

// TestParityShowsCrossParameters: a cross study's parity table has the
// grid's parameter columns, and each row the values of its combo (the
// grid's, by the row's combo index), not hma 0, hma3 0.
func TestParityShowsCrossParameters(t *testing.T) {
	reg := &engine.Registry{}
	reg.Register(reference.New())
	spec := tuitest.SmallSpec()
	spec.Strategy, spec.Params = "cross", map[string]string{"fast": "ema:5:15:5", "slow": "wma:20:40:20"}
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(t.Context(), st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Parity == nil {
		t.Fatal("no parity report")
	}
	state := common.NewRunState()
	state.Results, state.Prec = common.NewResults(rep, nil), engine.FP64
	m := New(tuitest.Context(reg), state)
	m.SetSize(160, 20)
	m.Reload()
	g := state.Results.Grid
	if len(m.rows) != g.Len() {
		t.Fatalf("%d rows, want %d", len(m.rows), g.Len())
	}
	lines := strings.Split(m.View(), "\n")
	head := -1
	for k, l := range lines {
		if regexp.MustCompile(`fast_kind\s+fast\s+slow_kind\s+slow\s+trades`).MatchString(l) {
			head = k
		}
	}
	if head < 0 {
		t.Fatalf("no header of the parameters:\n%s", m.View())
	}
	lines = lines[head:]
	for k, i := range m.rows {
		p := g.Point(i)
		re := regexp.MustCompile(`^\W*ema\s+` + p[0].Text + `\s+wma\s+` + p[1].Text + `\s`)
		if k+1 >= len(lines) || !re.MatchString(lines[k+1]) {
			t.Fatalf("row %d (combo %d, %s) is %q", k, i, g.Label(i), lines[min(k+1, len(lines)-1)])
		}
	}
}
