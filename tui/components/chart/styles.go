package chart

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	axis, label, highlight lipgloss.Style
}

func newStyles(t *theme.Theme) styles {
	return styles{
		axis:      t.Subtle,
		label:     t.Subtle,
		highlight: lipgloss.NewStyle().Background(t.Muted),
	}
}
