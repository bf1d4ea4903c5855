package heatmap

import (
	"context"
	"math"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// Paged results (common.Results.Paged) have no value per combo in memory:
// the pane draws the run summary's heatmap of the metric
// (engine.Summary.Heatmap: every combo up to its cap of cells, else blocks
// of combos, each its max, min and mean), a cell's value its max, or its
// min when lower is better (the objective's direction, as the overview's
// blocks). The detail view draws the combos of a window read from the
// saved run (common.Pager.Window) around the cursor, asked for again when
// the cursor leaves it; a combo outside the window read shows its summary
// cell's value until it comes (and for good without a pager: a study not
// saved). The table's filter and the constraints grey the window's
// combos, not the summary's blocks (a block's value is over all its
// combos).
//
// A strategy grid's summary heatmap is over its first two axes (a grid of
// one axis: one row of its values here, one column there), each cell
// reducing the combos along the other axes to their max, min and mean
// (engine.Summary's heatCells): the pane draws those two axes only, each
// cell the best of its combos (max, min when lower is better) as the
// overview's blocks, and its window read from the pager holds every
// combo of its cells (sessions.RunReader.Window), reduced alike. Other
// axes, the median and the stepped slice need every result in memory:
// the keys x, y and d are not offered, and the legend says so.

// window is a rectangle of the plane read from a pager: HMA rows [r0, r1)
// x HMA3 columns [c0, c1) of r's run of precision prec (a strategy grid:
// of its first two axes, every combo of those cells).
type window struct {
	r              *common.Results
	prec           engine.Precision
	r0, r1, c0, c1 int
	rs             []engine.ComboResult // the run's results in it, grid order
	pos            map[int]int          // grid index -> place in rs
	byCell         map[int][]int        // a strategy plane's cell (row*cols+col) -> places in rs
	err            error
}

// windowMsg is a window read.
type windowMsg struct{ window }

func (w *window) same(o *window) bool {
	return w.r == o.r && w.prec == o.prec && w.r0 == o.r0 && w.r1 == o.r1 && w.c0 == o.c0 && w.c1 == o.c1
}

// covers reports whether w (read, or that could not be read: it is not
// asked for again until the view leaves it) is of the results and
// precision shown and spans rows [r0, r1) x columns [c0, c1).
func (w *window) covers(r *common.Results, p engine.Precision, r0, r1, c0, c1 int) bool {
	return w.r == r && w.prec == p && r0 >= w.r0 && r1 <= w.r1 && c0 >= w.c0 && c1 <= w.c1
}

// Reload forgets what the pane drew and read of the last results.
func (m *Model) Reload() {
	m.key, m.cached, m.sorted = viewKey{}, nil, nil
	m.win, m.asked = window{}, nil
}

// paged reports whether the pane draws from the run's summary and the
// windows read from its pager: paged results, but for an aggregate column
// (every combo's value is held).
func (m *Model) paged() bool {
	r := m.state.Results
	return r != nil && r.Paged() && !common.IsAggregateColumn(m.state.Metric)
}

// summaryMap is the summary's heatmap of the metric and precision shown,
// nil when there is none (full results; a parity column).
func (m *Model) summaryMap() *engine.Heatmap {
	r := m.state.Results
	if !m.paged() {
		return nil
	}
	s := r.Summary(m.state.Prec)
	if s == nil {
		return nil
	}
	return s.Heatmap(m.state.Metric)
}

// summaryBase is the summary's heatmap as a grid of cells: each its max
// (min when lower is better), the combo it holds when a cell is one combo.
// A strategy grid of one axis: the summary's column drawn as a row.
func (m *Model) summaryBase() base {
	hs := m.summaryMap()
	g := m.state.Results.Grid
	n3 := g.HMA3.Len()
	low := m.better(0, 1)
	rows, cols, br, bc := hs.Rows, hs.Cols, hs.BlockRows, hs.BlockCols
	one := g.Strategy != nil && len(g.Strategy.Axes()) == 1
	if one {
		rows, cols, br, bc = hs.Cols, hs.Rows, hs.BlockCols, hs.BlockRows
	}
	return base{rows: rows, cols: cols, br: br, bc: bc, at: func(y, x int) cell {
		if one {
			y, x = x, y
		}
		c := hs.Cell(y, x)
		idx := -1
		switch {
		case !hs.Full():
		case g.Strategy == nil:
			idx = y*n3 + x
		case one:
			idx = g.Strategy.IndexOf([]int{y})
		default:
			idx = g.Strategy.IndexOf([]int{y, x})
		}
		v := c.Max
		if low {
			v = c.Min
		}
		if c.N == 0 || math.IsNaN(v) {
			return cell{st: missing, idx: idx}
		}
		return cell{v: v, st: shown, idx: idx}
	}}
}

// inWindow reports whether plane cell (y, x) is in the window read.
func (m *Model) inWindow(y, x int) bool {
	w := &m.win
	return w.r == m.state.Results && w.prec == m.state.Prec && w.err == nil && y >= w.r0 && y < w.r1 && x >= w.c0 && x < w.c1
}

// windowCell is plane cell (y, x)'s cell from the window read: hull's
// combo, or the best of a strategy cell's combos (reduceCells); ok is
// false outside it.
func (m *Model) windowCell(y, x int) (cell, bool) {
	r := m.state.Results
	w := &m.win
	if !m.inWindow(y, x) {
		return cell{}, false
	}
	if r.Grid.Strategy != nil {
		ks := w.byCell[y*m.pl().cols+x]
		members := make([]cell, len(ks))
		for i, k := range ks {
			members[i] = m.resultCell(&w.rs[k])
		}
		return m.reduceCells(members), true
	}
	idx := r.Grid.Index(y, x)
	k, ok := w.pos[idx]
	if !ok {
		return cell{st: missing, idx: idx}, true // not computed
	}
	return m.resultCell(&w.rs[k]), true
}

// resultCell is a result's cell of the metric shown, left out (off) by
// the table's filter or the constraints.
func (m *Model) resultCell(c *engine.ComboResult) cell {
	v, ok := c.Metrics.Value(m.state.Metric)
	switch {
	case !ok || math.IsNaN(v):
		return cell{st: missing, idx: c.Index}
	case m.state.KeepResult != nil && !m.state.KeepResult(c), !m.state.Results.Objective.Selectable(c):
		return cell{v: v, st: off, idx: c.Index}
	}
	return cell{v: v, st: shown, idx: c.Index}
}

// windowOff counts the window's combos left out (filter, constraints).
func (m *Model) windowOff() int {
	w := &m.win
	n := 0
	if m.state.Results.Grid.Strategy != nil {
		if w.r != m.state.Results || w.prec != m.state.Prec || w.err != nil {
			return 0
		}
		for k := range w.rs {
			if m.resultCell(&w.rs[k]).st == off {
				n++
			}
		}
		return n
	}
	for y := w.r0; y < w.r1; y++ {
		for x := w.c0; x < w.c1; x++ {
			if c, ok := m.windowCell(y, x); ok && c.st == off {
				n++
			}
		}
	}
	return n
}

// windowNote says what the detail view of paged results draws, when it
// is not every combo's value: "" when it is.
func (m *Model) windowNote() string {
	r := m.state.Results
	hs := m.summaryMap()
	switch {
	case m.overview:
		if m.state.Filter != "" {
			return "the filter greys combos in the detail view, not the summary's blocks"
		}
		return ""
	case r.Pager(m.state.Prec) == nil && hs != nil && !hs.Full():
		return "cells show their summary block's value: " + r.PagerWhy
	case m.win.err != nil && m.win.r == r:
		return "the window could not be read: " + m.win.err.Error()
	case m.asked != nil:
		return "reading the combos in view" + m.ctx.Theme.Ellipsis
	}
	return ""
}

// value is combo idx's value of metric in precision p: from the window
// read, else what the results hold.
func (m *Model) value(idx int, metric string, p engine.Precision) (float64, bool) {
	if r := m.state.Results; m.paged() && p == m.state.Prec && !common.IsParityColumn(metric) {
		if w := &m.win; w.r == r && w.prec == p {
			if k, ok := w.pos[idx]; ok {
				if row, col := m.pl().rowCol(idx); m.inWindow(row, col) {
					return w.rs[k].Metrics.Value(metric)
				}
			}
		}
	}
	return m.state.Results.Value(idx, metric, p)
}

// Fetch is the command that reads the window of combos the detail view
// needs (the one drawn, or the one the cursor scrolls to), nil when it
// holds it or reads it already, in the overview, and for full results.
// Its answer is tagged by the caller.
func (m *Model) Fetch() tea.Cmd {
	r := m.state.Results
	if !m.paged() || m.overview || m.summaryMap() == nil {
		return nil
	}
	p := m.state.Prec
	pg := r.Pager(p)
	if pg == nil {
		return nil
	}
	pl := m.pl()
	nh, n3 := pl.rows, pl.cols
	visR, visC := m.visR, m.visC
	if visR <= 0 || visC <= 0 {
		visR, visC = min(nh, 16), min(n3, 32) // not drawn yet
	}
	r0 := scrollTo(m.r0, m.row, visR, nh)
	c0 := scrollTo(m.c0, m.col, visC, n3)
	r1, c1 := min(nh, r0+visR), min(n3, c0+visC)
	if m.win.covers(r, p, r0, r1, c0, c1) || (m.asked != nil && m.asked.covers(r, p, r0, r1, c0, c1)) {
		return nil
	}
	// Half a window more on each side: a few steps of the cursor need no
	// read.
	w := window{r: r, prec: p, r0: max(0, r0-visR/2), r1: min(nh, r1+visR/2), c0: max(0, c0-visC/2), c1: min(n3, c1+visC/2)}
	m.asked = &w
	return common.Guard(func() tea.Msg {
		out := w
		if pl.strat() && pl.y < 0 {
			// One axis: the plane's columns are the grid's rows.
			out.rs, out.err = pg.Window(context.Background(), w.c0, w.c1, 0, 1)
		} else {
			out.rs, out.err = pg.Window(context.Background(), w.r0, w.r1, w.c0, w.c1)
		}
		return windowMsg{out}
	}, func(err error) tea.Msg { out := w; out.err = err; return windowMsg{out} })
}

// took takes a window read, when it is the one asked for.
func (m *Model) took(msg windowMsg) {
	if m.asked == nil || !m.asked.same(&msg.window) {
		return
	}
	m.asked = nil
	w := msg.window
	w.pos = make(map[int]int, len(w.rs))
	p := m.pl()
	if p.strat() {
		w.byCell = map[int][]int{}
	}
	for k := range w.rs {
		w.pos[w.rs[k].Index] = k
		if p.strat() {
			row, col := p.rowCol(w.rs[k].Index)
			w.byCell[row*p.cols+col] = append(w.byCell[row*p.cols+col], k)
		}
	}
	m.win = w
}
