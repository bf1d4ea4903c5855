// Package statusbar is the bottom line: dataset, backend and device on the
// left; the last error, or the short help generated from the key map, on
// the right.
package statusbar

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"sweepbench/engine/data"
	"sweepbench/tui/common"
)

// Model is the status line.
type Model struct {
	ctx    *common.Context
	state  *common.RunState // the run it shows
	status *common.Status   // the error, warning or note it shows
	w      int
	keys   help.KeyMap
}

// New returns the status line of the run state and status the root model
// owns.
func New(ctx *common.Context, state *common.RunState, status *common.Status) *Model {
	return &Model{ctx: ctx, state: state, status: status}
}

// SetKeys sets the key map whose short help the line shows (the screen
// on display's).
func (m *Model) SetKeys(k help.KeyMap) { m.keys = k }

// SetWidth sets its width.
func (m *Model) SetWidth(w int) { m.w = w }

// View renders exactly one line of width w.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	ds := "no dataset"
	if m.state.Dataset != nil {
		ds = m.state.Dataset.Info.Name
	}
	if s := m.state.Study; s != nil && m.state.Results != nil {
		ds = s.Dataset.Info.Name
	} else if r := m.state.Results; r != nil && r.Report != nil {
		ds = r.Report.Dataset.Name // a saved session whose data is not loaded
	}
	ds = common.ShortPath(data.Sanitize(ds), max(m.w/3, 24))
	segs := []string{ds, orDash(m.state.Backend)}
	if m.status.Saved != "" {
		segs = []string{ds, m.status.Saved, orDash(m.state.Backend)}
	}
	if d := m.ctx.DeviceName(m.state.Device); d != "" {
		segs = append(segs, d)
	}
	left := func(n int) string {
		return " " + st.value.Render(strings.Join(segs[:n], t.Sep))
	}
	lastErr := m.status.LastErr
	if m.status.ErrAside {
		lastErr = "" // a key since: the key hints again
	}
	if lastErr != "" || m.status.Warn != "" || m.status.Info != "" {
		text, style := "error: "+lastErr, st.err
		switch {
		case lastErr != "":
		case m.status.Warn != "":
			text, style = "warning: "+m.status.Warn, st.warn
		default:
			text, style = m.status.Info, st.label
		}
		text = common.Clean(text) // errors quote paths, headers and fields
		// The error matters more than the device: give it most of the line,
		// dropping whole segments (device, backend, session) rather than
		// cutting one mid-word.
		budget := max(m.w/4, m.w-ansi.StringWidth(text)-2)
		n := len(segs)
		for n > 1 && ansi.StringWidth(left(n)) > budget {
			n--
		}
		l := t.Truncate(left(n), budget)
		right := style.Render(cutWords(t.Ellipsis, text, max(0, m.w-ansi.StringWidth(l)-2)))
		return t.Fit(l+"  "+right, m.w, 1)
	}
	h := help.New()
	h.Styles = st.help
	h.ShortSeparator = "  "
	if !t.Plain {
		h.ShortSeparator = " • "
	}
	h.Ellipsis = t.Ellipsis
	// Drop the device, then the backend, before the help gets too short;
	// then go on dropping them (never the dataset or the session) while
	// that shows more of the keys, so that the keys get the room a long
	// left part would leave blank beside a cut help.
	var bindings []key.Binding
	if m.keys != nil {
		bindings = m.keys.ShortHelp()
	}
	helpWidth := func(n int) int { return max(0, m.w-ansi.StringWidth(left(n))-2) }
	n := len(segs)
	for n > 1 && m.w-ansi.StringWidth(left(n)) < 40 {
		n--
	}
	best, shown := n, shortHelpShown(h, bindings, helpWidth(n))
	keep := 1 // the dataset
	if m.status.Saved != "" {
		keep = 2 // and the session
	}
	for k := n - 1; k >= keep && shown < len(bindings); k-- {
		if s := shortHelpShown(h, bindings, helpWidth(k)); s > shown {
			best, shown = k, s
		}
	}
	n = best
	l := left(n)
	h.Width = helpWidth(n)
	var right string
	if m.keys != nil {
		right = h.ShortHelpView(bindings)
	}
	gap := max(1, m.w-ansi.StringWidth(l)-ansi.StringWidth(right))
	return t.Fit(l+strings.Repeat(" ", gap)+right, m.w, 1)
}

// shortHelpShown is how many of bindings' enabled keys fit whole in
// width cells of h.ShortHelpView (0 = no limit: all of them).
func shortHelpShown(h help.Model, bindings []key.Binding, width int) int {
	sep := ansi.StringWidth(h.ShortSeparator)
	total, shown := 0, 0
	for _, kb := range bindings {
		if !kb.Enabled() {
			continue
		}
		w := ansi.StringWidth(kb.Help().Key) + 1 + ansi.StringWidth(kb.Help().Desc)
		if total > 0 {
			w += sep
		}
		if width > 0 && total+w > width {
			break
		}
		total += w
		shown++
	}
	return shown
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cutWords shortens s to w cells at a space, never inside a word, and
// marks the cut with ellipsis.
func cutWords(ellipsis, s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	room := w - ansi.StringWidth(ellipsis)
	if room <= 0 {
		return ansi.Truncate(s, w, "")
	}
	cut := ansi.Truncate(s, room+1, "")
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		return strings.TrimRight(cut[:i], " ,;:(") + ellipsis
	}
	return ansi.Truncate(s, room, "") + ellipsis
}
