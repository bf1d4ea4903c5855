// Package compare is the sessions screen's compare pane: the table of
// sessions.Diff (run B against run A, as `sweepbench sessions diff`
// prints it) in a viewport that scrolls both ways.
package compare

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"sweepbench/sessions"
	"sweepbench/tui/common"
)

// Top is how many combos the table lists, by |dPnL|.
const Top = 10

// Model is the compare pane.
type Model struct {
	ctx   *common.Context
	vp    viewport.Model
	title string
	text  string
	lines []string // text's lines
	x     int      // the columns scrolled off the left
	w, h  int
}

var _ common.Pane = (*Model)(nil)

// New returns an empty pane.
func New(ctx *common.Context) *Model {
	vp := viewport.New(0, 0)
	vp.KeyMap = viewport.KeyMap{} // the root's key map drives it
	vp.SetHorizontalStep(8)
	return &Model{ctx: ctx, vp: vp}
}

// SetDiff shows d (WriteTable's text); err is shown instead when d is nil.
func (m *Model) SetDiff(d *sessions.Diff, err error) {
	var b bytes.Buffer
	switch {
	case err != nil:
		m.title = "Compare"
		b.WriteString("the compare failed:\n" + err.Error())
	default:
		m.title = fmt.Sprintf("Compare %s (B) against %s (A)", d.B.Ref, d.A.Ref)
		if werr := d.WriteTable(&b, Top); werr != nil {
			b.WriteString("\n" + werr.Error())
		}
	}
	m.text = common.Clean(strings.TrimRight(strings.ReplaceAll(b.String(), "\t", "    "), "\n"))
	m.lines = strings.Split(m.text, "\n")
	m.vp.SetContent(m.text)
	m.vp.GotoTop()
	m.vp.SetXOffset(0)
	m.x = 0
}

// Text is what the pane shows, unscrolled.
func (m *Model) Text() string { return m.text }

// Title names the pane.
func (m *Model) Title() string { return m.title }

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.vp.Width, m.vp.Height = max(w, 0), max(h-1, 0)
	m.vp.SetContent(m.text)
}

// Update scrolls with the navigation keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	k := m.ctx.Keys
	switch {
	case key.Matches(km, k.Up):
		m.vp.ScrollUp(1)
	case key.Matches(km, k.Down):
		m.vp.ScrollDown(1)
	case key.Matches(km, k.PageUp):
		m.vp.PageUp()
	case key.Matches(km, k.PageDown):
		m.vp.PageDown()
	case key.Matches(km, k.Top):
		m.vp.GotoTop()
	case key.Matches(km, k.Bottom):
		m.vp.GotoBottom()
	case key.Matches(km, k.Left):
		m.vp.ScrollLeft(8)
		m.x = max(m.x-8, 0)
	case key.Matches(km, k.Right):
		m.vp.ScrollRight(8)
		widest := 0
		for _, l := range m.lines {
			widest = max(widest, ansi.StringWidth(l))
		}
		m.x = min(m.x+8, max(widest-m.vp.Width, 0))
	}
	return nil
}

// View renders the pane body, exactly w x h: the viewport, then a line
// that says how to scroll and where it is.
func (m *Model) View() string {
	t := m.ctx.Theme
	foot := t.Subtle.Render(fmt.Sprintf("%d%%  arrows scroll (left/right for wide lines), esc back to the list",
		int(100*m.vp.ScrollPercent()+0.5)))
	// A line cut at either edge says so: « and » (< and > plain) in its
	// first or last cell, never a number cut without a sign.
	shown := strings.Split(m.vp.View(), "\n")
	for i := range shown {
		k := m.vp.YOffset + i
		if k >= len(m.lines) || m.vp.Width < 3 {
			break
		}
		full := ansi.StringWidth(m.lines[k])
		if full > m.x+m.vp.Width {
			shown[i] = ansi.Truncate(shown[i], m.vp.Width-1, "") + t.More[1]
		}
		if m.x > 0 && full > 0 {
			shown[i] = t.More[0] + ansi.TruncateLeft(shown[i], 1, "")
		}
	}
	return t.Fit(strings.Join(shown, "\n")+"\n"+foot, m.w, m.h)
}
