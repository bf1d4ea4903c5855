package sessionlist

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	label, value, mark, warn, bad, good lipgloss.Style
}

func newStyles(t *theme.Theme) styles {
	return styles{
		label: t.Subtle,
		value: t.Strong,
		mark:  t.Title,
		warn:  t.Warning,
		bad:   t.Error,
		good:  t.OK,
	}
}
