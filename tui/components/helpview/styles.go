package helpview

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	help help.Styles
	note lipgloss.Style
}

func newStyles(t *theme.Theme) styles {
	return styles{
		help: help.Styles{ShortKey: t.Key, ShortDesc: t.Desc, ShortSeparator: t.Subtle,
			Ellipsis: t.Subtle, FullKey: t.Key, FullDesc: t.Desc, FullSeparator: t.Subtle},
		note: t.Subtle,
	}
}
