package datatable

import (
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	table   table.Styles
	flagged lipgloss.Style
	colSel  lipgloss.Style
}

func newStyles(t *theme.Theme, focused bool) styles {
	s := styles{
		table: table.Styles{
			Header:   t.Header.PaddingRight(1),
			Cell:     lipgloss.NewStyle().PaddingRight(1),
			Selected: lipgloss.NewStyle(),
		},
		flagged: t.Error,
		colSel:  t.Header.Reverse(true),
	}
	if focused {
		s.table.Selected = t.Selected
	} else {
		s.table.Selected = t.Strong
	}
	return s
}
