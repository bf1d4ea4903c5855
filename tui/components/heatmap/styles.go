package heatmap

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	label, info, value, cursor lipgloss.Style
	plateau                    lipgloss.Style // the plateau best's glyph
	off                        lipgloss.Style // a cell left out (filter, constraints)
	scale                      []lipgloss.Color
	ramp                       []rune
	offGlyph                   rune
	ink                        [2]lipgloss.Color // numbers on dark, on bright cells
}

func newStyles(t *theme.Theme) styles {
	return styles{
		label:    t.Subtle,
		info:     t.Subtle,
		value:    t.Strong,
		cursor:   lipgloss.NewStyle().Bold(true).Foreground(t.Text),
		plateau:  lipgloss.NewStyle().Bold(true).Foreground(t.Bad),
		off:      lipgloss.NewStyle().Foreground(t.Muted),
		scale:    t.HeatScale,
		ramp:     t.HeatRamp,
		offGlyph: t.HeatOff,
		ink:      t.HeatInk,
	}
}

// levels is the number of levels the scale maps to: the colours, or the
// glyphs in plain mode.
func (st styles) levels(plain bool) int {
	if plain {
		return len(st.ramp)
	}
	return len(st.scale)
}
