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
}

func newKeyMap(k *keys.KeyMap) KeyMap {
	return KeyMap{NextPane: k.NextPane, PrevPane: k.PrevPane, Back: k.Back,
		Up: k.Up, Down: k.Down, Left: k.Left, Right: k.Right, Select: k.Select,
		Run: k.Run, Rerun: k.Rerun, Help: k.Help, Quit: k.Quit, ForceQuit: k.ForceQuit}
}

// ShortHelp implements help.KeyMap: in a text field only the keys that
// leave it; on a choice row left and right change it.
func (m *Model) ShortHelp() []key.Binding {
	k := m.keys
	switch {
	case m.focus == 1 && m.form.Typing():
		return []key.Binding{k.Run, k.NextPane, k.Back, k.ForceQuit}
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
