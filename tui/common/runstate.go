package common

import (
	"strings"

	"github.com/charmbracelet/lipgloss"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/tui/theme"
)

// RunState is the current run: the dataset, the study, its results and
// what the panes show of them. The root model owns it (NewRunState) and
// hands it by pointer to the screens and panes that show or change the
// run: the setup screen loads the dataset, the run screen starts the
// study, the results screen shows its report and selects a combo, the
// metrics table sets the filter; the other panes only read it.
type RunState struct {
	// The dataset as loaded and as swept (after timeframe and head).
	Raw     *data.Dataset
	Dataset *data.Dataset

	Study *engine.Study // the study last started; r reruns it
	Note  string        // what backend auto picked and why
	// Backend and Device are what the study runs on (the status line).
	Backend, Device string

	Results  *Results // the last report, nil before the first
	Selected int      // combo index (grid order) the panes show; -1 none
	Metric   string   // the metric the table, heatmap and sort use
	Prec     engine.Precision
	Inspect  *Inspection // both precisions of Selected; nil while computing
	// Keep reports whether the metrics table's filter keeps combo idx
	// (the heatmap greys out the others); nil keeps every combo.
	Keep func(idx int) bool
	// KeepResult is Keep for a result read from a pager (paged results:
	// one the panes do not hold), nil keeps every combo.
	KeepResult func(c *engine.ComboResult) bool
	// KeepGen counts the changes of what Keep keeps (the metrics table's
	// filter set or cleared), so a pane can reuse what it computed from
	// Keep while it is the same.
	KeepGen int
	// Filter is the metrics table's filter in force, "" when none.
	Filter string
}

// NewRunState is the state before any run: nothing selected, sorted by
// Sharpe.
func NewRunState() *RunState { return &RunState{Selected: -1, Metric: "sharpe"} }

// Inspection is one combo recomputed in both precisions by engine.InspectCombo.
type Inspection struct {
	Index    int
	Combo    engine.Combo
	D64, D32 *engine.ComboDetail // nil when that precision did not run
	// Missing says, per precision that ran but never computed this combo
	// (a cancelled run), why ("fp32 not computed (run cancelled)"): that
	// precision is not recomputed, its detail stays nil.
	Missing map[engine.Precision]string
	Err     error
	// Why says the combo is not recomputed here and why: a note, not an
	// error; D64 and D32 are nil.
	Why string
	// A strategy family's combo: its details have no H, H3 (the chart is
	// of close and the positions); Margin is the fp64 run's margin at
	// each bar (a fraction of close, NaN before First, the first valid
	// bar).
	Margin []float64
	First  int
	// Signal is what the combo's state machine compares, in fp64
	// (strategy.SignalSeries): lines and constant levels on one axis of
	// unit SignalScale ("price", "z", "rsi").
	Signal      []SignalLine
	SignalScale string
}

// SignalLine is one series of a strategy combo's signal chart, or one
// of its levels (Level: every value the threshold).
type SignalLine struct {
	Name   string
	Values []float64
	Level  bool
}

// InspectPending is what a pane drawing the selected combo (crossover,
// combo detail) shows while it has nothing to draw: an empty pane before
// any results (t draws it), a note while the combo is computed, its error in bad. ok is
// false once the inspection is ready to draw.
func (r *RunState) InspectPending(t *theme.Theme, w, h int, label, bad lipgloss.Style) (view string, ok bool) {
	switch in := r.Inspect; {
	case r.Results == nil:
		return t.Fit("", w, h), true
	case in == nil:
		return t.Fit(label.Render("computing the selected combo"+t.Ellipsis), w, h), true
	case in.Err != nil:
		return t.Fit(bad.Render(strings.Join(t.Wrap(in.Err.Error(), w), "\n")), w, h), true
	case in.Why != "":
		return t.Fit(label.Render(strings.Join(t.Wrap(in.Why, w), "\n")), w, h), true
	}
	return "", false
}
