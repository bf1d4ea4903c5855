// Package metrics is the results pane listing every SPEC metric of every
// combo, with the chosen metric's fp64 and fp32 values side by side; it
// sorts by any column, filters, and jumps to the best combo.
package metrics

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/components/datatable"
)

// column is one table column: a value of a combo in a precision.
type column struct {
	name string // hma, hma3, a metric or a parity column
	prec engine.Precision
	alt  bool // the fp32 twin of the chosen metric
}

// Model is the metrics pane.
type Model struct {
	ctx       *common.Context
	tbl       *datatable.Model
	cols      []column
	rows      []int // combo index per row, filtered and sorted
	sortCol   string
	sortState int // 0 grid order, 1 best first, 2 worst first
	filter    []term
	filterSrc string
	input     textinput.Model
	editing   bool
	err       error
	w, h      int
}

// New returns the pane.
func New(ctx *common.Context) *Model {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "sharpe>1 hma=20 flips>0"
	return &Model{ctx: ctx, tbl: datatable.New(ctx, nil, 3), input: in}
}

// Editing reports whether the filter line takes the keys.
func (m *Model) Editing() bool { return m.editing }

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.tbl.SetSize(w, h-1)
	m.input.Width = max(w-4, 1)
}

// Focus shows the focused cursor.
func (m *Model) Focus(f bool) { m.tbl.Focus(f) }

// Title names the pane with its state.
func (m *Model) Title() string {
	r := m.ctx.Results
	if r == nil {
		return "Metrics"
	}
	s := fmt.Sprintf("Metrics: %d of %d combos", len(m.rows), r.Grid.Len())
	if m.sortState != 0 {
		s += ", by " + m.sortCol
	}
	return s
}

// Reload rebuilds the columns and rows from the context (new results or
// a new chosen metric). The chosen metric is pinned after hma and hma3,
// fp64 and fp32 side by side; every column follows, scrolling sideways
// under the column cursor.
func (m *Model) Reload() {
	r := m.ctx.Results
	if r == nil {
		return
	}
	both := r.R64 != nil && r.R32 != nil
	prec := engine.FP64
	if r.R64 == nil {
		prec = engine.FP32
	}
	width := func(title string) int { return max(9, len(title)) }
	cur := m.ctx.Metric
	m.cols = []column{{name: "hma"}, {name: "hma3"}}
	dcols := []datatable.Column{{Title: "hma", Width: 5, Right: true}, {Title: "hma3", Width: 5, Right: true}}
	if both && !common.IsParityColumn(cur) {
		m.cols = append(m.cols, column{name: cur, prec: engine.FP64}, column{name: cur, prec: engine.FP32, alt: true})
		dcols = append(dcols, datatable.Column{Title: cur + " 64", Width: width(cur + " 64"), Right: true},
			datatable.Column{Title: cur + " 32", Width: width(cur + " 32"), Right: true})
	} else {
		m.cols = append(m.cols, column{name: cur, prec: prec})
		dcols = append(dcols, datatable.Column{Title: cur, Width: width(cur), Right: true})
	}
	fixed := len(m.cols)
	sel := -1
	for _, n := range common.Columns() {
		if common.IsParityColumn(n) && r.Report.Parity == nil {
			continue
		}
		if n == cur {
			sel = len(m.cols)
		}
		m.cols = append(m.cols, column{name: n, prec: prec})
		dcols = append(dcols, datatable.Column{Title: n, Width: width(n), Right: true})
	}
	m.tbl.SetColumns(dcols, fixed)
	if sel >= 0 {
		m.tbl.SetColumnCursor(sel)
	}
	m.refresh()
}

// refresh filters, sorts and formats the rows, keeping the selection.
func (m *Model) refresh() {
	r := m.ctx.Results
	if r == nil {
		return
	}
	m.rows = nil
	for _, i := range r.Indexes() {
		if m.keep(i) {
			m.rows = append(m.rows, i)
		}
	}
	if m.sortState != 0 {
		name, prec := m.sortCol, m.sortPrec()
		sort.SliceStable(m.rows, func(a, b int) bool {
			va, oka := m.value(m.rows[a], name, prec)
			vb, okb := m.value(m.rows[b], name, prec)
			if !oka || !okb {
				return oka && !okb
			}
			if m.sortState == 1 {
				return common.Better(name, va, vb)
			}
			return common.Better(name, vb, va)
		})
	}
	rows := m.rows
	m.tbl.SetRowFunc(len(rows), func(k int) []string { return m.format(rows[k]) }, nil)
	m.mark()
	m.Sync()
}

// format writes combo i's cells.
func (m *Model) format(i int) []string {
	row := make([]string, len(m.cols))
	for c, col := range m.cols {
		v, ok := m.value(i, col.name, col.prec)
		if !ok {
			row[c] = "-"
			continue
		}
		row[c] = common.Num(v)
		if col.alt {
			if v64, ok64 := m.value(i, col.name, engine.FP64); ok64 && !same(v, v64) {
				row[c] += "*"
			}
		}
	}
	return row
}

func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func (m *Model) mark() {
	if m.sortState == 0 {
		m.tbl.SetMark(-1, "")
		return
	}
	arrow := "v"
	if m.sortState == 2 {
		arrow = "^"
	}
	for c, col := range m.cols {
		if col.name == m.sortCol && !col.alt {
			m.tbl.SetMark(c, arrow)
		}
	}
}

func (m *Model) sortPrec() engine.Precision {
	if m.ctx.Results != nil && m.ctx.Results.R64 == nil {
		return engine.FP32
	}
	return engine.FP64
}

func (m *Model) value(i int, name string, p engine.Precision) (float64, bool) {
	r := m.ctx.Results
	c := r.Grid.At(i)
	switch name {
	case "hma":
		return float64(c.HMA), true
	case "hma3":
		return float64(c.HMA3), true
	}
	return r.Value(i, name, p)
}

func (m *Model) keep(i int) bool {
	for _, t := range m.filter {
		if t.col == "*" {
			c := m.ctx.Results.Grid.At(i)
			if float64(c.HMA) != t.val && float64(c.HMA3) != t.val {
				return false
			}
			continue
		}
		v, ok := m.value(i, t.col, m.sortPrec())
		if !ok || !t.holds(v) {
			return false
		}
	}
	return true
}

// Sync puts the cursor on the selected combo when it is listed.
func (m *Model) Sync() {
	for k, i := range m.rows {
		if i == m.ctx.Selected {
			m.tbl.SetCursor(k)
			return
		}
	}
}

// Update handles the keys of the focused pane.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok || m.ctx.Results == nil {
		return nil
	}
	k := m.ctx.Keys
	if m.editing {
		switch {
		case key.Matches(km, k.Back):
			m.editing = false
			m.input.Blur()
			m.input.SetValue(m.filterSrc)
			return nil
		case km.Type == tea.KeyEnter:
			m.editing = false
			m.input.Blur()
			src := strings.TrimSpace(m.input.Value())
			f, err := parseFilter(src, common.Columns())
			if err != nil {
				m.err = err
				return common.Send(common.ErrMsg{Err: err})
			}
			m.filter, m.filterSrc, m.err = f, src, nil
			m.refresh()
			return m.selectCursor()
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	switch {
	case key.Matches(km, k.Filter):
		m.editing = true
		m.input.SetValue(m.filterSrc)
		m.input.CursorEnd()
		return m.input.Focus()
	case m.tbl.HandleNav(km):
		return m.selectCursor()
	case key.Matches(km, k.Left), key.Matches(km, k.Right):
		d := 1
		if key.Matches(km, k.Left) {
			d = -1
		}
		m.tbl.SetColumnCursor(m.tbl.ColumnCursor() + d)
		if c := m.tbl.ColumnCursor(); c >= 0 && c < len(m.cols) && m.cols[c].name != m.ctx.Metric {
			return common.Send(common.MetricMsg{Name: m.cols[c].name})
		}
	case key.Matches(km, k.Sort):
		c := m.tbl.ColumnCursor()
		if c < 0 || c >= len(m.cols) {
			return nil
		}
		if m.cols[c].name != m.sortCol {
			m.sortCol, m.sortState = m.cols[c].name, 1
		} else {
			m.sortState = (m.sortState + 1) % 3
		}
		m.refresh()
	case key.Matches(km, k.Best):
		if i := m.ctx.Results.Best(m.ctx.Metric, m.sortPrec(), m.rows); i >= 0 {
			return common.Send(common.SelectMsg{Index: i})
		}
	}
	return nil
}

func (m *Model) selectCursor() tea.Cmd {
	c := m.tbl.Cursor()
	if c < 0 || c >= len(m.rows) {
		return nil
	}
	return common.Send(common.SelectMsg{Index: m.rows[c]})
}

// View renders the pane body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	last := ""
	switch {
	case m.editing:
		last = m.input.View()
	case m.err != nil:
		last = st.err.Render(m.err.Error())
	case m.filterSrc != "":
		last = st.info.Render("filter: " + m.filterSrc + "  (/ to change)")
	default:
		last = st.info.Render("←/→ column  s sort  / filter  b best  * fp32 differs")
	}
	return t.Fit(m.tbl.View()+"\n"+last, m.w, m.h)
}
