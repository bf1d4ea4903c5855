package bench

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	title, label, value, warn, bad, good lipgloss.Style
	bar64, bar32                         lipgloss.Style
	glyph64, glyph32                     string
}

func newStyles(t *theme.Theme) styles {
	s := styles{
		title: t.Title,
		label: t.Subtle,
		value: t.Strong,
		warn:  t.Warning,
		bad:   t.Error,
		good:  t.OK,
		bar64: lipgloss.NewStyle().Foreground(t.Series64),
		bar32: lipgloss.NewStyle().Foreground(t.Series32),
	}
	if t.Plain {
		// Without colour the precision shows in the glyph.
		s.glyph64, s.glyph32 = "#", "="
	} else {
		s.glyph64, s.glyph32 = "█", "█"
	}
	return s
}
