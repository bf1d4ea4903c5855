// Package theme holds the workbench's one theme: the palette, the styles
// built from it, the glyphs, and the plain (no colour, ASCII-only) variant
// used when the terminal has no colour or NO_COLOR is set. Components take
// their styles from here and never name a colour themselves.
package theme

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// Theme is the palette, the shared styles and the glyphs.
type Theme struct {
	// Plain is set when the terminal shows no colour (termenv.Ascii: NO_COLOR,
	// TERM=dumb, or not a terminal). Then every style renders as plain text,
	// so state is shown with characters (markers, brackets), and every rune
	// drawn is ASCII (charts are passed through Sanitize).
	Plain bool

	// Palette. Components use these through the styles below or, for
	// charts, directly as lipgloss colours.
	Accent, Muted, Text, Good, Bad, Warn lipgloss.TerminalColor
	Series64, Series32, SeriesClose      lipgloss.TerminalColor
	// HeatScale is the heatmap's colour ramp, low to high.
	HeatScale []lipgloss.Color
	// HeatRamp is the heatmap's character ramp in plain mode, low to high.
	HeatRamp []rune
	// HeatOff is the glyph of a heatmap cell left out (the table's filter,
	// the objective's constraints): a space in plain mode, a dot drawn in
	// Muted otherwise.
	HeatOff rune
	// HeatInk are the colours of the numbers printed in heatmap cells: on
	// the dark half of HeatScale, then on the bright half.
	HeatInk [2]lipgloss.Color
	// ProgressFrom and ProgressTo are the progress bars' gradient (hex).
	ProgressFrom, ProgressTo string

	// Styles.
	Title, Subtle, Strong, Error, OK, Warning   lipgloss.Style
	Selected, Header, Key, Desc, Tab, TabActive lipgloss.Style
	Border, BorderFocus                         lipgloss.Style // colour of the pane frame
	Frame, FrameFocus                           lipgloss.Border

	// Glyphs.
	Cursor   string // marks the selected row: "▶" or ">"
	Ellipsis string // "…" or "..."
	Sep      string // separator in one-line summaries: " · " or " | "
	// More marks columns out of view in a table's header, left and right:
	// "«" and "»", or "<" and ">".
	More     [2]string
	Up, Down string // more above, more below: "↑" "↓" or "^" "v"
}

// New builds the theme for a colour profile (termenv.Ascii gives the plain
// theme) and background (dark or light terminal).
func New(profile termenv.Profile, dark bool) *Theme {
	t := &Theme{Plain: profile == termenv.Ascii}
	pick := func(darkHex, lightHex string) lipgloss.TerminalColor {
		if dark {
			return lipgloss.Color(darkHex)
		}
		return lipgloss.Color(lightHex)
	}
	t.Accent = pick("#7DCFFF", "#005F87")
	t.Muted = pick("#6C7086", "#8A8A8A")
	t.Text = pick("#CDD6F4", "#1E1E2E")
	t.Good = pick("#A6E3A1", "#1A7F37")
	t.Bad = pick("#F38BA8", "#C8102E")
	t.Warn = pick("#F9E2AF", "#9A6700")
	t.Series64 = pick("#89B4FA", "#0550AE")
	t.Series32 = pick("#FAB387", "#BC4C00")
	t.SeriesClose = pick("#7F849C", "#8C959F")
	// A perceptually ordered ramp (viridis), dark to bright.
	t.HeatScale = []lipgloss.Color{"#440154", "#482475", "#414487", "#355F8D", "#2A788E",
		"#21918C", "#22A884", "#44BF70", "#7AD151", "#BDDF26", "#FDE725"}
	t.HeatRamp = []rune(".:-=+*#%@")
	t.HeatInk = [2]lipgloss.Color{"#FFFFFF", "#000000"}
	t.ProgressFrom, t.ProgressTo = "#355F8D", "#7AD151"

	t.Title = lipgloss.NewStyle().Bold(true).Foreground(t.Accent)
	t.Subtle = lipgloss.NewStyle().Foreground(t.Muted)
	t.Strong = lipgloss.NewStyle().Bold(true)
	t.Error = lipgloss.NewStyle().Foreground(t.Bad).Bold(true)
	t.OK = lipgloss.NewStyle().Foreground(t.Good).Bold(true)
	t.Warning = lipgloss.NewStyle().Foreground(t.Warn)
	t.Selected = lipgloss.NewStyle().Reverse(true)
	t.Header = lipgloss.NewStyle().Bold(true).Foreground(t.Accent)
	t.Key = lipgloss.NewStyle().Foreground(t.Accent)
	t.Desc = lipgloss.NewStyle().Foreground(t.Muted)
	t.Tab = lipgloss.NewStyle().Foreground(t.Muted)
	t.TabActive = lipgloss.NewStyle().Bold(true).Foreground(t.Accent).Underline(true)
	t.Border = lipgloss.NewStyle().Foreground(t.Muted)
	t.BorderFocus = lipgloss.NewStyle().Foreground(t.Accent)

	if t.Plain {
		t.Frame = lipgloss.ASCIIBorder()
		t.FrameFocus = lipgloss.Border{Top: "=", Bottom: "=", Left: "|", Right: "|",
			TopLeft: "#", TopRight: "#", BottomLeft: "#", BottomRight: "#"}
		t.Cursor, t.Ellipsis, t.Sep, t.More = ">", "...", " | ", [2]string{"<", ">"}
		t.Up, t.Down = "^", "v"
		t.HeatOff = ' '
	} else {
		t.Frame = lipgloss.RoundedBorder()
		t.FrameFocus = lipgloss.ThickBorder()
		t.Cursor, t.Ellipsis, t.Sep, t.More = "▶", "…", " · ", [2]string{"«", "»"}
		t.Up, t.Down = "↑", "↓"
		t.HeatOff = '·'
	}
	return t
}

// Truncate cuts s (one line, may hold ANSI styles) to at most w cells.
func (t *Theme) Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	tail := t.Ellipsis
	if ansi.StringWidth(tail) >= w {
		tail = ""
	}
	return ansi.Truncate(s, w, tail)
}

// Wrap breaks s into lines of at most w cells at spaces (a word longer
// than w is cut), so that an error message or a figure is read whole,
// never truncated. Numbers such as 1e-05 or -0.5 are never split.
func (t *Theme) Wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		out = append(out, t.WrapWords(strings.Split(para, " "), w)...)
	}
	return out
}

// WrapWords joins words (styled or not; a word may hold spaces, e.g. a
// legend's "[.] -185.1") with spaces into lines of at most w cells, each
// word whole on one line unless it is wider than w, then cut into pieces
// of w cells. At least one line, empty for no words.
func (t *Theme) WrapWords(words []string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	line, lw := "", 0
	for _, word := range words {
		ww := ansi.StringWidth(word)
		switch {
		case lw == 0:
			line, lw = word, ww
		case lw+1+ww <= w:
			line, lw = line+" "+word, lw+1+ww
		default:
			out = append(out, line)
			line, lw = word, ww
		}
		for lw > w {
			out = append(out, ansi.Truncate(line, w, ""))
			line = ansi.TruncateLeft(line, w, "")
			lw = ansi.StringWidth(line)
		}
	}
	return append(out, line)
}

// Fit makes s exactly w cells wide and h lines high: longer lines are
// truncated, shorter ones padded with spaces, missing lines added, extra
// lines dropped. h < 0 keeps the line count.
func (t *Theme) Fit(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if h >= 0 {
		if len(lines) > h {
			lines = lines[:h]
		}
		for len(lines) < h {
			lines = append(lines, "")
		}
	}
	for i, l := range lines {
		lines[i] = t.pad(t.Truncate(l, w), w)
	}
	return strings.Join(lines, "\n")
}

func (t *Theme) pad(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// Pane draws a framed pane of exactly w x h cells with title in the top
// edge; body is fitted inside. A focused pane has the focus frame and, in
// plain mode, its title in brackets, so focus shows without colour.
func (t *Theme) Pane(title, body string, w, h int, focused bool) string {
	if w < 4 || h < 2 {
		return t.Fit("", max(w, 0), max(h, 0))
	}
	b, bs := t.Frame, t.Border
	if focused {
		b, bs = t.FrameFocus, t.BorderFocus
	}
	inner := w - 2
	title = strings.TrimSpace(title)
	label := " " + title + " "
	if focused && t.Plain {
		label = "[ " + title + " ]"
	}
	label = t.Truncate(label, max(inner-2, 0))
	ts := t.Strong
	if focused {
		ts = t.Title
	}
	top := bs.Render(b.TopLeft+b.Top) + ts.Render(label)
	if rest := inner - 1 - ansi.StringWidth(label); rest > 0 {
		top += bs.Render(strings.Repeat(b.Top, rest))
	}
	top += bs.Render(b.TopRight)
	var sb strings.Builder
	sb.WriteString(top)
	for _, l := range strings.Split(t.Fit(body, inner, h-2), "\n") {
		if h-2 <= 0 {
			break
		}
		sb.WriteString("\n" + bs.Render(b.Left) + l + bs.Render(b.Right))
	}
	sb.WriteString("\n" + bs.Render(b.BottomLeft+strings.Repeat(b.Bottom, inner)+b.BottomRight))
	return sb.String()
}

// Sanitize returns s with every non-ASCII rune a chart may draw replaced by
// an ASCII look-alike when the theme is plain, and s unchanged otherwise:
// box-drawing lines become - | +, braille dots *, block elements a
// density ramp, other runes '?'. ANSI sequences pass through.
func (t *Theme) Sanitize(s string) string {
	if !t.Plain {
		return s
	}
	return strings.Map(asciiRune, s)
}

func asciiRune(r rune) rune {
	switch {
	case r < 0x80:
		return r
	case r == 0x2800: // blank braille
		return ' '
	case r >= 0x2801 && r <= 0x28FF:
		return '*'
	case r == '─' || r == '━' || r == '╌' || r == '┄' || r == '╴' || r == '╶':
		return '-'
	case r == '│' || r == '┃' || r == '╎' || r == '┆' || r == '╵' || r == '╷':
		return '|'
	case r >= 0x2500 && r <= 0x257F:
		return '+'
	case r == '█' || r == '▇' || r == '▆':
		return '#'
	case r == '▅' || r == '▄' || r == '▃':
		return '='
	case r == '▂' || r == '▁' || r == '░' || r == '▒' || r == '▓':
		return '.'
	case r >= 0x2580 && r <= 0x259F:
		return '#'
	case r == '…':
		return '.'
	case r == '·' || r == '•':
		return '.'
	case r == '▶' || r == '›' || r == '→':
		return '>'
	case r == '◀' || r == '‹' || r == '←':
		return '<'
	case r == '↑' || r == '▲':
		return '^'
	case r == '↓' || r == '▼':
		return 'v'
	}
	return '?'
}
