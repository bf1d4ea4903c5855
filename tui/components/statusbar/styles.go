package statusbar

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	bar, label, value, err, warn lipgloss.Style
	help                         help.Styles
}

func newStyles(t *theme.Theme) styles {
	return styles{
		bar:   lipgloss.NewStyle(),
		label: t.Subtle,
		value: lipgloss.NewStyle(),
		err:   t.Error,
		warn:  t.Warning,
		help: help.Styles{ShortKey: t.Key, ShortDesc: t.Desc, ShortSeparator: t.Subtle,
			Ellipsis: t.Subtle, FullKey: t.Key, FullDesc: t.Desc, FullSeparator: t.Subtle},
	}
}
