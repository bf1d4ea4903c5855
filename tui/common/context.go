// Package common is what every workbench screen and component shares: the
// program context (size, theme, keys, configuration), the run's state the
// root model owns and hands down, the status line's state and the
// messages that change it, the Screen and
// Pane interfaces the root model lays out, the messages components send
// and the intents screens hand the root (Host), and the read-only views of
// a report the panes display.
package common

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/tui/keys"
	"sweepbench/tui/theme"
)

// Context is what every screen and component needs, whatever the run: the
// terminal's size, the theme, the key map, the backends and the
// workbench's configuration (the data folders, deterministic output). It
// is created once by the root model, which alone writes it (the size), and
// passed by pointer to every screen and component. The current run is not
// here: it is the root model's RunState, handed to the screens and panes
// that show it, and the status line is the root's Status, which screens
// change by message (ErrMsg, InfoMsg...).
type Context struct {
	Width, Height int // the terminal
	Theme         *theme.Theme
	Keys          *keys.KeyMap
	Registry      *engine.Registry
	// DataAllowed, when set, says whether a dataset may be read (nil
	// error) before the setup screen loads it (sweepbench serve: only
	// the operator's data folders).
	DataAllowed func(spec string) error
	// DataRoots, when DataAllowed is set or they are given, are the only
	// folders the file picker browses (Config.DataRoots).
	DataRoots []string

	// Deterministic masks what changes from run to run or machine to
	// machine (timings, estimates, device names), for golden tests and
	// screenshots.
	Deterministic bool

	devices map[string]string // DeviceOf's answers, by backend
}

// DeviceOf is the name of b's first device ("" when it lists none),
// asked once per backend.
func (c *Context) DeviceOf(b engine.Backend) string {
	if d, ok := c.devices[b.Name()]; ok {
		return d
	}
	d := ""
	if devs, err := b.Devices(); err == nil && len(devs) > 0 {
		d = devs[0].Name
	}
	if c.devices == nil {
		c.devices = map[string]string{}
	}
	c.devices[b.Name()] = d
	return d
}

// Duration formats d for display, or "-" when the context is deterministic.
func (c *Context) Duration(d time.Duration) string {
	if c.Deterministic {
		return "-"
	}
	return FormatDuration(d)
}

// DeviceName is the device for display ("-" when deterministic).
func (c *Context) DeviceName(d string) string {
	if c.Deterministic && d != "" {
		return "(device)"
	}
	return d
}

// Messages the components send to the root model.
type (
	// SelectMsg selects a combo by grid index in every pane.
	SelectMsg struct{ Index int }
	// MetricMsg makes Name the metric of the table, heatmap and sort.
	MetricMsg struct{ Name string }
	// LoadMsg asks the root to load a dataset (a path or embedded:NAME).
	LoadMsg struct{ Spec string }
	// RunMsg asks the root to run Study, or the study the form describes
	// when Study is nil (a large CPU grid is run when asked twice).
	RunMsg struct{ Study *engine.Study }
	// FormChangedMsg tells the root the form's values changed.
	FormChangedMsg struct{}
)

// Send wraps a message in a command.
func Send(m tea.Msg) tea.Cmd { return func() tea.Msg { return m } }
