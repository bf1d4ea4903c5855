package heatmap

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	label, info, value, cursor lipgloss.Style
	plateau                    lipgloss.Style // the plateau best's glyph
	scale                      []lipgloss.Color
	ramp                       []rune
}

func newStyles(t *theme.Theme) styles {
	return styles{
		label:   t.Subtle,
		info:    t.Subtle,
		value:   t.Strong,
		cursor:  lipgloss.NewStyle().Bold(true).Foreground(t.Text),
		plateau: lipgloss.NewStyle().Bold(true).Foreground(t.Bad),
		scale:   t.HeatScale,
		ramp:    t.HeatRamp,
	}
}
