// Package metrics is the results pane listing every SPEC metric of every
// combo, with the chosen metric's fp64 and fp32 values side by side; it
// sorts by any column, filters, and jumps to the best combo.
package metrics

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"sweepbench/engine"
	"sweepbench/engine/text"
	"sweepbench/tui/common"
	"sweepbench/tui/components/datatable"
)

// column is one table column: a value of a combo in a precision.
type column struct {
	name  string // hma, hma3, a metric or a parity column
	prec  engine.Precision
	delta bool             // the chosen metric's fp32 - fp64
	f     common.NumColumn // how its cells are written, from all its values
}

// compactColumns are the compact layout's columns (issue 15, defect 7):
// trades, return, Sharpe, max drawdown and dn, under short titles, so
// that they fit 80 columns beside the combo and the chosen metric.
var compactColumns = []struct{ name, title string }{
	{"total_trades", "trades"}, {"total_return", "return%"}, {"sharpe", "sharpe"},
	{"max_drawdown", "maxdd%"}, {common.ColDn, "dn"},
}

// Layouts of the table: auto is compact when the pane is narrower than
// the full layout needs to show its pinned columns and the compact
// layout's metrics, full otherwise; the Columns key picks one for good.
const (
	layoutAuto = iota
	layoutCompact
	layoutFull
)

// fmtKey names a column's format: a column of values in a precision, or
// the chosen metric's difference fp32 - fp64.
type fmtKey struct {
	name  string
	prec  engine.Precision
	delta bool
}

// Model is the metrics pane.
type Model struct {
	ctx       *common.Context
	state     *common.RunState // the run it shows
	tbl       *datatable.Model
	cols      []column
	rows      []int // combo index per row, filtered and sorted
	sortCol   string
	sortP     engine.Precision // the precision sortCol is sorted in
	sortState int              // 0 grid order, 1 best first, 2 worst first
	filter    []term
	filterSrc string
	bad       string // the filter text that did not parse
	input     textinput.Model
	editing   bool
	err       error
	layout    int  // layoutAuto, or the one the user chose
	compact   bool // the layout the columns are built for
	fmts      map[fmtKey]common.NumColumn
	fmtsOf    *common.Results // the results fmts were computed from
	pg        paged           // the page of paged results (paged.go)
	w, h      int
}

var (
	_ common.Pane    = (*Model)(nil)
	_ common.Focuser = (*Model)(nil)
)

// New returns the pane.
func New(ctx *common.Context, state *common.RunState) *Model {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "sharpe>1 hma=20 max_drawdown<30 (ctrl+u clears)"
	return &Model{ctx: ctx, state: state, tbl: datatable.New(ctx, nil, 3), input: in}
}

// ClearFilter drops the filter (and a broken one being fixed): the table
// lists every combo again. Reload shows it.
func (m *Model) ClearFilter() {
	m.filter, m.filterSrc, m.err, m.bad = nil, "", nil, ""
	m.state.KeepGen++
	m.state.Filter = ""
	m.input.SetValue("")
}

// Editing reports whether the filter line takes the keys.
func (m *Model) Editing() bool { return m.editing }

// SetSize sets the inner size; the columns are rebuilt when the size
// changes the automatic layout.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.tbl.SetSize(w, h-1)
	m.input.Width = max(w-4, 1)
	if m.state.Results != nil && m.cols != nil && m.wantCompact() != m.compact {
		m.build()
	}
}

// Compact reports whether the table shows the compact layout.
func (m *Model) Compact() bool { return m.compact }

// ToggleLayout switches between the compact and the full layout, for good
// (a resize no longer picks one).
func (m *Model) ToggleLayout() {
	if m.compact {
		m.layout = layoutFull
	} else {
		m.layout = layoutCompact
	}
	if m.state.Results != nil {
		m.build()
	}
}

// Focus shows the focused cursor.
func (m *Model) Focus(f bool) { m.tbl.Focus(f) }

// Title names the pane with its state: the combos listed, the runs a
// cancel left short, and the sort.
func (m *Model) Title() string {
	r := m.state.Results
	if r == nil {
		return "Metrics"
	}
	parts, why := r.Partial()
	sortBy, arrow := "", "v"
	if m.sortState != 0 {
		dir := "best first"
		if m.sortState == 2 {
			dir, arrow = "worst first", "^"
		}
		sortBy = ", by " + m.sortName() + " " + dir
		if o := r.Objective; m.sortCol == o.Name() && o.Constrained() {
			// The study's top list: the combos that meet its constraints first.
			var cs []string
			if o.MinTrades > 0 {
				cs = append(cs, fmt.Sprintf(">= %d trades", o.MinTrades))
			}
			if o.MaxDrawdown > 0 {
				cs = append(cs, fmt.Sprintf("max dd <= %s%%", text.FormatFloat(100*o.MaxDrawdown)))
			}
			sortBy += " (" + strings.Join(cs, ", ") + " first)"
		}
	}
	full := fmt.Sprintf("Metrics: %s of %s", common.Thousands(len(m.rows)), common.Plural(r.Grid.Len(), "combo"))
	short := fmt.Sprintf("Metrics: %s/%s", common.Thousands(len(m.rows)), common.Thousands(r.Grid.Len()))
	if len(parts) > 0 {
		full += " (" + strings.Join(parts, ", ") + ", " + why + ")"
		short += " (" + strings.Join(parts, ", ") + ", " + strings.TrimPrefix(why, "run ") + ")"
	}
	if m.sortState != 0 {
		short += " by " + m.sortName() + " " + arrow
	}
	full += sortBy
	if r.Paged() && m.pg.note != "" {
		full += "; " + m.pg.note
		short += "; " + m.pg.short
	}
	if m.w > 0 && len(full) > m.w-2 {
		return short
	}
	if rep := r.Report; rep != nil && !math.IsNaN(rep.BuyHold) {
		// The benchmark of every return below (engine.BuyHoldReturn),
		// where the pane is wide enough to say it.
		if bh := full + "; buy & hold " + common.Pct(rep.BuyHold); m.w <= 0 || len(bh) <= m.w-2 {
			return bh
		}
	}
	return full
}

// sortName names the sort key: "sharpe fp64", "max_drawdown% fp32", "flips".
func (m *Model) sortName() string {
	switch {
	case m.isParam(m.sortCol) || common.IsParityColumn(m.sortCol):
		return m.sortCol
	}
	return common.Header(m.sortCol) + " " + m.sortP.String()
}

// Prec is the precision of the table's columns (but the chosen metric's
// pair): the one p chose, when it ran.
func (m *Model) Prec() engine.Precision {
	r := m.state.Results
	if r != nil && r.Run(m.state.Prec) == nil {
		if r.R64 != nil {
			return engine.FP64
		}
		return engine.FP32
	}
	return m.state.Prec
}

// Reload rebuilds the columns and rows from the context (new results, a
// new chosen metric or precision).
func (m *Model) Reload() {
	if m.state.Results == nil {
		return
	}
	m.build()
}

// build lays out the columns for the layout the size or the user chose
// and refreshes the rows.
//
// The full layout pins the chosen metric after hma and hma3: its fp64 and
// fp32 values side by side and their difference (fp32 - fp64) when both
// ran, else its one value. Every other column follows in the table's
// precision (Prec), scrolling sideways to the chosen metric's neighbours.
//
// The compact layout shows, after hma and hma3 and the chosen metric in
// the table's precision (unless it is one of them), the compactColumns.
//
// Every column is as wide as its widest value (common.NumColumn), so no
// number is ever cut: the table elides whole columns instead.
func (m *Model) build() {
	m.compact = m.wantCompact()
	cols, fixed := m.fullColumns()
	if m.compact {
		cols, fixed = m.compactColumns()
	}
	m.cols = nil
	dcols := make([]datatable.Column, len(cols))
	next := -1 // the column after the chosen metric's place (full layout)
	for i, c := range cols {
		m.cols = append(m.cols, c.column)
		dcols[i] = datatable.Column{Title: c.title, Width: c.f.Width, Right: true}
		if c.next {
			next = i
		}
	}
	m.tbl.SetColumns(dcols, fixed)
	m.tbl.SetColumnCursor(-1)
	m.tbl.ScrollTo(fixed)
	if next >= 0 {
		m.tbl.ScrollTo(max(next-1, fixed)) // both neighbours: what ←/→ go to
	}
	m.refresh()
}

// titled is a column with its header; next marks the column that follows
// the chosen metric's place in the full layout.
type titled struct {
	column
	title string
	next  bool
}

// col is column name in precision p (delta: the chosen metric's fp32 -
// fp64), with its format.
func (m *Model) col(name string, p engine.Precision, delta bool, title string) titled {
	return titled{column: column{name: name, prec: p, delta: delta, f: m.format(name, p, delta)}, title: title}
}

// fullColumns are the full layout's columns and the count of fixed ones.
func (m *Model) fullColumns() ([]titled, int) {
	r := m.state.Results
	prec := m.Prec()
	cur := m.state.Metric
	h := common.Header(cur)
	cols := m.paramCols(prec)
	switch {
	case common.IsParityColumn(cur):
		cols = append(cols, m.col(cur, prec, false, cur))
	case r.R64 != nil && r.R32 != nil:
		cols = append(cols, m.col(cur, engine.FP64, false, h+" fp64"), m.col(cur, engine.FP32, false, h+" fp32"),
			m.col(cur, prec, true, "d 32-64"))
	default:
		cols = append(cols, m.col(cur, prec, false, h+" "+prec.String()))
	}
	fixed := len(cols)
	after := false
	for _, n := range m.names() {
		if n == cur {
			after = true
			continue
		}
		c := m.col(n, prec, false, common.Header(n))
		c.next, after = after, false
		cols = append(cols, c)
	}
	return cols, fixed
}

// compactColumns are the compact layout's columns and the count of fixed
// ones.
func (m *Model) compactColumns() ([]titled, int) {
	prec := m.Prec()
	cur := m.state.Metric
	cols := m.paramCols(prec)
	names := m.names()
	in := false
	for _, c := range compactColumns {
		in = in || c.name == cur
	}
	if !in && slices.Contains(names, cur) {
		title := cur
		if !common.IsParityColumn(cur) {
			title = common.Header(cur) + " " + prec.String()
		}
		cols = append(cols, m.col(cur, prec, false, title))
	}
	fixed := len(cols)
	for _, c := range compactColumns {
		if slices.Contains(names, c.name) {
			cols = append(cols, m.col(c.name, prec, false, c.title))
		}
	}
	return cols, fixed
}

// names are the columns the results have: the SPEC metrics, and the
// parity columns when there is a parity report.
func (m *Model) names() []string {
	var out []string
	for _, n := range common.Columns() {
		if !common.IsParityColumn(n) || m.state.Results.HasParityRows() {
			out = append(out, n)
		}
	}
	return out
}

// wantCompact reports whether the table should show the compact layout:
// the user's choice, else whether the pane is narrower than the full
// layout's pinned columns and the compact layout's metrics need.
func (m *Model) wantCompact() bool {
	switch m.layout {
	case layoutCompact:
		return true
	case layoutFull:
		return false
	}
	cols, fixed := m.fullColumns()
	need := 3 // the marker column and its padding
	for _, c := range cols[:fixed] {
		need += max(c.f.Width, len(c.title)) + 1
	}
	for _, c := range cols[fixed:] {
		for _, k := range compactColumns {
			if c.name == k.name {
				need += max(c.f.Width, len(c.title)) + 1
			}
		}
	}
	return m.w < need
}

// format is the format of a column from every combo's value (computed
// once per results).
func (m *Model) format(name string, p engine.Precision, delta bool) common.NumColumn {
	r := m.state.Results
	if m.fmtsOf != r {
		m.fmts, m.fmtsOf = map[fmtKey]common.NumColumn{}, r
	}
	k := fmtKey{name, p, delta}
	if delta || m.isParam(name) || common.IsParityColumn(name) {
		k.prec = 0 // the same in both precisions
	}
	if f, ok := m.fmts[k]; ok {
		return f
	}
	if r.Grid.Strategy != nil && m.isParam(name) {
		// A family's parameter: its exact text ("1.75", "ema").
		w := 1
		for i := range r.Grid.Len() {
			t, _, _, _ := common.ParamOf(r.Grid, i, name)
			w = max(w, len(t))
		}
		f := common.NumColumn{Width: w}
		m.fmts[k] = f
		return f
	}
	idx := r.Indexes()
	if r.Paged() {
		idx = append(slices.Clone(idx), m.rows...) // what is held: the kept combos and the page
	}
	f := common.FitNumbers(func(yield func(float64) bool) {
		for _, i := range idx {
			v, ok := m.shown(i, name, p, delta)
			if ok && !yield(v) {
				return
			}
		}
	}, common.IsCount(name) || m.isParam(name), name == common.ColDn)
	m.fmts[k] = f
	return f
}

// shown is the number a cell shows for combo i: the value (a fraction as a
// percentage) or, for delta, fp32 - fp64 (percentage points; 0 when they
// are the same, NaN and infinities included).
func (m *Model) shown(i int, name string, p engine.Precision, delta bool) (float64, bool) {
	scale := 1.0
	if common.IsPercent(name) {
		scale = 100
	}
	if !delta {
		v, ok := m.value(i, name, p)
		return v * scale, ok
	}
	v64, ok64 := m.value(i, name, engine.FP64)
	v32, ok32 := m.value(i, name, engine.FP32)
	switch {
	case !ok64 || !ok32:
		return 0, false
	case same(v32, v64):
		return 0, true
	}
	return (v32 - v64) * scale, true
}

// refresh filters, sorts and formats the rows, keeping the selection.
func (m *Model) refresh() {
	r := m.state.Results
	if r == nil {
		return
	}
	if r.Paged() {
		m.refreshPaged()
	} else {
		m.rows = nil
		for _, i := range r.Indexes() {
			if m.Keeps(i) {
				m.rows = append(m.rows, i)
			}
		}
		m.sortRows()
	}
	rows := m.rows
	m.tbl.SetRowFunc(len(rows), func(k int) []string { return m.cells(rows[k]) }, nil)
	m.mark()
	m.Sync()
}

// sortRows sorts the rows by the sort column (grid order when none).
func (m *Model) sortRows() {
	r := m.state.Results
	if m.sortState != 0 && m.sortCol == r.Objective.Name() {
		// The study's objective: the order of run's top lists, the
		// combos that meet its constraints first.
		o, prec, best := r.Objective, m.sortP, m.sortState == 1
		sort.SliceStable(m.rows, func(a, b int) bool {
			ca, cb := r.Combo(m.rows[a], prec), r.Combo(m.rows[b], prec)
			if ca == nil || cb == nil {
				return ca != nil && cb == nil
			}
			if best {
				return o.Ranks(ca, cb)
			}
			return o.Ranks(cb, ca)
		})
	} else if m.sortState != 0 {
		name, prec := m.sortCol, m.sortP
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
}

// cells writes combo i's cells: "-" where it has no value.
func (m *Model) cells(i int) []string {
	row := make([]string, len(m.cols))
	g := m.state.Results.Grid
	for c, col := range m.cols {
		if g.Strategy != nil && m.isParam(col.name) {
			row[c], _, _, _ = common.ParamOf(g, i, col.name)
			continue
		}
		v, ok := m.shown(i, col.name, col.prec, col.delta)
		switch {
		case !ok:
			row[c] = "-"
		case !col.delta && engine.NotComputed(col.name, v):
			row[c] = engine.NotComputedText // a GPU lane's trade metrics
		default:
			row[c] = col.f.Format(v)
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
	arrow := " v"
	if m.sortState == 2 {
		arrow = " ^"
	}
	m.tbl.SetMark(-1, "")
	for c, col := range m.cols {
		if col.name == m.sortCol && !col.delta && (col.prec == m.sortP || m.isParam(col.name) ||
			common.IsParityColumn(col.name)) {
			m.tbl.SetMark(c, arrow)
			return
		}
	}
}

func (m *Model) value(i int, name string, p engine.Precision) (float64, bool) {
	r := m.state.Results
	if _, v, num, ok := common.ParamOf(r.Grid, i, name); ok {
		return v, num
	}
	return r.Value(i, name, p)
}

// params are the grid's parameter columns: hma, hma3, or a family's
// (engine.Grid.Columns).
func (m *Model) params() []string {
	if r := m.state.Results; r != nil {
		return r.Grid.Columns()
	}
	return []string{"hma", "hma3"}
}

// isParam reports whether name is one of the parameter columns.
func (m *Model) isParam(name string) bool { return slices.Contains(m.params(), name) }

// paramCols are the parameter columns, first in every layout.
func (m *Model) paramCols(prec engine.Precision) []titled {
	var cols []titled
	for _, n := range m.params() {
		cols = append(cols, m.col(n, prec, false, n))
	}
	return cols
}

// filterParams are the parameter columns a filter may name besides hma
// and hma3 (which it always may): a family's numeric ones.
func (m *Model) filterParams() []string {
	r := m.state.Results
	if r == nil || r.Grid.Strategy == nil {
		return nil
	}
	var out []string
	for _, ax := range r.Grid.Strategy.Axes() {
		out = append(out, ax.Name)
	}
	return out
}

// matchesAny reports whether one of combo i's parameters is v (a bare
// number in the filter).
func matchesAny(g engine.Grid, i int, v float64) bool {
	for _, p := range g.Point(i) {
		if p.Kind != "price" && p.Value == v {
			return true
		}
	}
	return false
}

// Keeps reports whether the table's filter keeps combo i (every combo
// when there is no filter); the heatmap greys out the others.
func (m *Model) Keeps(i int) bool {
	for _, t := range m.filter {
		if t.col == "*" {
			if !matchesAny(m.state.Results.Grid, i, t.val) {
				return false
			}
			continue
		}
		v, ok := m.value(i, t.col, m.Prec())
		if ok && common.IsPercent(t.col) {
			v *= 100 // as the table shows it
		}
		if !ok || !t.holds(v) {
			return false
		}
	}
	return true
}

// Row is the combo listed in row i (filtered and sorted), -1 past the end.
func (m *Model) Row(i int) int {
	if i < 0 || i >= len(m.rows) {
		return -1
	}
	return m.rows[i]
}

// Sync puts the cursor on the selected combo when it is listed.
func (m *Model) Sync() {
	for k, i := range m.rows {
		if i == m.state.Selected {
			m.tbl.SetCursor(k)
			return
		}
	}
}

// Update handles the keys of the focused pane.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case pageMsg:
		m.page(msg)
		return nil
	case otherMsg:
		m.otherTook(msg)
		return nil
	}
	km, ok := msg.(tea.KeyMsg)
	if !ok || m.state.Results == nil {
		return nil
	}
	k := m.ctx.Keys
	if m.editing {
		switch {
		case key.Matches(km, k.Back):
			// The filter stays as it was; what was wrong with the text
			// typed is no longer shown.
			m.editing, m.err, m.bad = false, nil, ""
			m.input.Blur()
			m.input.SetValue(m.filterSrc)
			return nil
		case km.Type == tea.KeyEnter:
			m.editing = false
			m.input.Blur()
			src := strings.TrimSpace(m.input.Value())
			f, err := parseFilter(src, append(m.filterParams(), m.names()...))
			if err != nil {
				m.err, m.bad = err, src
				return common.Send(common.ErrMsg{Err: err})
			}
			m.filter, m.filterSrc, m.err, m.bad = f, src, nil, ""
			m.state.KeepGen++
			m.state.Filter = src
			m.refresh()
			return m.selectCursor()
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	switch {
	case key.Matches(km, k.Filter):
		// Edit the filter in force, or the broken one to fix it; the
		// cursor at the end, ctrl+u clears.
		m.editing = true
		src := m.filterSrc
		if m.err != nil {
			src = m.bad
		}
		m.input.SetValue(src)
		m.input.CursorEnd()
		return m.input.Focus()
	case m.tbl.HandleNav(km):
		return m.selectCursor()
	case key.Matches(km, k.Left), key.Matches(km, k.Right):
		// The same as m and M: the next or previous metric.
		names := m.names()
		i := slices.Index(names, m.state.Metric)
		d := 1
		if key.Matches(km, k.Left) {
			d = len(names) - 1
		}
		return common.Send(common.MetricMsg{Name: names[(max(i, 0)+d)%len(names)]})
	case key.Matches(km, k.Sort):
		// The chosen metric in the table's precision: best first, worst
		// first, grid order.
		name, prec := m.state.Metric, m.Prec()
		if name != m.sortCol || prec != m.sortP || m.sortState == 0 {
			m.sortCol, m.sortP, m.sortState = name, prec, 1
		} else {
			m.sortState = (m.sortState + 1) % 3
		}
		m.refresh()
	case key.Matches(km, k.Best):
		// The best listed combo by the study's objective and constraints.
		if i := m.state.Results.Top(m.Prec(), m.rows); i >= 0 {
			return common.Send(common.SelectMsg{Index: i})
		}
		return common.Send(common.ErrMsg{Err: fmt.Errorf("no listed combo meets the objective's constraints (%s)", m.state.Results.Objective.Label())})
	}
	return nil
}

// Err is what is wrong with the filter last entered, or nil.
func (m *Model) Err() error { return m.err }

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
	last, lastH := "", 1
	switch {
	case m.editing:
		last = m.input.View()
	case m.err != nil:
		// Wrapped, so that the columns it lists can be read.
		lines := t.Wrap(common.Clean(m.err.Error()), m.w)
		lines = lines[:min(len(lines), max(1, m.h-4))]
		last, lastH = st.err.Render(strings.Join(lines, "\n")), len(lines)
	case m.filterSrc != "":
		last = st.info.Render("filter: " + m.filterSrc + "  (/ to change)")
	default:
		other := engine.FP32
		if m.Prec() == engine.FP32 {
			other = engine.FP64
		}
		p := fmt.Sprintf("  p %s", other)
		if r := m.state.Results; r == nil || r.Run(other) == nil {
			p = ""
		}
		// The longest help that fits.
		v := "  c all columns"
		if !m.compact {
			v = "  c compact"
		}
		helps := []string{
			fmt.Sprintf("←/→ metric  s sort  / filter  b best%s%s; columns %s", p, v, m.Prec()),
			fmt.Sprintf("←/→ metric  s sort  / filter  b best%s; columns %s", p, m.Prec()),
			fmt.Sprintf("←/→ metric  s sort  / filter  b best%s", p),
		}
		if len(m.cols) > 4 && m.cols[4].delta {
			helps = []string{
				fmt.Sprintf("←/→ metric  s sort  / filter  b best%s%s  d = fp32-fp64, others %s", p, v, m.Prec()),
				fmt.Sprintf("←/→ metric  s sort  / filter  b best%s  d = fp32-fp64, others %s", p, m.Prec()),
				fmt.Sprintf("←/→ metric  s sort  / filter  b best%s  d = fp32-fp64", p),
				fmt.Sprintf("←/→ metric s sort / filter b best%s d=fp32-fp64", strings.TrimPrefix(p, " ")),
				fmt.Sprintf("←/→ metric s sort / filter b best%s", strings.TrimPrefix(p, " ")),
			}
		}
		help := helps[len(helps)-1]
		for _, h := range helps {
			if ansi.StringWidth(h) <= m.w {
				help = h
				break
			}
		}
		last = st.info.Render(help)
	}
	m.tbl.SetSize(m.w, m.h-lastH)
	return t.Fit(m.tbl.View()+"\n"+last, m.w, m.h)
}
