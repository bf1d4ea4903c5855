package common

import (
	"fmt"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// ScreenID names a screen of the workbench, in the tab bar's order.
type ScreenID int

const (
	SetupScreen ScreenID = iota
	RunScreen
	ResultsScreen
	SessionsScreen
	BenchScreen
	SlurmScreen
	NumScreens
)

var screenNames = [NumScreens]string{"Setup", "Run", "Results", "Sessions", "Bench", "Slurm"}

// String is the screen's name in the tab bar.
func (id ScreenID) String() string {
	if id < 0 || id >= NumScreens {
		return fmt.Sprintf("screen %d", int(id))
	}
	return screenNames[id]
}

// Screen is what every screen (tui/screens/*) is to the root model, which
// sizes it, routes it the keys while it is on display and the messages
// tagged with its id, and draws it under the tab bar. A screen owns its
// state, its key map (the help.KeyMap the status line and the help
// overlay are generated from) and its async work, whose answers come back
// as a ScreenMsg carrying its id.
type Screen interface {
	help.KeyMap
	// SetSize sets the body's size: the terminal less the tab bar and
	// the status line.
	SetSize(w, h int)
	// Update handles a key (while the screen is on display), a ScreenMsg's
	// inner message for it, or a component's message the root hands it.
	Update(msg tea.Msg) tea.Cmd
	// View is the body, at most the size set (the root fits it).
	View() string
	// Shown tells the screen it is put on display (true) or taken off it
	// (false); the command is what that starts (a text field's cursor).
	Shown(on bool) tea.Cmd
}

// Taker is a screen with a text field: Takes reports whether the field
// takes key as text now, so that the root's own keys (q, ?, S, B) do not
// apply to it.
type Taker interface {
	Takes(key tea.KeyMsg) bool
}

// ScreenMsg is the answer of a screen's async work, tagged with the
// screen that asked (as gh-dash's section messages carry the section's
// id): the root hands Msg to that screen's Update, whatever is on display.
type ScreenMsg struct {
	ID  ScreenID
	Msg tea.Msg
}

// Tag makes cmd's message a ScreenMsg for screen id.
func Tag(id ScreenID, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		msg := cmd()
		if msg == nil {
			return nil
		}
		return ScreenMsg{ID: id, Msg: msg}
	}
}

// Guard turns a panic in f into the message onPanic builds of it, for the
// commands that call the engine or the store off the UI goroutine.
func Guard(f func() tea.Msg, onPanic func(error) tea.Msg) tea.Cmd {
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = onPanic(fmt.Errorf("internal error: %v", r))
			}
		}()
		return f()
	}
}

// Host is the root model as a screen sees it. Do hands it an intent (the
// messages below) and handles it at once, not through the program's
// queue: a key that switches screens is done before the next key, even
// when several keys arrive in one message.
type Host interface {
	Do(intent tea.Msg) tea.Cmd
	// Screen is the screen on display.
	Screen() ScreenID
	// Running reports whether a study computes.
	Running() bool
	// Status is the status line's state now (its messages change it).
	Status() Status
}

// Intents: what a screen asks of the root model through Host.Do, for
// what reaches beyond the screen.
type (
	// ShowMsg puts screen ID on display.
	ShowMsg struct{ ID ScreenID }
	// BackMsg leaves the sessions, the bench or the Slurm screen for the
	// screen they were opened from (the run screen while a study computes).
	BackMsg struct{}
	// FormMsg puts the setup form on display, its fields focused;
	// FromStudy first makes it describe the study on screen (e).
	FormMsg struct{ FromStudy bool }
	// ReportMsg shows a study's report in the results screen: Err says
	// why it is not complete, Asked are the precisions it asked for.
	ReportMsg struct {
		Report *engine.Report
		Asked  []engine.Precision
		Err    error
		// Session is the session the study was saved as (0: not saved):
		// paged results read the rest of their runs from it.
		Session int64
	}
	// OpenedMsg shows a saved session in the results screen. Study is
	// nil when its dataset could not be loaded again (Why says why).
	OpenedMsg struct {
		Session *sessions.Session
		Report  *engine.Report
		Study   *engine.Study
		Why     error
	}
	// ResumeMsg computes what saved session ID is missing, as Study.
	ResumeMsg struct {
		ID    int64
		Study *engine.Study
		Note  string
	}
)
