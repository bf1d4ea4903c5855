package runview

import (
	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	title, label, value, warn, chart lipgloss.Style
	bar                              []progress.Option
}

func newStyles(t *theme.Theme) styles {
	s := styles{
		title: t.Title,
		label: t.Subtle,
		value: t.Strong,
		warn:  t.Warning,
		chart: lipgloss.NewStyle().Foreground(t.Accent),
	}
	if t.Plain {
		s.bar = []progress.Option{progress.WithFillCharacters('#', '.'), progress.WithoutPercentage()}
	} else {
		s.bar = []progress.Option{progress.WithGradient(t.ProgressFrom, t.ProgressTo), progress.WithoutPercentage()}
	}
	return s
}
