package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/tui/screens/results"
)

// TestObjectiveInWorkbench: the study's objective and constraints decide
// what "best" is in the workbench as in run's top lists (engine.TopBy):
// the table and the heatmap start on its metric, b selects its top combo
// (from the table and from the heatmap), and sorting by its metric lists
// the combos in TopBy's order, those that meet the constraints first.
func TestObjectiveInWorkbench(t *testing.T) {
	// The constraint excludes the unconstrained best: one trade more than it made.
	f := smallFlags()
	f.Objective = "sortino"
	s, err := f.Spec.Build(testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw := engine.TopBy(rep.Run(engine.FP64), s.Objective, 1)[0]
	f.MinTrades = raw.TotalTrades + 1

	d := newDriver(t, f, 80, 24)
	m := d.m
	d.key("enter")
	run := m.state.Results.R64
	obj := m.state.Results.Objective
	if obj.Name() != "sortino" || obj.MinTrades != f.MinTrades || m.state.Metric != "sortino" {
		t.Fatalf("objective %+v, metric %q", obj, m.state.Metric)
	}
	top := engine.TopBy(run, obj, run.Grid.Len())
	if len(top) == 0 || top[0].Index == raw.Index {
		t.Fatalf("the constraint leaves %d combos, the first %v", len(top), top)
	}
	d.key("b")
	if m.state.Selected != top[0].Index {
		t.Errorf("b in the table selected combo %d, the objective's best is %d", m.state.Selected, top[0].Index)
	}
	m.state.Selected = raw.Index
	m.results.SetFocus(results.HeatmapPane)
	d.key("b")
	if m.state.Selected != top[0].Index {
		t.Errorf("b in the heatmap selected combo %d, the objective's best is %d", m.state.Selected, top[0].Index)
	}
	m.results.SetFocus(results.MetricsPane)
	d.key("s")
	for i, c := range top {
		if m.results.Metrics().Row(i) != c.Index {
			t.Fatalf("sorted row %d is combo %d, the top list's is %d", i, m.results.Metrics().Row(i), c.Index)
		}
	}
	if title := m.results.Metrics().Title(); !strings.Contains(title, fmt.Sprintf(">= %d trades first", f.MinTrades)) {
		t.Errorf("the title %q does not say the constraint", title)
	}
}
