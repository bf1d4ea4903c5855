package aggregate

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	label, value, warn, bad lipgloss.Style
}

func newStyles(t *theme.Theme) styles {
	return styles{label: t.Subtle, value: t.Strong, warn: t.Warning, bad: t.Error}
}
