package common

import tea "github.com/charmbracelet/bubbletea"

// Component is what every component (tui/components/*) with a size is to
// the screen that holds it: an inner size the screen sets and a body of
// exactly that size (the table, the form, the run view and every Pane).
type Component interface {
	// SetSize sets the inner size, cells (a pane's frame excluded).
	SetSize(w, h int)
	// View is the body, exactly the size set.
	View() string
}

// Pane is what every pane of a screen is to the root model, which lays
// them out and routes keys to the focused one: a title for its frame, an
// inner size, a body of exactly that size, and the keys and messages it
// handles itself (the results panes, the sessions list, the bench).
type Pane interface {
	Component
	// Title is the frame's title, e.g. "Metrics: 9 of 9 combos".
	Title() string
	// Update handles a key or a message meant for the pane.
	Update(msg tea.Msg) tea.Cmd
}

// Focuser is a Pane that draws itself differently when it has the keys
// (a table's cursor row).
type Focuser interface {
	Focus(bool)
}
