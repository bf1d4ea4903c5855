package bench

import (
	"github.com/charmbracelet/bubbles/key"

	"sweepbench/tui/keys"
)

// KeyMap is the bench screen's keys.
type KeyMap struct {
	Run, Back, Help, Quit key.Binding
}

func newKeyMap(k *keys.KeyMap) KeyMap {
	return KeyMap{Run: k.Run, Back: k.Back, Help: k.Help, Quit: k.Quit}
}

// ShortHelp implements help.KeyMap: esc cancels a ladder that runs.
func (m *Model) ShortHelp() []key.Binding {
	if m.run != nil {
		return []key.Binding{m.keys.Back, m.keys.Help, m.keys.Quit}
	}
	return []key.Binding{m.keys.Run, m.keys.Back, m.keys.Help, m.keys.Quit}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{{m.keys.Run, m.keys.Back}}
}
