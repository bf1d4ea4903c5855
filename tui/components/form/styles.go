package form

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	label, labelFocus, value, valueFocus, err, info, note, button lipgloss.Style
}

func newStyles(t *theme.Theme) styles {
	return styles{
		label:      t.Subtle,
		labelFocus: t.Title,
		value:      lipgloss.NewStyle(),
		valueFocus: t.Strong,
		err:        t.Error,
		info:       lipgloss.NewStyle(),
		note:       t.Subtle,
		button:     t.Title,
	}
}
