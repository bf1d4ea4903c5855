// Package helpview is the help overlay: the full help generated from the
// key map, framed and centred over the screen body.
package helpview

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/common"
)

// View renders the overlay of the key map km (the screen on display's)
// in a w x h body.
func View(ctx *common.Context, km help.KeyMap, w, h int) string {
	t := ctx.Theme
	st := newStyles(t)
	hm := help.New()
	hm.Styles = st.help
	hm.FullSeparator = "   "
	hm.Ellipsis = t.Ellipsis
	groups := km.FullHelp()
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
	// Two lines of notes, the blank line before them only when there is
	// room for it too (80x24 has room for the notes alone).
	notes := []string{
		"Setup: a text field takes every key, esc leaves it (f1 shows this help there too); enter runs.",
		"Results: enter opens the crossover, n/N flips; / filters; ? or esc closes.",
	}
	if strings.Count(body, "\n")+len(notes)+4 <= h {
		body += "\n"
	}
	for _, n := range notes {
		for _, l := range t.Wrap(n, max(w-6, 20)) {
			if strings.Count(body, "\n")+4 > h {
				break
			}
			body += "\n" + st.note.Render(l)
		}
	}
	bw := min(w, lipgloss.Width(body)+4)
	bh := min(h, strings.Count(body, "\n")+3)
	box := t.Pane("Keys", body, bw, bh, true)
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box)
}
