package slurm

import (
	"github.com/charmbracelet/bubbles/key"

	"sweepbench/tui/keys"
)

// KeyMap is the Slurm screen's keys.
type KeyMap struct {
	Refresh, Resubmit, Open, Folder  key.Binding
	Left, Right                      key.Binding
	Up, Down, PageUp, PageDown       key.Binding
	Top, Bottom, Confirm, Back, Help key.Binding
}

func newKeyMap(k *keys.KeyMap) KeyMap {
	return KeyMap{Refresh: k.Refresh, Resubmit: k.Resubmit, Folder: k.Folder,
		Open:  key.NewBinding(key.WithKeys(k.Select.Keys()...), key.WithHelp(k.Select.Help().Key, "open the merged session")),
		Left:  key.NewBinding(key.WithKeys(k.Left.Keys()...), key.WithHelp(k.Left.Help().Key, "previous folder")),
		Right: key.NewBinding(key.WithKeys(k.Right.Keys()...), key.WithHelp(k.Right.Help().Key, "next folder")),
		Up:    k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown, Top: k.Top, Bottom: k.Bottom,
		Confirm: k.Confirm, Back: k.Back, Help: k.Help}
}

// ShortHelp implements help.KeyMap: y or any other key while a resubmit
// waits; enter and esc in the folder field.
func (m *Model) ShortHelp() []key.Binding {
	k := m.keys
	switch {
	case m.cfg.Runner == nil:
		return []key.Binding{k.Back, k.Help}
	case m.asking:
		return []key.Binding{k.Confirm, k.Back}
	case m.editing:
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "show it")), k.Back}
	}
	return []key.Binding{k.Refresh, k.Resubmit, k.Open, k.Folder, k.Back, k.Help}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	k := m.keys
	return [][]key.Binding{
		{k.Refresh, k.Resubmit, k.Confirm, k.Open, k.Folder, k.Left, k.Right, k.Back},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
	}
}
