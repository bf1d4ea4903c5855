package robustness

import (
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/theme"
)

type styles struct {
	head, label, value, low, moderate, high, warn lipgloss.Style
	// The histogram's bars: the splits whose in-sample best fell to the
	// worse half out of sample (logit <= 0: PBO's share), and the others.
	overfit, held lipgloss.Style
	equity        lipgloss.TerminalColor
	// In plain mode the bars are characters.
	overfitRune, heldRune rune
}

func newStyles(t *theme.Theme) styles {
	st := styles{
		head:     t.Header,
		label:    t.Subtle,
		value:    t.Strong,
		low:      t.OK,
		moderate: t.Warning,
		high:     t.Error,
		warn:     t.Warning,
		overfit:  lipgloss.NewStyle().Foreground(t.Bad),
		held:     lipgloss.NewStyle().Foreground(t.Good),
		equity:   t.Series64,
	}
	st.overfitRune, st.heldRune = '█', '█'
	if t.Plain {
		st.overfitRune, st.heldRune = '#', '='
	}
	return st
}
