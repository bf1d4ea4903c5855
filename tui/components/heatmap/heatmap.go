// Package heatmap is the results pane that colours a metric (or a parity
// column) over the HMA x HMA3 grid with ntcharts' heatmap, draws the axis
// labels ntcharts does not, and moves a cursor that selects a combo.
//
// The colours follow a Scale (quantile by default, clip 2-98% or linear;
// a key cycles them) computed over the combos drawn; combos the metrics
// table's filter or the study's constraints leave out are greyed and out
// of the scale. The pane shows a window of the grid (detail) or the whole
// grid in blocks, each the best value of its combos (overview), where the
// cursor moves the detail window. Cell values can be printed in the cells.
package heatmap

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/tui/common"
)

// plateauGlyph marks the plateau best's cell (the robustness section's:
// the best mean objective over its neighbourhood).
const plateauGlyph = 'P'

// cursorGlyph marks the cursor's cell when it is one column wide (the
// overview of a large grid); wider cells get brackets.
const cursorGlyph = 'X'

// Model is the heatmap pane.
type Model struct {
	ctx      *common.Context
	state    *common.RunState // the run it shows
	w, h     int
	row, col int // cursor: HMA index, HMA3 index
	r0, c0   int // first row and column of the detail window
	// visR, visC are the detail window's size and bh, bw the overview's
	// block size (combos a cell, rows and columns), as last drawn.
	visR, visC int
	bh, bw     int

	scale    ScaleKind
	overview bool // the whole grid in blocks, else the detail window
	values   bool // print the values in the cells

	// The cells and their sorted values for key: every combo is read
	// once a view (a million combos took 200 ms a frame), not a frame.
	key    viewKey
	cached []cell
	sorted []float64

	// Paged results (paged.go): the window of combos read for the detail
	// view, and the one being read.
	win   window
	asked *window

	// A strategy grid's plane (plane.go): the axes shown as rows (yAxis)
	// and columns (xAxis), how the others are reduced and, for
	// ReduceStep, each axis's stepped value; axesOf is the grid they are of.
	yAxis, xAxis int
	red          Reduce
	step         []int
	axesOf       engine.Strategy
}

// viewKey is what the cells depend on: the results, the metric and
// precision shown, and the table's filter (common.Context.KeepGen).
type viewKey struct {
	r       *common.Results
	agg     *suite.Aggregate // the aggregate columns' (set after the results)
	metric  string
	prec    engine.Precision
	keepGen int
	// A strategy plane's axes, reduction and steps.
	y, x int
	red  Reduce
	step string
}

var _ common.Pane = (*Model)(nil)

// New returns the pane.
func New(ctx *common.Context, state *common.RunState) *Model {
	return &Model{ctx: ctx, state: state, bh: 1, bw: 1}
}

// SetSize sets the inner size of the pane.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Title names the pane with its metric and precision.
func (m *Model) Title() string {
	p := m.state.Prec.String()
	if common.IsParityColumn(m.state.Metric) {
		p = "fp32 vs fp64"
	}
	s := fmt.Sprintf("Heatmap: %s (%s)", common.Header(m.state.Metric), p)
	if r := m.state.Results; r != nil && r.Agg != nil && common.IsAggregateColumn(m.state.Metric) {
		s = fmt.Sprintf("Heatmap: %s", AggregateLabel(r.Agg, m.state.Metric))
	}
	if m.overview {
		s += ", overview"
	}
	return s
}

// Want is the height (frame included) the pane needs to show every row
// of the grid once, with the info line, the HMA3 labels and the legend's
// first line (a legend that wraps takes the rows' spare lines).
func (m *Model) Want() int {
	if r := m.state.Results; r != nil {
		return m.pl().rows + 5
	}
	return 8
}

// Sync moves the cursor to the selected combo.
func (m *Model) Sync() {
	r := m.state.Results
	if r == nil || m.state.Selected < 0 {
		return
	}
	p := m.pl()
	if !p.strat() {
		n3 := r.Grid.HMA3.Len()
		if n3 > 0 {
			m.row, m.col = m.state.Selected/n3, m.state.Selected%n3
		}
		return
	}
	if m.state.Selected >= r.Grid.Len() {
		return
	}
	m.row, m.col = p.rowCol(m.state.Selected)
	if m.red == ReduceStep {
		// The slice of the selected combo.
		c := r.Grid.Strategy.Coords(m.state.Selected)
		for _, a := range p.others {
			m.step[a] = c[a]
		}
	}
}

// Update handles the keys of the pane; the scale, zoom and values keys
// come from any results pane.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if wm, ok := msg.(windowMsg); ok {
		m.took(wm)
		return nil
	}
	km, ok := msg.(tea.KeyMsg)
	r := m.state.Results
	if !ok || r == nil {
		return nil
	}
	k := m.ctx.Keys
	p := m.pl()
	row, col := m.row, m.col
	dr, dc := 0, 0
	if p.strat() && !m.paged() {
		if cmd, ok := m.planeKey(km, p); ok {
			return cmd
		}
	}
	switch {
	case key.Matches(km, k.HeatScale):
		m.scale = m.scale.Next()
		return nil
	case key.Matches(km, k.HeatZoom):
		m.overview = !m.overview
		return nil
	case key.Matches(km, k.HeatValues):
		m.values = !m.values
		return nil
	case key.Matches(km, k.Up):
		dr = -1
	case key.Matches(km, k.Down):
		dr = 1
	case key.Matches(km, k.Left):
		dc = -1
	case key.Matches(km, k.Right):
		dc = 1
	case key.Matches(km, k.Top):
		row, col = 0, 0
	case key.Matches(km, k.Bottom):
		row, col = p.rows-1, p.cols-1
	case key.Matches(km, k.Best):
		// The best combo by the study's objective and constraints.
		if i := r.Best(m.state.Prec); i >= 0 {
			return common.Send(common.SelectMsg{Index: i})
		}
		return common.Send(common.ErrMsg{Err: fmt.Errorf("no combo meets the objective's constraints (%s)", r.Objective.Label())})
	default:
		return nil
	}
	if m.overview && (dr != 0 || dc != 0) {
		// A block at a time, onto the block's best combo: the detail
		// window follows it.
		return m.moveBlock(dr, dc)
	}
	row = max(0, min(row+dr, p.rows-1))
	col = max(0, min(col+dc, p.cols-1))
	m.row, m.col = row, col
	return m.selectCell()
}

// selectCell selects the combo of the cursor's cell (none when a
// strategy cell shows none).
func (m *Model) selectCell() tea.Cmd {
	i := m.index(m.row, m.col)
	if i < 0 {
		return nil
	}
	return common.Send(common.SelectMsg{Index: i})
}

// planeKey handles the keys of a strategy plane: x and y choose the axes
// (the other one moves off an axis taken), d the reduction, < and > step
// the reduced axes' values; ok false for another key.
func (m *Model) planeKey(km tea.KeyMsg, p plane) (tea.Cmd, bool) {
	k := m.ctx.Keys
	n := len(p.axes)
	switch {
	case key.Matches(km, k.HeatX) && n > 1:
		nx := nextAxis(n, m.xAxis, m.yAxis)
		if nx == m.xAxis {
			m.xAxis, m.yAxis = m.yAxis, m.xAxis // two axes: swap them
		} else {
			m.xAxis = nx
		}
	case key.Matches(km, k.HeatY) && n > 1:
		ny := nextAxis(n, m.yAxis, m.xAxis)
		if ny == m.yAxis {
			m.xAxis, m.yAxis = m.yAxis, m.xAxis
		} else {
			m.yAxis = ny
		}
	case key.Matches(km, k.HeatReduce):
		m.red = (m.red + 1) % 3
	case key.Matches(km, k.HeatStepNext), key.Matches(km, k.HeatStepPrev):
		if m.red != ReduceStep {
			m.red = ReduceStep
		} else {
			d := 1
			if key.Matches(km, k.HeatStepPrev) {
				d = -1
			}
			m.stepBy(p, d)
		}
	default:
		return nil, false
	}
	if sel := m.state.Selected; sel >= 0 && sel < p.g.Len() && (key.Matches(km, k.HeatX) || key.Matches(km, k.HeatY)) {
		m.row, m.col = m.pl().rowCol(sel) // the cursor stays on the selected combo's cell
	}
	q := m.pl()
	m.row, m.col = max(0, min(m.row, q.rows-1)), max(0, min(m.col, q.cols-1))
	return m.selectCell(), true
}

// moveBlock moves the overview's cursor to the next block in direction
// (dr, dc) and selects the combo that block shows (its best), or the
// combo as far into the block as the cursor was when it shows none.
func (m *Model) moveBlock(dr, dc int) tea.Cmd {
	p := m.pl()
	nh, n3 := p.rows, p.cols
	br := max(0, min(m.row/m.bh+dr, (nh-1)/m.bh))
	bc := max(0, min(m.col/m.bw+dc, (n3-1)/m.bw))
	row := min(br*m.bh+m.row%m.bh, nh-1)
	col := min(bc*m.bw+m.col%m.bw, n3-1)
	if ob := m.overviewBase(); ob.br > 0 {
		// The block's best combo (a summary's blocks know none).
		if b := m.block(ob, m.bh/ob.br, m.bw/ob.bc, br, bc); b.idx >= 0 {
			row, col = p.rowCol(b.idx)
		}
	}
	m.row, m.col = row, col
	return m.selectCell()
}

// state is what a combo's cell shows.
type state uint8

const (
	missing state = iota // no value (not computed, NaN)
	shown                // its value, on the scale
	off                  // left out: the table's filter or the constraints
)

// cell is a combo's value and state, or a block's best value and the
// combo it comes from (-1 when the block shows nothing).
type cell struct {
	v   float64
	st  state
	idx int
}

// cells is every combo's cell, in grid order.
func (m *Model) cells() []cell {
	r := m.state.Results
	metric, prec := m.state.Metric, m.state.Prec
	agg := common.IsAggregateColumn(metric) // the suite's, not this dataset's: no filter, no constraints
	if p := m.pl(); p.strat() {
		return m.reducedCells(p, func(i int) cell { return m.comboCell(r, i, metric, prec, agg) })
	}
	out := make([]cell, r.Grid.Len())
	for i := range out {
		out[i] = m.comboCell(r, i, metric, prec, agg)
	}
	return out
}

// comboCell is combo i's cell: its value of metric in prec, left out
// (off) by the table's filter or the constraints.
func (m *Model) comboCell(r *common.Results, i int, metric string, prec engine.Precision, agg bool) cell {
	c := cell{idx: i}
	v, ok := r.Value(i, metric, prec)
	switch {
	case !ok || math.IsNaN(v):
		c.st = missing
	case agg:
		c.v, c.st = v, shown
	case m.state.Keep != nil && !m.state.Keep(i):
		c.v, c.st = v, off
	default:
		c.v, c.st = v, shown
		if cr := r.Combo(i, prec); cr != nil && !r.Objective.Selectable(cr) {
			c.st = off
		}
	}
	return c
}

// better reports whether a is a better value than b of the metric shown,
// for the overview's blocks: the objective's direction when it is the
// objective's metric (lower when minimised), else common.Better's.
func (m *Model) better(a, b float64) bool {
	o := m.state.Results.Objective
	if g := m.state.Results.Agg; g != nil && (m.state.Metric == common.ColMedian || m.state.Metric == common.ColWorst) {
		o = g.Objective
	}
	if m.state.Metric == o.Name() || m.state.Metric == common.ColMedian || m.state.Metric == common.ColWorst {
		if o.Minimise {
			return a < b
		}
		return a > b
	}
	return common.Better(m.state.Metric, a, b)
}

// bestName says how a block's value is chosen: "max", "min", "max |v|".
func (m *Model) bestName() string {
	switch {
	case m.better(0, 1):
		return "min"
	case common.IsParityColumn(m.state.Metric) && m.state.Metric != m.state.Results.Objective.Name():
		return "max |v|"
	}
	return "max"
}

// base is a grid the pane draws from: every combo (br = bc = 1), or the
// cells of a run summary's heatmap (paged results' overview), each a
// block of br x bc combos; at is the cell in row y and column x.
type base struct {
	rows, cols int
	br, bc     int
	at         func(y, x int) cell
}

// block is overview block (br, bc) of bh x bw cells of ob: the best shown
// value of its cells; off when it has only cells left out, missing when
// none has a value.
func (m *Model) block(ob base, bh, bw, br, bc int) cell {
	b := cell{idx: -1}
	for r := br * bh; r < min(ob.rows, (br+1)*bh); r++ {
		for c := bc * bw; c < min(ob.cols, (bc+1)*bw); c++ {
			x := ob.at(r, c)
			switch {
			case x.st == off && b.st == missing:
				b.st = off
			case x.st == shown && (b.st != shown || m.better(x.v, b.v)):
				b = x
			}
		}
	}
	return b
}

// View renders the pane body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	r := m.state.Results
	if r == nil {
		return t.Fit("", m.w, m.h)
	}
	if m.paged() && r.Grid.Strategy != nil {
		return t.Fit(newStyles(t).info.Render(fmt.Sprintf("no heatmap of %s: a paged %s study's summary holds hull's heatmaps only; the table lists its combos", m.state.Metric, r.Grid.Family())), m.w, m.h)
	}
	if m.paged() && m.summaryMap() == nil {
		return t.Fit(newStyles(t).info.Render(fmt.Sprintf("no heatmap of %s: the run's summary has none", m.state.Metric)), m.w, m.h)
	}
	m.fresh()
	sorted := m.sorted
	// The legend's length decides the rows left for the grid, and the
	// grid (the overview's blocks) the legend's numbers: two passes at
	// most settle it.
	footer := 2
	var out string
	for range 3 {
		var lines int
		out, lines = m.render(sorted, footer)
		if lines <= footer {
			break
		}
		footer = lines
	}
	return out
}

// fresh computes the cells again when what they depend on changed: every
// combo's (full results), or the summary's values for the scale (paged).
func (m *Model) fresh() {
	r := m.state.Results
	k := viewKey{r: r, agg: r.Agg, metric: m.state.Metric, prec: m.state.Prec, keepGen: m.state.KeepGen}
	if r.Grid.Strategy != nil {
		m.pl() // fits the axes to the grid
		k.y, k.x, k.red, k.step = m.yAxis, m.xAxis, m.red, m.stepKey()
	}
	if k == m.key && (m.cached != nil || m.paged()) {
		return
	}
	var vals []float64
	if m.paged() {
		m.cached = nil
		ob := m.summaryBase()
		for y := range ob.rows {
			for x := range ob.cols {
				if c := ob.at(y, x); c.st == shown {
					vals = append(vals, c.v)
				}
			}
		}
	} else {
		m.cached = m.cells()
		for _, c := range m.cached {
			if c.st == shown {
				vals = append(vals, c.v)
			}
		}
	}
	m.key, m.sorted = k, sortedFinite(vals)
}

// detailBase is the grid of combos the detail view draws: every combo's
// cell (full results), or the window read from the pager and, outside
// it, the summary's cell the combo is in (paged).
func (m *Model) detailBase() base {
	p := m.pl()
	nh, n3 := p.rows, p.cols
	if !m.paged() {
		cells := m.cached
		return base{rows: nh, cols: n3, br: 1, bc: 1, at: func(y, x int) cell { return cells[y*n3+x] }}
	}
	sb := m.summaryBase()
	return base{rows: nh, cols: n3, br: 1, bc: 1, at: func(y, x int) cell {
		if c, ok := m.windowCell(y, x); ok {
			return c
		}
		return sb.at(y/sb.br, x/sb.bc)
	}}
}

// overviewBase is the grid the overview blocks: every combo (full
// results) or the run summary's cells (paged).
func (m *Model) overviewBase() base {
	if m.paged() {
		if m.summaryMap() == nil {
			return base{}
		}
		return m.summaryBase()
	}
	m.fresh()
	return m.detailBase()
}

// AggregateLabel names aggregate column col of g for a title: "median
// sharpe over 3 datasets", "datasets in profit (of 3)".
func AggregateLabel(g *suite.Aggregate, col string) string {
	n := common.Plural(len(g.Datasets), "dataset")
	switch col {
	case common.ColMedian:
		return fmt.Sprintf("median %s over %s", g.Objective.Name(), n)
	case common.ColWorst:
		w := "min"
		if g.Objective.Minimise {
			w = "max"
		}
		return fmt.Sprintf("worst (%s) %s over %s", w, g.Objective.Name(), n)
	}
	return fmt.Sprintf("datasets in profit (of %d)", len(g.Datasets))
}

// blocks is the overview: ob in blocks of bh x bw of its cells, each
// its best shown value, and the values of the blocks that show one.
func (m *Model) blocks(ob base, bh, bw int) ([][]cell, []float64) {
	nR, nC := ceilDiv(ob.rows, bh), ceilDiv(ob.cols, bw)
	out := make([][]cell, nR)
	var vals []float64
	for br := range out {
		out[br] = make([]cell, nC)
		for bc := range out[br] {
			b := m.block(ob, bh, bw, br, bc)
			out[br][bc] = b
			if b.st == shown {
				vals = append(vals, b.v)
			}
		}
	}
	return out, vals
}

// swatch is level i's sample for the legend: its glyph in brackets, or
// its colour.
func (m *Model) swatch(st styles, i int) string {
	if m.ctx.Theme.Plain {
		return "[" + string(st.ramp[i]) + "]"
	}
	return lipgloss.NewStyle().Background(st.scale[i]).Render(" ")
}

// numFormat writes a metric's values at the precision the heatmap needs:
// fraction metrics as percentages (the legend says %), integers without
// decimals, others with enough decimals to tell the scale's edges apart.
type numFormat struct {
	pct   bool
	dec   int
	unit  string // " in %" for fraction metrics
	width int    // the widest value drawn
}

// newNumFormat is the format of xs, the values drawn (finite, sorted),
// on their scale sc.
func newNumFormat(metric string, xs []float64, sc Scale) numFormat {
	f := numFormat{pct: common.IsPercent(metric)}
	if f.pct {
		f.unit = " in %"
	}
	k := 1.0
	if f.pct {
		k = 100
	}
	integral := !f.pct
	for _, v := range xs {
		if integral = v == math.Trunc(v); !integral {
			break
		}
	}
	// The range between the clip percentiles, so that an outlier does
	// not cost the other values their digits; the whole range when that
	// is one value.
	span := 0.0
	for _, kind := range []ScaleKind{Clip, Linear} {
		if e := scaleOf(kind, xs, 1).Edges; span == 0 {
			span = k * (e[1] - e[0])
		}
	}
	switch {
	case integral || len(xs) == 0:
	case span == 0:
		f.dec = 2
	default:
		// A thousandth of the range, at least.
		f.dec = max(0, min(6, int(math.Ceil(math.Log10(1000/span)))))
	}
	// The legend's edges: enough decimals that distinct edges read
	// distinct (quantiles interpolate between values).
	for ; f.dec < 6; f.dec++ {
		ok := true
		for i := 1; i < len(sc.Edges) && ok; i++ {
			a, b := sc.Edges[i-1], sc.Edges[i]
			ok = a == b || f.format(a) != f.format(b)
		}
		if ok {
			break
		}
	}
	if len(xs) > 0 {
		// The widest is an extreme: the most negative or the largest.
		f.width = max(len(f.format(xs[0])), len(f.format(xs[len(xs)-1])))
	}
	return f
}

// format writes v (a fraction as a percentage, without the sign).
func (f numFormat) format(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return common.Num(v)
	}
	if f.pct {
		v *= 100
	}
	s := strconv.FormatFloat(v, 'f', f.dec, 64)
	if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
		s = s[1:] // no negative zero
	}
	return s
}

func ceilDiv(a, b int) int { return (a + b - 1) / max(b, 1) }

// scrollTo returns the first index to show so that cur is visible in a
// window of vis out of n.
func scrollTo(start, cur, vis, n int) int {
	if cur < start {
		start = cur
	}
	if cur >= start+vis {
		start = cur - vis + 1
	}
	return max(0, min(start, n-vis))
}
