package heatmap

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sweepbench/engine"
)

// The plane the pane draws: hull's HMA x HMA3 grid as it is (rows hma,
// columns hma3, a cell a combo), or two axes of a strategy family's grid
// (engine.Strategy.Axes), rows the y axis and columns the x axis, the
// other axes reduced into each cell: the best of their combos by the
// metric shown (as the overview's blocks are), their median, or the combo
// at a value of theirs the user steps through (ReduceStep). The keys x
// and y choose the axes, d the reduction, < and > step.

// Reduce is how a strategy heatmap's cell stands for the combos of the
// axes it does not show.
type Reduce uint8

const (
	ReduceBest   Reduce = iota // the best value (max, or min when lower is better)
	ReduceMedian               // the median of their values
	ReduceStep                 // the combo at the stepped values
)

func (r Reduce) String() string {
	switch r {
	case ReduceMedian:
		return "median"
	case ReduceStep:
		return "stepped"
	}
	return "best"
}

// plane is the matrix drawn: rows x cols cells.
type plane struct {
	g          engine.Grid
	axes       []engine.StrategyAxis // nil for hull
	y, x       int                   // the axes shown (strategy)
	others     []int                 // the axes reduced, in order
	rows, cols int
}

// strat reports whether the plane is a strategy grid's.
func (p plane) strat() bool { return p.axes != nil }

// pl is the plane of the results shown.
func (m *Model) pl() plane {
	g := m.state.Results.Grid
	if g.Strategy == nil {
		return plane{g: g, rows: g.HMA.Len(), cols: g.HMA3.Len()}
	}
	m.fitAxes(g.Strategy)
	p := plane{g: g, axes: g.Strategy.Axes(), y: m.yAxis, x: m.xAxis}
	if len(p.axes) == 1 {
		p.y, p.x = -1, 0 // one row
	}
	for i := range p.axes {
		if i != p.y && i != p.x {
			p.others = append(p.others, i)
		}
	}
	p.rows, p.cols = 1, len(p.axes[p.x].Values)
	if p.y >= 0 {
		p.rows = len(p.axes[p.y].Values)
	}
	return p
}

// fitAxes resets the axes and the steps to the first two axes and their
// first values when the grid is another than last drawn.
func (m *Model) fitAxes(s engine.Strategy) {
	if s == m.axesOf && len(m.step) == len(s.Axes()) {
		return
	}
	m.axesOf = s
	n := len(s.Axes())
	m.yAxis, m.xAxis = 0, min(1, n-1)
	m.step = make([]int, n)
	m.row, m.col = 0, 0
}

// yName and xName name the axes: "hma", "length"; a leg with its kind
// ("fast ema").
func (p plane) yName() string {
	if !p.strat() {
		return engine.FieldHMA
	}
	if p.y < 0 {
		return ""
	}
	return axisName(p.axes[p.y])
}

func (p plane) xName() string {
	if !p.strat() {
		return engine.FieldHMA3
	}
	return axisName(p.axes[p.x])
}

func axisName(ax engine.StrategyAxis) string {
	if ax.Kind != "" {
		return ax.Name + " " + ax.Kind
	}
	return ax.Name
}

// rowLabel and colLabel are the values of row i and column j.
func (p plane) rowLabel(i int) string {
	if !p.strat() {
		return strconv.Itoa(p.g.HMA.At(i))
	}
	if p.y < 0 {
		return ""
	}
	return p.axes[p.y].Values[i]
}

func (p plane) colLabel(j int) string {
	if !p.strat() {
		return strconv.Itoa(p.g.HMA3.At(j))
	}
	return p.axes[p.x].Values[j]
}

// rowWidth and colWidth are the widest row and column labels.
func (p plane) rowWidth() int {
	if !p.strat() {
		return len(strconv.Itoa(p.g.HMA.Last()))
	}
	w := 0
	for i := range p.rows {
		w = max(w, len(p.rowLabel(i)))
	}
	return w
}

func (p plane) colWidth() int {
	if !p.strat() {
		return len(strconv.Itoa(p.g.HMA3.Last()))
	}
	w := 0
	for j := range p.cols {
		w = max(w, len(p.colLabel(j)))
	}
	return w
}

// rowCol is the cell combo idx is in.
func (p plane) rowCol(idx int) (row, col int) {
	if !p.strat() {
		n3 := max(p.cols, 1)
		return idx / n3, idx % n3
	}
	if idx < 0 || idx >= p.g.Len() {
		return 0, 0
	}
	c := p.g.Strategy.Coords(idx)
	if p.y >= 0 {
		row = c[p.y]
	}
	return row, c[p.x]
}

// span is the range of a reduced axis's values shown in the legend:
// "0:1:0.5".
func (p plane) span(a int) string { return p.axes[a].Range }

// index is the combo of cell (row, col): hull's grid position, or the
// combo the strategy cell shows (-1 when it shows none).
func (m *Model) index(row, col int) int {
	p := m.pl()
	if !p.strat() {
		return p.g.Index(row, col)
	}
	if m.paged() {
		return -1
	}
	m.fresh()
	if k := row*p.cols + col; k >= 0 && k < len(m.cached) {
		return m.cached[k].idx
	}
	return -1
}

// reducedCells are the strategy plane's cells: each the reduction of the
// combos of its row and column over the other axes (their cells, as
// cells() makes a combo's: missing, shown, off).
func (m *Model) reducedCells(p plane, combo func(i int) cell) []cell {
	out := make([]cell, p.rows*p.cols)
	coords := make([]int, len(p.axes))
	var members []cell
	for row := range p.rows {
		for col := range p.cols {
			if p.y >= 0 {
				coords[p.y] = row
			}
			coords[p.x] = col
			members = members[:0]
			m.eachOther(p, coords, func(c []int) {
				if i := p.g.Strategy.IndexOf(c); i >= 0 {
					members = append(members, combo(i))
				}
			})
			out[row*p.cols+col] = m.reduceCells(members)
		}
	}
	return out
}

// eachOther calls f with coords at every combination of the reduced
// axes' values (ReduceStep: only the stepped one).
func (m *Model) eachOther(p plane, coords []int, f func([]int)) {
	if m.red == ReduceStep {
		for _, a := range p.others {
			coords[a] = min(m.step[a], len(p.axes[a].Values)-1)
		}
		f(coords)
		return
	}
	var rec func(k int)
	rec = func(k int) {
		if k == len(p.others) {
			f(coords)
			return
		}
		a := p.others[k]
		for v := range p.axes[a].Values {
			coords[a] = v
			rec(k + 1)
		}
	}
	rec(0)
}

// reduceCells is the cell of members (the combos a cell stands for): the best
// shown (ReduceBest, ReduceStep's one), or the median of the shown values,
// the combo nearest below it; off when every member is left out, missing
// when none has a value. n is how many were shown.
func (m *Model) reduceCells(members []cell) cell {
	b := cell{idx: -1}
	var shownCells []cell
	for _, x := range members {
		switch {
		case x.st == off && b.st == missing:
			b.st, b.idx = off, x.idx
		case x.st == shown:
			shownCells = append(shownCells, x)
			if b.st != shown || m.better(x.v, b.v) {
				b = x
			}
		}
	}
	if m.red != ReduceMedian || len(shownCells) == 0 {
		return b
	}
	sort.SliceStable(shownCells, func(i, j int) bool { return shownCells[i].v < shownCells[j].v })
	n := len(shownCells)
	mid := shownCells[(n-1)/2]
	v := mid.v
	if n%2 == 0 {
		v = (mid.v + shownCells[n/2].v) / 2
	}
	return cell{v: v, st: shown, idx: mid.idx}
}

// stepKey is the steps as a comparable key.
func (m *Model) stepKey() string { return fmt.Sprint(m.step) }

// stepBy moves the stepped values d places, the last reduced axis
// fastest (an odometer over the reduced axes).
func (m *Model) stepBy(p plane, d int) {
	if len(p.others) == 0 {
		return
	}
	n := 1
	for _, a := range p.others {
		n *= len(p.axes[a].Values)
	}
	k := 0
	for _, a := range p.others {
		k = k*len(p.axes[a].Values) + m.step[a]
	}
	k = ((k+d)%n + n) % n
	for i := len(p.others) - 1; i >= 0; i-- {
		a := p.others[i]
		l := len(p.axes[a].Values)
		m.step[a] = k % l
		k /= l
	}
}

// nextAxis is the axis after a (in direction 1) that is not skip.
func nextAxis(n, a, skip int) int {
	for k := 1; k <= n; k++ {
		if b := (a + k) % n; b != skip {
			return b
		}
	}
	return a
}

// reduction says what the cells show of the reduced axes, for the
// legend: "exit best (max) of 0:1:0.5", "exit median of 0:1:0.5",
// "exit = 0.5 (stepped: < >)".
func (m *Model) reduction(p plane) string {
	if len(p.others) == 0 {
		return ""
	}
	var names, vals []string
	for _, a := range p.others {
		names = append(names, axisName(p.axes[a]))
		vals = append(vals, p.axes[a].Values[min(m.step[a], len(p.axes[a].Values)-1)])
	}
	switch m.red {
	case ReduceStep:
		var parts []string
		for i := range names {
			parts = append(parts, names[i]+" = "+vals[i])
		}
		return strings.Join(parts, ", ") + " (stepped: < >)"
	case ReduceMedian:
		return strings.Join(names, ", ") + ": median over " + m.others(p)
	}
	return strings.Join(names, ", ") + ": best (" + m.bestName() + ") over " + m.others(p)
}

// others names the reduced axes' ranges: "0:1:0.5".
func (m *Model) others(p plane) string {
	var r []string
	for _, a := range p.others {
		r = append(r, p.span(a))
	}
	return strings.Join(r, " x ")
}

// Axes says the axes shown and the reduction, for tests and the help:
// "entry x length; exit = 0.5 (stepped: < >)"; "" for hull.
func (m *Model) Axes() string {
	if m.state.Results == nil || m.state.Results.Grid.Strategy == nil {
		return ""
	}
	p := m.pl()
	s := p.xName()
	if p.y >= 0 {
		s = p.yName() + " x " + s
	}
	if red := m.reduction(p); red != "" {
		s += "; " + red
	}
	return s
}
