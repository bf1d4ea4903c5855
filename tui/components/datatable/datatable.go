// Package datatable is the scrolling table the metrics, parity and trade
// panes share: a bubbles table fed only the rows and columns that fit, with
// a marker column so the cursor and flagged rows show without colour, and
// an optional column cursor with horizontal scrolling.
package datatable

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"sweepbench/tui/common"
)

// Column is one column: its title, its width in cells and its alignment.
// A column is never narrower than its title (with its mark) nor, for rows
// given whole (SetRows), than its widest cell: the table elides whole
// columns (the header's "«" "»") rather than cut a value. Rows formatted
// on demand (SetRowFunc) come with widths their owner computed from the
// data (common.NumColumn's Width).
type Column struct {
	Title string
	Width int
	Right bool // right-align (numbers)
	// Max, when set, caps the column's width: wider cells are cut (the
	// content's width otherwise widens it).
	Max int
}

// Model is the table's state.
type Model struct {
	ctx      *common.Context
	cols     []Column
	fixed    int                  // leading columns that never scroll away
	n        int                  // rows
	row      func(i int) []string // formats row i (only rows on screen are asked)
	flag     func(i int) bool     // rows shown as flagged ("!"); may be nil
	cursor   int
	offset   int // first row shown
	colStart int // first scrollable column shown
	colCur   int // selected column, -1 when columns are not selectable
	scrollTo int // the column ScrollTo last showed first (0: none)
	marks    map[int]string
	content  []int // per column, the widest cell of rows given whole (SetRows)
	w, h     int
	focused  bool
	tbl      table.Model
}

var (
	_ common.Component = (*Model)(nil)
	_ common.Focuser   = (*Model)(nil)
)

// New returns an empty table; fixed leading columns stay when the others
// scroll horizontally.
func New(ctx *common.Context, cols []Column, fixed int) *Model {
	return &Model{ctx: ctx, cols: cols, fixed: fixed, colCur: -1, marks: map[int]string{},
		tbl: table.New(table.WithKeyMap(table.KeyMap{}))}
}

// SetColumns replaces the columns and the count of leading fixed ones
// (keeping the column cursor in range).
func (m *Model) SetColumns(cols []Column, fixed int) {
	m.cols, m.fixed, m.content = cols, fixed, nil
	m.colStart = max(m.colStart, fixed)
	if m.colCur >= len(cols) {
		m.colCur = len(cols) - 1
	}
}

// SetRows replaces the rows; flags (may be nil) marks rows to highlight.
// The cursor is kept in range.
func (m *Model) SetRows(rows [][]string, flags []bool) {
	content := make([]int, len(m.cols))
	for _, r := range rows {
		for c, cell := range r {
			if c < len(content) {
				content[c] = max(content[c], ansi.StringWidth(cell))
			}
		}
	}
	m.setRowFunc(len(rows), func(i int) []string { return rows[i] }, func(i int) bool { return i < len(flags) && flags[i] })
	m.content = content
}

// SetRowFunc replaces the rows with n rows formatted on demand by row (a
// big grid is never formatted whole); flag (may be nil) marks rows to
// highlight. The cursor is kept in range. The columns' widths must hold
// every cell row gives.
func (m *Model) SetRowFunc(n int, row func(i int) []string, flag func(i int) bool) {
	m.setRowFunc(n, row, flag)
	m.content = nil
}

func (m *Model) setRowFunc(n int, row func(i int) []string, flag func(i int) bool) {
	m.n, m.row, m.flag = n, row, flag
	m.SetCursor(m.cursor)
}

func (m *Model) flagged(r int) bool { return m.flag != nil && m.flag(r) }

// SetSize sets the table's outer size (the header is one of its h lines).
// The horizontal scroll is recomputed, so a size shows the same columns
// whatever sizes came before.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.SetCursor(m.cursor)
	if m.colCur >= 0 {
		m.colStart = m.fixed
		m.SetColumnCursor(m.colCur)
	} else if m.scrollTo > 0 {
		m.ScrollTo(m.scrollTo)
	}
}

// Focus shows the cursor row in the focused style.
func (m *Model) Focus(f bool) { m.focused = f }

// Len is the number of rows.
func (m *Model) Len() int { return m.n }

// Cursor is the selected row.
func (m *Model) Cursor() int { return m.cursor }

// SetMark sets the header suffix of column c (e.g. a sort arrow); "" clears it.
func (m *Model) SetMark(c int, s string) {
	clear(m.marks)
	if s != "" {
		m.marks[c] = s
	}
}

func (m *Model) page() int { return max(1, m.h-1) }

// SetCursor moves the cursor to row i (clamped) and scrolls it into view.
func (m *Model) SetCursor(i int) {
	m.cursor = max(0, min(i, m.n-1))
	p := m.page()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+p {
		m.offset = m.cursor - p + 1
	}
	m.offset = max(0, min(m.offset, m.n-p))
}

// HandleNav moves the cursor for the vertical navigation keys; it reports
// whether msg was one of them.
func (m *Model) HandleNav(msg tea.KeyMsg) bool {
	k := m.ctx.Keys
	switch {
	case key.Matches(msg, k.Up):
		m.SetCursor(m.cursor - 1)
	case key.Matches(msg, k.Down):
		m.SetCursor(m.cursor + 1)
	case key.Matches(msg, k.PageUp):
		m.SetCursor(m.cursor - m.page())
	case key.Matches(msg, k.PageDown):
		m.SetCursor(m.cursor + m.page())
	case key.Matches(msg, k.Top):
		m.SetCursor(0)
	case key.Matches(msg, k.Bottom):
		m.SetCursor(m.n - 1)
	default:
		return false
	}
	return true
}

// HandleScroll scrolls the columns sideways for the left and right keys
// when the table has no column cursor (a column cursor moves with them
// instead: its owner handles them); it reports whether msg was one of
// them. Columns hidden either side show as "«" and "»" (theme.More) in
// the header's first cell.
func (m *Model) HandleScroll(msg tea.KeyMsg) bool {
	if m.colCur >= 0 {
		return false
	}
	k := m.ctx.Keys
	switch {
	case key.Matches(msg, k.Left):
		if m.colStart > m.fixed {
			m.colStart--
		}
	case key.Matches(msg, k.Right):
		if vis := m.visible(); len(vis) > 0 && vis[len(vis)-1] < len(m.cols)-1 && vis[len(vis)-1] >= m.fixed {
			m.colStart++
		}
	default:
		return false
	}
	m.scrollTo = 0
	return true
}

// hidden reports whether scrollable columns are out of view on the left
// and on the right.
func (m *Model) hidden(vis []int) (left, right bool) {
	left = max(m.colStart, m.fixed) > m.fixed
	right = len(vis) > 0 && vis[len(vis)-1] < len(m.cols)-1
	return left, right
}

// ColumnCursor is the selected column, -1 when none.
func (m *Model) ColumnCursor() int { return m.colCur }

// SetColumnCursor selects column c (clamped to the scrollable columns) and
// scrolls it into view; -1 turns the column cursor off.
func (m *Model) SetColumnCursor(c int) {
	if c < 0 {
		m.colCur = -1
		return
	}
	m.colCur = max(m.fixed, min(c, len(m.cols)-1))
	if m.colCur < m.colStart {
		m.colStart = m.colCur
	}
	for m.colStart < m.colCur && !m.fits(m.colStart, m.colCur) {
		m.colStart++
	}
}

// width is column c's width: its own, at least its title's with its mark
// and its widest cell's (rows given whole).
func (m *Model) width(c int) int {
	w := max(m.cols[c].Width, ansi.StringWidth(m.cols[c].Title+m.marks[c]))
	if c < len(m.content) {
		w = max(w, m.content[c])
	}
	if mx := m.cols[c].Max; mx > 0 {
		w = min(w, max(mx, ansi.StringWidth(m.cols[c].Title+m.marks[c])))
	}
	return w
}

// Width is the cells the table needs to show every column.
func (m *Model) Width() int {
	w := 2 + 1 // marker column and its padding
	for c := range m.cols {
		w += m.width(c) + 1
	}
	return w
}

// fits reports whether columns from..to (plus the fixed ones) fit in the width.
func (m *Model) fits(from, to int) bool {
	w := 2 + 1 // marker column and its padding
	for i := 0; i < m.fixed && i < len(m.cols); i++ {
		w += m.width(i) + 1
	}
	for i := from; i <= to; i++ {
		w += m.width(i) + 1
	}
	return w <= m.w
}

// visible returns the column indexes shown: the fixed ones that fit (a
// pane too narrow for them all elides the rest whole, never cutting one),
// then the scrollable ones that fit from colStart.
func (m *Model) visible() []int {
	var out []int
	w := 2 + 1 // marker column and its padding
	for i := 0; i < m.fixed && i < len(m.cols); i++ {
		if w += m.width(i) + 1; w > m.w && i > 0 {
			return out
		}
		out = append(out, i)
	}
	start := max(m.colStart, m.fixed)
	for i := start; i < len(m.cols); i++ {
		if !m.fits(start, i) {
			break
		}
		out = append(out, i)
	}
	return out
}

// View renders exactly w x h cells.
func (m *Model) View() string {
	t := m.ctx.Theme
	if m.w <= 0 || m.h <= 0 {
		return ""
	}
	st := newStyles(t, m.focused)
	vis := m.visible()
	more := [2]string{" ", " "}
	if l, r := m.hidden(vis); l || r {
		if l {
			more[0] = t.More[0]
		}
		if r {
			more[1] = t.More[1]
		}
	}
	cols := []table.Column{{Title: more[0] + more[1], Width: 2}}
	for _, c := range vis {
		title := m.cols[c].Title + m.marks[c]
		if c == m.colCur {
			title = strings.ToUpper(title)
		}
		w := m.width(c)
		cols = append(cols, table.Column{Title: align(t.Truncate(title, w), w, m.cols[c].Right), Width: w})
	}
	p := m.page()
	var rows []table.Row
	for r := m.offset; r < m.n && r < m.offset+p; r++ {
		mark := " "
		if r == m.cursor {
			mark = t.Cursor
		}
		if m.flagged(r) {
			mark += "!"
		}
		row := table.Row{mark}
		cells := m.row(r)
		for _, c := range vis {
			cell := ""
			if c < len(cells) {
				cell = cells[c]
			}
			w := m.width(c)
			row = append(row, align(t.Truncate(cell, w), w, m.cols[c].Right))
		}
		rows = append(rows, row)
	}
	// Rows first emptied: bubbles' table renders the old rows against the
	// new columns in SetColumns.
	m.tbl.SetRows(nil)
	m.tbl.SetStyles(st.table)
	m.tbl.SetColumns(cols)
	m.tbl.SetHeight(m.h)
	m.tbl.SetWidth(m.w)
	m.tbl.SetRows(rows)
	m.tbl.SetCursor(m.cursor - m.offset)
	out := m.tbl.View()
	// Flagged rows in the error colour (plain mode has the "!" marker).
	if !t.Plain && m.flag != nil {
		lines := strings.Split(out, "\n")
		for i := 1; i < len(lines); i++ {
			r := m.offset + i - 1
			if r < m.n && m.flagged(r) && r != m.cursor {
				lines[i] = st.flagged.Render(ansi.Strip(lines[i]))
			}
		}
		out = strings.Join(lines, "\n")
	}
	if m.n == 0 {
		out = strings.SplitN(out, "\n", 2)[0] + "\n" + t.Subtle.Render("  (no rows)")
	}
	return t.Fit(out, m.w, m.h)
}

func align(s string, w int, right bool) string {
	n := ansi.StringWidth(s)
	if n >= w {
		return s
	}
	if right {
		return strings.Repeat(" ", w-n) + s
	}
	return s + strings.Repeat(" ", w-n)
}

// ScrollTo scrolls the columns sideways so that column c shows as the
// first scrollable column that fits, without selecting it.
func (m *Model) ScrollTo(c int) {
	m.scrollTo = c
	c = max(m.fixed, min(c, len(m.cols)-1))
	m.colStart = c
	// Fill the width: start earlier while the columns up to the last still fit.
	for m.colStart > m.fixed && m.fits(m.colStart-1, len(m.cols)-1) {
		m.colStart--
	}
}
