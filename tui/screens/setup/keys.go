package setup

import (
	"github.com/charmbracelet/bubbles/key"

	"sweepbench/tui/keys"
)

// KeyMap is the setup screen's keys (the form's fields and the dataset
// list move with the arrows; a text field takes every other key).
type KeyMap struct {
	NextPane, PrevPane, Back          key.Binding
	Up, Down, Left, Right, Select     key.Binding
	Run, Rerun, Help, Quit, ForceQuit key.Binding
	HelpAnywhere                      key.Binding
}

func newKeyMap(k *keys.KeyMap) KeyMap {
	return KeyMap{NextPane: k.NextPane, PrevPane: k.PrevPane, Back: k.Back,
		Up: k.Up, Down: k.Down, Left: k.Left, Right: k.Right, Select: k.Select,
		Run: k.Run, Rerun: k.Rerun, Help: k.Help, Quit: k.Quit, ForceQuit: k.ForceQuit,
		HelpAnywhere: k.HelpAnywhere}
}

// ShortHelp implements help.KeyMap: the keys that work where the focus
// is. A text field and the file picker take q, ? and the other letters:
// there the line leads with esc, which leaves them (then q and ? work),
// and f1, the help from anywhere; on a choice row left and right change it.
func (m *Model) ShortHelp() []key.Binding {
	k := m.keys
	help, quit := keys.Short(k.HelpAnywhere, "help"), keys.Short(k.ForceQuit, "quit")
	switch {
	case m.datasets.Picking():
		return append(m.datasets.PickerKeys(), help, quit)
	case m.focus == 1 && m.form.Typing():
		return []key.Binding{m.leaveField(), help, k.Run, k.NextPane, quit}
	case m.focus == 1:
		return []key.Binding{k.Run, k.Left, k.Right, k.NextPane, k.Back, k.Help, k.Quit}
	}
	return []key.Binding{k.Select, k.NextPane, k.Left, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	k := m.keys
	return [][]key.Binding{
		{k.NextPane, k.PrevPane, k.Back},
		{k.Up, k.Down, k.Left, k.Right, k.Select},
		{k.Run, k.Rerun},
	}
}

// leaveField is esc in a text field of the form, named for where it goes:
// the study that computes, the results on screen, else the dataset pane.
func (m *Model) leaveField() key.Binding {
	desc := "leave field"
	switch {
	case m.host.Running():
		desc = "back to the run"
	case m.state.Results != nil:
		desc = "back to results"
	}
	return keys.Short(m.keys.Back, desc)
}
