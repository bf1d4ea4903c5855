package metrics

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	info, err, prompt lipgloss.Style
}

func newStyles(t *theme.Theme) styles {
	return styles{info: t.Subtle, err: t.Error, prompt: t.Key}
}
