package run

import (
	"github.com/charmbracelet/bubbles/key"

	"sweepbench/tui/keys"
)

// KeyMap is the run screen's keys.
type KeyMap struct {
	Back, Edit, SoFar, Help, Quit key.Binding
}

func newKeyMap(k *keys.KeyMap) KeyMap {
	back := k.Back
	back.SetHelp("esc", "cancel (keeps what completed)")
	edit := k.Edit
	edit.SetHelp("e", "the form: queue the next study")
	return KeyMap{Back: back, Edit: edit, SoFar: k.SoFar, Help: k.Help, Quit: k.Quit}
}

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	k := m.keys
	if m.Asking() {
		return []key.Binding{m.ctx.Keys.Confirm, m.ctx.Keys.Back}
	}
	return []key.Binding{m.ctx.Keys.Back, k.SoFar, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	k := m.keys
	if m.cfg.Detachable {
		return [][]key.Binding{{k.Back, k.SoFar, k.Edit, keepKey}}
	}
	return [][]key.Binding{{k.Back, k.SoFar, k.Edit}}
}
