package datasets

import (
	"github.com/charmbracelet/bubbles/filepicker"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	item, itemSel, desc, label, value, err, spark lipgloss.Style
	picker                                        filepicker.Styles
}

func newStyles(t *theme.Theme) styles {
	p := filepicker.Styles{
		DisabledCursor:   t.Subtle,
		Cursor:           t.Key,
		Symlink:          lipgloss.NewStyle(),
		Directory:        t.Key,
		File:             lipgloss.NewStyle(),
		DisabledFile:     t.Subtle,
		DisabledSelected: t.Subtle,
		Permission:       t.Subtle,
		Selected:         t.Strong,
		FileSize:         t.Subtle.Width(7).Align(lipgloss.Right),
		EmptyDirectory:   t.Subtle.SetString("no files here"),
	}
	return styles{
		item:    lipgloss.NewStyle(),
		itemSel: t.Strong,
		desc:    t.Subtle,
		label:   t.Subtle,
		value:   lipgloss.NewStyle(),
		err:     t.Error,
		spark:   lipgloss.NewStyle().Foreground(t.Accent),
		picker:  p,
	}
}
