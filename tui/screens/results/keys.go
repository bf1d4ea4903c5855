package results

import (
	"github.com/charmbracelet/bubbles/key"

	"sweepbench/tui/keys"
)

// KeyMap is the results screen's keys; the focused pane reads the
// navigation keys itself.
type KeyMap struct {
	NextPane, PrevPane, Back, Select, Edit, Rerun           key.Binding
	Up, Down, Left, Right, PageUp, PageDown, Top, Bottom    key.Binding
	Filter, Sort, Best, Columns, Export                     key.Binding
	NextMetric, PrevMetric, Precision, NextFlip, PrevFlip   key.Binding
	Robustness, HeatScale, HeatZoom, HeatValues, Help, Quit key.Binding
	PrevDataset, NextDataset, AllDatasets                   key.Binding
	HelpAnywhere, ForceQuit                                 key.Binding
	// A strategy grid's heatmap: its axes, reduction and steps.
	HeatX, HeatY, HeatReduce, HeatStepPrev, HeatStepNext key.Binding
}

func newKeyMap(k *keys.KeyMap) KeyMap {
	return KeyMap{NextPane: k.NextPane, PrevPane: k.PrevPane, Back: k.Back, Select: k.Select, Edit: k.Edit, Rerun: k.Rerun,
		Up: k.Up, Down: k.Down, Left: k.Left, Right: k.Right, PageUp: k.PageUp, PageDown: k.PageDown, Top: k.Top, Bottom: k.Bottom,
		Filter: k.Filter, Sort: k.Sort, Best: k.Best, Columns: k.Columns, Export: k.Export,
		NextMetric: k.NextMetric, PrevMetric: k.PrevMetric, Precision: k.Precision, NextFlip: k.NextFlip, PrevFlip: k.PrevFlip,
		Robustness: k.Robustness, HeatScale: k.HeatScale, HeatZoom: k.HeatZoom, HeatValues: k.HeatValues, Help: k.Help, Quit: k.Quit,
		PrevDataset: k.PrevDataset, NextDataset: k.NextDataset, AllDatasets: k.AllDatasets,
		HelpAnywhere: k.HelpAnywhere, ForceQuit: k.ForceQuit,
		HeatX: k.HeatX, HeatY: k.HeatY, HeatReduce: k.HeatReduce, HeatStepPrev: k.HeatStepPrev, HeatStepNext: k.HeatStepNext}
}

// ShortHelp implements help.KeyMap: a study of a suite leads with the
// dataset keys; the filter's text field, which takes q and ?, shows the
// keys that leave it and f1, the help from anywhere.
func (m *Model) ShortHelp() []key.Binding {
	k := m.keys
	if m.Editing() {
		return []key.Binding{keys.Short(k.Select, "apply filter"), keys.Short(k.Back, "leave filter"),
			keys.Short(k.HelpAnywhere, "help"), keys.Short(k.ForceQuit, "quit")}
	}
	if m.AllDatasets() {
		return []key.Binding{k.NextPane, k.PrevDataset, k.NextDataset, k.AllDatasets, k.NextMetric, k.Best, k.Help, k.Quit}
	}
	if _, ok := m.InSuite(); ok {
		return []key.Binding{k.PrevDataset, k.NextDataset, k.AllDatasets, k.NextPane, k.Select, k.NextMetric, k.Help, k.Quit}
	}
	return []key.Binding{k.NextPane, k.Select, k.NextFlip, k.NextMetric, k.Rerun, k.Edit, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	k := m.keys
	out := [][]key.Binding{
		{k.NextPane, k.PrevPane, k.Back, k.PrevDataset, k.NextDataset, k.AllDatasets},
		{k.Up, k.Down, k.Left, k.Right, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Select, k.Rerun, k.Edit, k.Filter, k.Sort, k.Best, k.Columns, k.Export},
		{k.NextMetric, k.PrevMetric, k.Precision, k.NextFlip, k.PrevFlip, k.Robustness, k.HeatScale, k.HeatZoom, k.HeatValues},
	}
	if r := m.state.Results; r != nil && r.Grid.Strategy != nil {
		// A strategy grid's heatmap: which two parameters, and what of the others.
		out = append(out, []key.Binding{k.HeatX, k.HeatY, k.HeatReduce, k.HeatStepPrev, k.HeatStepNext})
	}
	return out
}
