package common

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestTag: a tagged command's message comes back as a ScreenMsg for the
// screen that asked; no command, or no message, stays nothing.
func TestTag(t *testing.T) {
	if Tag(BenchScreen, nil) != nil {
		t.Fatal("Tag of no command is a command")
	}
	if msg := Tag(RunScreen, func() tea.Msg { return nil })(); msg != nil {
		t.Fatalf("Tag of a command without a message gave %#v", msg)
	}
	msg := Tag(SessionsScreen, func() tea.Msg { return 42 })()
	sm, ok := msg.(ScreenMsg)
	if !ok || sm.ID != SessionsScreen || sm.Msg != 42 {
		t.Fatalf("Tag gave %#v, want ScreenMsg{SessionsScreen, 42}", msg)
	}
	if SessionsScreen.String() != "Sessions" || ScreenID(9).String() != "screen 9" {
		t.Fatalf("names %q, %q", SessionsScreen, ScreenID(9))
	}
}
