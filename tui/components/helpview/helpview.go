// Package helpview is the help overlay: the full help generated from the
// key map, framed and centred over the screen body.
package helpview

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/common"
)

// View renders the overlay in a w x h body.
func View(ctx *common.Context, w, h int) string {
	t := ctx.Theme
	st := newStyles(t)
	hm := help.New()
	hm.Styles = st.help
	hm.FullSeparator = "   "
	hm.Ellipsis = t.Ellipsis
	groups := ctx.Keys.FullHelp()
	body := hm.FullHelpView(groups)
	if lipgloss.Width(body) > w-4 && len(groups) > 2 {
		// Too wide for one row of columns: two rows, split where both fit
		// (half and half when that fits).
		half := (len(groups) + 1) / 2
		two := func(k int) string { return hm.FullHelpView(groups[:k]) + "\n\n" + hm.FullHelpView(groups[k:]) }
		body = two(half)
		for _, k := range []int{half - 1, half + 1} {
			if lipgloss.Width(body) <= w-4 || k < 1 || k >= len(groups) {
				continue
			}
			if b := two(k); lipgloss.Width(b) <= w-4 {
				body = b
			}
		}
	}
	notes := []string{
		"",
		"Setup: ↑/↓ fields, ←/→ choices, type into ranges; enter runs.",
		"Results: enter on a combo opens its crossover; n/N step its flips.",
		"Filter: column op value, all must hold: sharpe>1 max_drawdown%<20.",
		"? or esc closes this help.",
	}
	for _, n := range notes {
		if strings.Count(body, "\n")+4 > h {
			break
		}
		body += "\n" + st.note.Render(n)
	}
	bw := min(w, lipgloss.Width(body)+4)
	bh := min(h, strings.Count(body, "\n")+3)
	box := t.Pane("Keys", body, bw, bh, true)
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box)
}
