package form_test

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
	"sweepbench/tui/keys"
	"sweepbench/tui/theme"
)

// TestSetValuesPutsTheCursorAtTheEnd: a value put into a text field (e
// fills the form from a study) is followed by what is typed next; it went
// where the cursor had been ("bedded:f, nosuch.csv" in the middle of
// "embedded:filusdt-1m": fresh-user trial).
func TestSetValuesPutsTheCursorAtTheEnd(t *testing.T) {
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true), Keys: keys.Default()}
	m := form.New(ctx, []form.Spec{{Key: form.Data, Label: "data", Value: "abcdefghij"}})
	m.SetSize(60, 10)
	m.Focus(true)
	for range 5 {
		m.Update(tea.KeyMsg{Type: tea.KeyLeft})
	}
	m.SetValues(map[string]string{form.Data: "embedded:filusdt-1m"})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(",x")})
	if got := m.Values()[form.Data]; got != "embedded:filusdt-1m,x" {
		t.Fatalf("typed after SetValues: %q, want %q", got, "embedded:filusdt-1m,x")
	}
}
