// Package common is what every workbench screen and component shares: the
// program context (size, theme, keys, the current run), the Screen and
// Pane interfaces the root model lays out, the messages components send
// and the intents screens hand the root (Host), and the read-only views of
// a report the panes display.
package common

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/tui/keys"
	"sweepbench/tui/theme"
)

// Context is created once by the root model and passed by pointer to every
// screen and component. The root model writes the size; the screens write
// the current run and the status line (the study they start or open, its
// results, an error); components read it in View and Update (the metrics
// table sets its filter, Keep).
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

	// The dataset as loaded and as swept (after timeframe and head).
	Raw     *data.Dataset
	Dataset *data.Dataset

	// The current run.
	Study    *engine.Study // the study last started; r reruns it
	Note     string        // what backend auto picked and why
	Results  *Results      // the last report, nil before the first
	Selected int           // combo index (grid order) the panes show; -1 none
	Metric   string        // the metric the table, heatmap and sort use
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

	// Status line.
	Backend, Device string
	LastErr         string
	// Warn is a warning for the status line, shown when there is no
	// error: something went wrong that the user should know of but that
	// did not stop the work (a run that could not be saved).
	Warn string
	// Saved says where the last run was saved ("session 3"), or "".
	Saved string
	// Info is a note for the status line (what a resume did), shown when
	// there is neither an error nor a warning.
	Info string
	// StartErr is a bad flag found at start: it stays on the status line
	// until a run (the form shows a valid value instead).
	StartErr string
	// ErrAside: a key has come since LastErr was raised (and did not
	// raise it again): the status line shows the keys again, not the
	// error, which stays in LastErr.
	ErrAside bool
	errSeq   int

	devices map[string]string // DeviceOf's answers, by backend
}

// SetErr puts err on the status line (on one line), or clears it.
func (c *Context) SetErr(err error) {
	c.errSeq++
	c.ErrAside = false
	if err == nil {
		c.LastErr = ""
		return
	}
	c.LastErr = strings.ReplaceAll(err.Error(), "\n", " ")
}

// ErrSeq counts the calls of SetErr: a key that leaves it unchanged raised
// no error.
func (c *Context) ErrSeq() int { return c.errSeq }

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
	// ErrMsg reports an error for the status line.
	ErrMsg struct{ Err error }
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

// InspectPending is what a pane drawing the selected combo (crossover,
// combo detail) shows while it has nothing to draw: an empty pane before
// any results, a note while the combo is computed, its error in bad. ok is
// false once the inspection is ready to draw.
func (c *Context) InspectPending(w, h int, label, bad lipgloss.Style) (view string, ok bool) {
	t := c.Theme
	switch in := c.Inspect; {
	case c.Results == nil:
		return t.Fit("", w, h), true
	case in == nil:
		return t.Fit(label.Render("computing the selected combo"+t.Ellipsis), w, h), true
	case in.Err != nil:
		return t.Fit(bad.Render(strings.Join(t.Wrap(in.Err.Error(), w), "\n")), w, h), true
	}
	return "", false
}
