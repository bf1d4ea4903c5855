package tui

import (
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

func TestPaneFocusAndBack(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	m := d.m
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen {
		t.Fatalf("screen %d after the run, want results (last error %q)", m.screen, m.status.LastErr)
	}
	want := []results.Pane{results.ParityPane, results.HeatmapPane, results.CrossoverPane, results.ComboPane, results.RobustnessPane, results.MetricsPane}
	for i, p := range want {
		d.key("tab")
		if m.results.Focus() != p {
			t.Fatalf("tab %d: focus %s, want %s", i+1, results.PaneNames[m.results.Focus()], results.PaneNames[p])
		}
		if !strings.Contains(strings.SplitN(m.View(), "\n", 2)[0], "["+results.PaneNames[p]+"]") {
			t.Fatalf("tab %d: the header does not mark %s", i+1, results.PaneNames[p])
		}
	}
	d.key("shift+tab")
	if m.results.Focus() != results.RobustnessPane {
		t.Fatalf("shift+tab: focus %s", results.PaneNames[m.results.Focus()])
	}
	// The heatmap cursor selects a combo for every pane.
	d.key("tab", "tab", "tab") // metrics, parity, heatmap
	if m.results.Focus() != results.HeatmapPane {
		t.Fatalf("focus %s, want Heatmap", results.PaneNames[m.results.Focus()])
	}
	d.key("g")
	d.settle()
	if m.state.Selected != 0 || m.state.Inspect == nil || m.state.Inspect.Index != 0 {
		t.Fatalf("g on the heatmap: selected %d", m.state.Selected)
	}
	d.key("l", "j")
	d.settle()
	if got := m.state.Results.Grid.At(m.state.Selected); got != (engine.Combo{HMA: 20, HMA3: 24}) {
		t.Fatalf("after l, j: combo %+v, want hma 20 x hma3 24", got)
	}
	// enter opens the crossover of the selected combo; n steps its flips.
	d.key("enter")
	if m.results.Focus() != results.CrossoverPane {
		t.Fatalf("enter: focus %s", results.PaneNames[m.results.Focus()])
	}
	first := m.results.Crossover().Title()
	d.key("n")
	if m.results.Crossover().Title() == first {
		t.Fatalf("n did not move to the next flip (%s)", first)
	}
	// Metric keys change the heatmap and the table together.
	d.key("m")
	if m.state.Metric != "sortino" || !strings.Contains(m.results.Heatmap().Title(), "sortino") {
		t.Fatalf("m: metric %q, heatmap %q", m.state.Metric, m.results.Heatmap().Title())
	}
	// Filter and sort in the table.
	d.key("tab", "tab") // combo, metrics
	d.key("/", "h", "m", "a", "=", "2", "0", "enter")
	if got := m.results.Metrics().Title(); !strings.HasPrefix(got, "Metrics: 3 of 9") {
		t.Fatalf("filter hma=20: %q, want 3 of 9 combos", got)
	}
	d.key("b")
	if m.state.Results.Grid.At(m.state.Selected).HMA != 20 {
		t.Fatalf("b jumped outside the filter: %+v", m.state.Results.Grid.At(m.state.Selected))
	}
	// esc goes back to the form, esc again back to the results.
	d.key("esc")
	if m.screen != common.SetupScreen {
		t.Fatalf("esc: screen %d, want setup", m.screen)
	}
	d.key("esc")
	if m.screen != common.ResultsScreen {
		t.Fatalf("esc from setup with results: screen %d", m.screen)
	}
	// r reruns the same study.
	before := m.state.Results
	d.key("r")
	if m.state.Results == before || m.screen != common.ResultsScreen {
		t.Fatal("r did not rerun")
	}
}

// TestEscAndFilterFromPanes: esc from the crossover opened with enter goes
// back to the pane enter came from, not to the form (so what is typed next
// edits nothing); / from any pane opens the table's filter, and the text
// typed after it is the filter, not a string of commands (r would rerun).
func TestEscAndFilterFromPanes(t *testing.T) {
	d := newDriver(t, smallFlags(), 120, 40)
	m := d.m
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen {
		t.Fatalf("screen %d after the run (last error %q)", m.screen, m.status.LastErr)
	}
	d.key("enter") // on the metrics table: the selected combo's crossover
	if m.results.Focus() != results.CrossoverPane {
		t.Fatalf("enter: focus %s, want Crossover", results.PaneNames[m.results.Focus()])
	}
	d.key("esc")
	if m.screen != common.ResultsScreen || m.results.Focus() != results.MetricsPane {
		t.Fatalf("esc from the crossover: screen %d focus %s, want the results' Metrics pane", m.screen, results.PaneNames[m.results.Focus()])
	}
	d.key("tab", "tab", "enter", "esc") // heatmap -> crossover -> back to the heatmap
	if m.results.Focus() != results.HeatmapPane {
		t.Fatalf("esc from a crossover opened on the heatmap: focus %s", results.PaneNames[m.results.Focus()])
	}
	d.key("esc") // from a pane enter did not open: the table
	if m.results.Focus() != results.MetricsPane || m.screen != common.ResultsScreen {
		t.Fatalf("esc from the heatmap: focus %s", results.PaneNames[m.results.Focus()])
	}

	before := m.state.Results
	d.key("tab") // parity
	d.key("/", "h", "m", "a", "=", "2", "0", "enter")
	if m.results.Focus() != results.MetricsPane {
		t.Fatalf("/ from the parity pane: focus %s, want Metrics", results.PaneNames[m.results.Focus()])
	}
	if got := m.results.Metrics().Title(); !strings.HasPrefix(got, "Metrics: 3 of 9") {
		t.Fatalf("filter hma=20 typed after / on the parity pane: %q, want 3 of 9 combos", got)
	}
	d.key("tab", "/", "r", "esc") // r inside the filter is text, not a rerun
	d.settle()
	if m.screen != common.ResultsScreen || m.state.Results != before {
		t.Fatal("the r typed after / reran the study")
	}
}
