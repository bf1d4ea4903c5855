// Package keys is the workbench's one key map. It implements help.KeyMap,
// so the short help in the status line and the full help overlay are
// generated from it, never written by hand.
package keys

import "github.com/charmbracelet/bubbles/key"

// Context says which bindings the short help shows.
type Context int

const (
	Setup Context = iota
	SetupTyping
	SetupChoice // a choice row of the form: left/right change it, enter runs
	Running
	Results
	Sessions
	SessionsConfirm
	Bench
	BenchRunning
)

// KeyMap holds every binding of the workbench.
type KeyMap struct {
	// General.
	Quit, ForceQuit, Help, Back key.Binding
	NextPane, PrevPane          key.Binding
	// Navigation.
	Up, Down, Left, Right key.Binding
	PageUp, PageDown      key.Binding
	Top, Bottom, Select   key.Binding
	// Setup and runs.
	Run, Rerun, Edit key.Binding
	// Results.
	Filter, Sort, Best, NextMetric, PrevMetric key.Binding
	NextFlip, PrevFlip, Precision              key.Binding
	Robustness, Columns                        key.Binding
	// Heatmap.
	HeatScale, HeatZoom, HeatValues key.Binding
	// Screens.
	Sessions, Bench key.Binding
	// Sessions browser.
	Mark, Compare, Delete, Resume, Confirm key.Binding

	// Context selects the short help; the root model sets it.
	Context Context
}

// Default returns the key map of issue 3.
func Default() *KeyMap {
	return &KeyMap{
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit (anywhere)")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel/back")),
		NextPane:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "pane")),
		PrevPane:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),

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

		Filter:     key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Sort:       key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by metric")),
		Best:       key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "jump to best (objective)")),
		NextMetric: key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "metric")),
		PrevMetric: key.NewBinding(key.WithKeys("M"), key.WithHelp("M", "previous metric")),
		NextFlip:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next flip")),
		PrevFlip:   key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous flip")),
		Precision:  key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "fp64 / fp32")),
		Robustness: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "robustness pane (PBO, DSR, walk-forward)")),
		Columns:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compact / all columns")),
		HeatScale:  key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "heat scale: quantile/clip/linear")),
		HeatZoom:   key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "heatmap overview / detail")),
		HeatValues: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "heatmap cell values")),

		Sessions: key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "saved sessions")),
		Bench:    key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "bench (ladder)")),
		Mark:     key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark (2 to compare)")),
		Compare:  key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compare marked")),
		Delete:   key.NewBinding(key.WithKeys("x", "delete"), key.WithHelp("x/del", "remove")),
		Resume:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "resume")),
		Confirm:  key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes")),
	}
}

// ShortHelp implements help.KeyMap: the bindings that matter on the
// current screen.
func (k *KeyMap) ShortHelp() []key.Binding {
	switch k.Context {
	case SetupTyping:
		return []key.Binding{k.Run, k.NextPane, k.Back, k.ForceQuit}
	case SetupChoice:
		return []key.Binding{k.Run, k.Left, k.Right, k.NextPane, k.Back, k.Help, k.Quit}
	case Running:
		return []key.Binding{k.Back, k.Help, k.Quit}
	case Results:
		return []key.Binding{k.NextPane, k.Select, k.NextFlip, k.NextMetric, k.Rerun, k.Edit, k.Help, k.Quit}
	case Sessions:
		return []key.Binding{k.Select, k.Mark, k.Compare, k.Delete, k.Resume, k.Back, k.Help}
	case SessionsConfirm:
		return []key.Binding{k.Confirm, k.Back}
	case Bench:
		return []key.Binding{k.Run, k.Back, k.Help, k.Quit}
	case BenchRunning:
		return []key.Binding{k.Back, k.Help, k.Quit}
	}
	return []key.Binding{k.Select, k.NextPane, k.Left, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap: every binding, in columns.
func (k *KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.NextPane, k.PrevPane, k.Help, k.Back, k.Quit, k.ForceQuit},
		{k.Up, k.Down, k.Left, k.Right, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Select, k.Rerun, k.Edit, k.Filter, k.Sort, k.Best, k.Columns},
		{k.NextMetric, k.PrevMetric, k.Precision, k.NextFlip, k.PrevFlip, k.Robustness, k.HeatScale, k.HeatZoom, k.HeatValues},
		{k.Sessions, k.Bench, k.Mark, k.Compare, k.Delete, k.Resume},
	}
}
