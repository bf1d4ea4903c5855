package sessions

import (
	"github.com/charmbracelet/bubbles/key"

	"sweepbench/tui/keys"
)

// KeyMap is the sessions screen's keys.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Select, Mark, Compare, Delete, Resume   key.Binding
	Confirm, Back, Help                     key.Binding
}

func newKeyMap(k *keys.KeyMap) KeyMap {
	return KeyMap{Up: k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown, Top: k.Top, Bottom: k.Bottom,
		Select: k.Select, Mark: k.Mark, Compare: k.Compare, Delete: k.Delete, Resume: k.Resume,
		Confirm: k.Confirm, Back: k.Back, Help: k.Help}
}

// ShortHelp implements help.KeyMap: y or esc while a removal waits.
func (m *Model) ShortHelp() []key.Binding {
	k := m.keys
	if m.Confirming() {
		return []key.Binding{k.Confirm, k.Back}
	}
	return []key.Binding{k.Select, short(k.Mark, "mark"), short(k.Compare, "compare"), k.Delete, k.Resume, k.Back, k.Help}
}

// short is b with the shorter description the status line has room for
// ("space mark"); the help screen keeps the full one.
func short(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	k := m.keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Select, k.Mark, k.Compare, k.Delete, k.Resume, k.Confirm, k.Back},
	}
}
