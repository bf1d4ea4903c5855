package detail

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	label, bad, warn lipgloss.Style
	e64, e32         lipgloss.TerminalColor
}

func newStyles(t *theme.Theme) styles {
	return styles{label: t.Subtle, bad: t.Error, warn: t.Warning, e64: t.Series64, e32: t.Series32}
}
