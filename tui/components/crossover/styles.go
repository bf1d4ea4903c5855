package crossover

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	info, label, long, short, flat, mark, bad, good lipgloss.Style
	close, h, h3                                    lipgloss.TerminalColor
}

func newStyles(t *theme.Theme) styles {
	return styles{
		info:  lipgloss.NewStyle(),
		label: t.Subtle,
		long:  lipgloss.NewStyle().Foreground(t.Good),
		short: lipgloss.NewStyle().Foreground(t.Bad),
		flat:  t.Subtle,
		mark:  t.Warning.Bold(true),
		bad:   t.Error,
		good:  t.OK,
		close: t.SeriesClose,
		h:     t.Series64,
		h3:    t.Series32,
	}
}
