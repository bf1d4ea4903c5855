package parity

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	pass, collapse, reason, info, warn, label lipgloss.Style
}

func newStyles(t *theme.Theme) styles {
	return styles{
		pass:     t.OK,
		collapse: t.Error,
		reason:   t.Error,
		info:     lipgloss.NewStyle(),
		warn:     t.Warning,
		label:    t.Subtle,
	}
}
