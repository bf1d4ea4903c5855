// Package keys holds the workbench's bindings, one key.Binding per key,
// shared by the components (through common.Context.Keys). Each screen
// (tui/screens/*) builds its own key map of them, which implements
// help.KeyMap: the short help in the status line and the help overlay
// are generated from it, never written by hand.
package keys

import "github.com/charmbracelet/bubbles/key"

// KeyMap holds every binding of the workbench.
type KeyMap struct {
	// General.
	Quit, ForceQuit, Help, Back key.Binding
	// HelpAnywhere opens and closes the help from anywhere, a text
	// field included (where ? is text).
	HelpAnywhere       key.Binding
	NextPane, PrevPane key.Binding
	// Navigation.
	Up, Down, Left, Right key.Binding
	PageUp, PageDown      key.Binding
	Top, Bottom, Select   key.Binding
	// Setup and runs.
	Run, Rerun, Edit, SoFar key.Binding
	// Results.
	Filter, Sort, Best, NextMetric, PrevMetric key.Binding
	NextFlip, PrevFlip, Precision              key.Binding
	Robustness, Columns                        key.Binding
	// Export writes the selected combo's trades and bars to files.
	Export key.Binding
	// A suite's datasets (results screen).
	PrevDataset, NextDataset, AllDatasets key.Binding
	// Heatmap.
	HeatScale, HeatZoom, HeatValues key.Binding
	// A strategy grid's heatmap: its axes, how the others are reduced,
	// the reduced axes' stepped value.
	HeatX, HeatY, HeatReduce, HeatStepPrev, HeatStepNext key.Binding
	// Screens.
	Sessions, Bench, Slurm key.Binding
	// Sessions browser.
	Mark, Compare, Delete, Resume, Confirm key.Binding
	// Slurm screen.
	Refresh, Resubmit, Folder key.Binding
}

// Default returns the key map of issue 3.
func Default() *KeyMap {
	return &KeyMap{
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit (anywhere)")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		// f1, or ctrl+/ (sent as ctrl+_) where the terminal keeps f1 for
		// itself (VS Code's, GNOME Terminal's).
		HelpAnywhere: key.NewBinding(key.WithKeys("f1", "ctrl+_"), key.WithHelp("f1", "help (anywhere)")),
		Back:         key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel/back")),
		NextPane:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "pane")),
		PrevPane:     key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),

		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Left:     key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "left/prev")),
		Right:    key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "right/next")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Select:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "select/open")),

		Run:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
		Rerun: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "rerun")),
		Edit:  key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit")),
		SoFar: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "results so far")),

		Filter:       key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Sort:         key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by metric")),
		Best:         key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "jump to best (objective)")),
		NextMetric:   key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "metric")),
		PrevMetric:   key.NewBinding(key.WithKeys("M"), key.WithHelp("M", "previous metric")),
		NextFlip:     key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next flip")),
		PrevFlip:     key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous flip")),
		Precision:    key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "fp64 / fp32")),
		Robustness:   key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "robustness pane (PBO, DSR, walk-forward)")),
		Columns:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compact / all columns")),
		Export:       key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "export trades & bars")),
		HeatScale:    key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "heat scale: quantile/clip/linear")),
		HeatZoom:     key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "heatmap overview / detail")),
		HeatValues:   key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "heatmap cell values")),
		HeatX:        key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "heatmap x axis (strategy)")),
		HeatY:        key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "heatmap y axis (strategy)")),
		HeatReduce:   key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "other axes: best/median/stepped")),
		HeatStepPrev: key.NewBinding(key.WithKeys("<", ","), key.WithHelp("<", "step other axes back")),
		HeatStepNext: key.NewBinding(key.WithKeys(">", "."), key.WithHelp(">", "step other axes on")),

		PrevDataset: key.NewBinding(key.WithKeys("["), key.WithHelp("[", "prev dataset")),
		NextDataset: key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next dataset")),
		AllDatasets: key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "all datasets")),

		Sessions: key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "saved sessions")),
		Bench:    key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "bench (ladder)")),
		Slurm:    key.NewBinding(key.WithKeys("J"), key.WithHelp("J", "Slurm job folder")),
		Mark:     key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark (2 to compare)")),
		Compare:  key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compare marked")),
		Delete:   key.NewBinding(key.WithKeys("x", "delete"), key.WithHelp("x/del", "remove")),
		Resume:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "resume")),
		Confirm:  key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes")),

		Refresh:  key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "refresh now")),
		Resubmit: key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "resubmit failed/missing tasks")),
		Folder:   key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "type a job folder")),
	}
}

// Short is b described as desc (its keys and key name unchanged): a
// binding as the status line names it where the help's words are too long
// or depend on where the focus is.
func Short(b key.Binding, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc))
}
