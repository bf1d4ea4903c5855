package heatmap

import (
	"fmt"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	hm "github.com/NimbleMarkets/ntcharts/heatmap"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/theme"
)

// frame is one drawing of the pane: what its phases (layout, cells,
// axes, legend) compute and share.
type frame struct {
	t       *theme.Theme
	st      styles
	g       engine.Grid
	p       plane // what the rows and columns are
	nh, n3  int   // the plane's rows (hma) and columns (hma3)
	metric  string
	prec    engine.Precision
	nLevels int

	lw    int // the HMA labels' width, with the gutter
	avail int // the rows left for the grid

	db, ob base     // the detail's grid and the overview's
	blocks [][]cell // the overview's blocks (overview only)
	sorted []float64
	sc     Scale
	num    numFormat

	cw, rowH   int // a cell's width and height
	visR, visC int // the detail window's rows and columns

	// draw is the matrix of cells drawn; rowOf and colOf give the first
	// combo row and column of each, inRow and inCol whether a combo row
	// or column is in it.
	draw         [][]cell
	nR, nC       int
	rowOf, colOf func(int) int
	inRow, inCol func(y, i int) bool

	gw, gh  int  // the canvas's size, cells
	pr, pc  int  // the plateau best's row and column, -1 none
	numbers bool // the cells print their values
}

// render draws the pane with footer lines for the legend, and says how
// many lines the legend took; sorted are the shown cells' finite values.
func (m *Model) render(sorted []float64, footer int) (string, int) {
	f := m.layout(sorted, footer)
	grid := m.paint(f)
	var b strings.Builder
	b.WriteString(m.infoLine(f) + "\n")
	b.WriteString(m.axes(f, grid))
	legend := m.legend(f)
	b.WriteString(strings.Join(legend, "\n"))
	return f.t.Fit(b.String(), m.w, m.h), len(legend)
}

// layout sizes the drawing for footer lines of legend: the scale, the
// detail window and the matrix of cells drawn.
func (m *Model) layout(sorted []float64, footer int) *frame {
	t := m.ctx.Theme
	r := m.state.Results
	st := newStyles(t)
	g := r.Grid
	p := m.pl()
	f := &frame{t: t, st: st, g: g, p: p, nh: p.rows, n3: p.cols, metric: m.state.Metric, prec: m.state.Prec,
		nLevels: st.levels(t.Plain), sorted: sorted}

	f.lw = max(p.rowWidth(), 3) + 1
	f.avail = max(1, m.h-2-footer) // less the info line and the HMA3 labels
	if m.overview {
		f.avail = max(1, f.avail-1) // less the window's marks
	}
	m.layoutScale(f)
	m.layoutWindow(f)
	m.layoutCells(f)
	// The plateau best (robustness), marked with its glyph in the middle
	// of its cell.
	f.pr, f.pc = -1, -1
	if sm := r.Robust; sm != nil && sm.PlateauK > 0 && !p.strat() {
		f.pr, f.pc = sm.PlateauBest.Index/max(f.n3, 1), sm.PlateauBest.Index%max(f.n3, 1)
	}
	f.numbers = m.values && f.num.width <= f.cw-2
	return f
}

// layoutScale sets the values on the scale: every shown combo (detail:
// scrolling keeps the colours), or every block (overview).
func (m *Model) layoutScale(f *frame) {
	f.db = m.detailBase()
	f.ob = f.db
	if m.overview {
		// Blocks of bh x bw cells of the overview's grid: m.bh x m.bw
		// combos.
		f.ob = m.overviewBase()
		bh := max(1, ceilDiv(f.ob.rows, f.avail))
		bw := max(1, ceilDiv(f.ob.cols, m.w-f.lw))
		m.bh, m.bw = bh*f.ob.br, bw*f.ob.bc
		var vals []float64
		f.blocks, vals = m.blocks(f.ob, bh, bw)
		f.sorted = sortedFinite(vals)
	}
	f.sc = scaleOf(m.scale, f.sorted, f.nLevels)
	f.num = newNumFormat(f.metric, f.sorted, f.sc)
}

// layoutWindow sets the detail window (in both modes: the overview
// marks it) and scrolls it to the cursor.
func (m *Model) layoutWindow(f *frame) {
	nh, n3, lw, avail := f.nh, f.n3, f.lw, f.avail
	f.cw = max(2, min(10, (m.w-lw)/max(n3, 1)))
	if m.values && !m.overview {
		f.cw = max(f.cw, min(f.num.width+2, m.w-lw))
	}
	visC := max(1, min(n3, (m.w-lw)/f.cw))
	f.rowH = max(1, min(3, avail/max(nh, 1)))
	visR := max(1, min(nh, avail/f.rowH))
	if m.overview {
		dAvail := avail + 1
		visR = max(1, min(nh, dAvail/max(1, min(3, dAvail/max(nh, 1)))))
	}
	f.visR, f.visC = visR, visC
	m.visR, m.visC = visR, visC
	m.r0 = scrollTo(m.r0, m.row, visR, nh)
	m.c0 = scrollTo(m.c0, m.col, visC, n3)
}

// layoutCells sets what is drawn: a matrix of cells, and the combo range
// of each.
func (m *Model) layoutCells(f *frame) {
	lw := f.lw
	f.rowOf, f.colOf = func(y int) int { return m.r0 + y }, func(x int) int { return m.c0 + x }
	f.inRow = func(y, i int) bool { return i == m.r0+y }
	f.inCol = func(x, j int) bool { return j == m.c0+x }
	if m.overview {
		f.draw = f.blocks
		nC := len(f.blocks[0])
		f.cw = max(1, min(10, (m.w-lw)/nC))
		if m.values && f.num.width+2 > f.cw && f.num.width+2 <= m.w-lw {
			// Wider cells for the numbers: larger blocks.
			f.cw = f.num.width + 2
			bw := ceilDiv(f.ob.cols, (m.w-lw)/f.cw)
			m.bw = bw * f.ob.bc
			var vals []float64
			f.blocks, vals = m.blocks(f.ob, m.bh/f.ob.br, bw)
			f.sorted = sortedFinite(vals)
			f.sc = scaleOf(m.scale, f.sorted, f.nLevels)
			f.num = newNumFormat(f.metric, f.sorted, f.sc)
			f.draw = f.blocks
		}
		f.rowH = max(1, min(3, f.avail/len(f.blocks)))
		bh, bw := m.bh, m.bw
		f.rowOf, f.colOf = func(y int) int { return y * bh }, func(x int) int { return x * bw }
		f.inRow = func(y, i int) bool { return i/bh == y }
		f.inCol = func(x, j int) bool { return j/bw == x }
	} else {
		f.draw = make([][]cell, f.visR)
		for y := range f.draw {
			f.draw[y] = make([]cell, f.visC)
			for x := range f.draw[y] {
				f.draw[y][x] = f.db.at(m.r0+y, m.c0+x)
			}
		}
	}
	f.nR, f.nC = len(f.draw), len(f.draw[0])
	f.gw, f.gh = f.nC*f.cw, f.nR*f.rowH
}

// paint draws the cells: one heat point per canvas cell, at its level
// (the scale is ours; ntcharts maps level + 0.5 in [0, n] to colour n
// linearly), then each cell's glyphs (values, the plateau mark, the
// cursor) over it; it returns the canvas's lines.
func (m *Model) paint(f *frame) []string {
	gw, gh, cw, rowH := f.gw, f.gh, f.cw, f.rowH
	h := hm.New(gw, gh, hm.WithColorScale(f.st.scale), hm.WithValueRange(0, float64(len(f.st.scale))))
	h.SetXStep(0)
	h.SetYStep(0)
	h.Model.SetXYRange(0, float64(gw), 0, float64(gh))
	h.SetViewXYRange(0, float64(gw), 0, float64(gh))
	for y := range f.draw {
		for x, c := range f.draw[y] {
			if c.st != shown {
				continue
			}
			lv := float64(f.sc.Level(c.v)) + 0.5
			for dy := 0; dy < rowH; dy++ {
				for dx := 0; dx < cw; dx++ {
					h.Push(hm.NewHeatPoint(float64(x*cw+dx), float64(gh-1-(y*rowH+dy)), lv))
				}
			}
		}
	}
	h.Draw()
	for yy := 0; yy < gh; yy++ {
		y := yy / rowH
		mid := yy%rowH == rowH/2
		for x := 0; x < f.nC; x++ {
			m.paintCell(f, &h, x, y, yy, mid)
		}
	}
	return strings.Split(h.View(), "\n")
}

// paintCell draws the glyphs of canvas line yy of cell (x, y) of the
// matrix: the level's glyph (plain), the value, the plateau mark, the
// cursor's brackets; mid says whether yy is the cell's middle line.
func (m *Model) paintCell(f *frame, h *hm.Model, x, y, yy int, mid bool) {
	t, st, sc, cw := f.t, f.st, f.sc, f.cw
	c := f.draw[y][x]
	cur := f.inRow(y, m.row) && f.inCol(x, m.col)
	plateau := f.pr >= 0 && f.inRow(y, f.pr) && f.inCol(x, f.pc) && mid
	var text string
	if f.numbers && mid && c.st == shown {
		text = fmt.Sprintf("%*s", cw-2, f.num.format(c.v))
	}
	for dx := 0; dx < cw; dx++ {
		p := canvas.Point{X: x*cw + dx, Y: yy}
		ch := rune(0)
		style := lipgloss.NewStyle()
		if s := h.Canvas.GetCellStyle(p); s != nil {
			style = *s
		}
		switch c.st {
		case shown:
			if t.Plain {
				ch = st.ramp[sc.Level(c.v)]
			}
		case off:
			ch = st.offGlyph
			style = style.Inherit(st.off)
		}
		// A value: the level's glyph, the number, a space.
		if text != "" && dx == cw-1 && t.Plain {
			ch = ' '
		}
		if text != "" && dx >= 1 && dx <= cw-2 {
			ch = rune(text[dx-1])
			if !t.Plain {
				ink := st.ink[0]
				if sc.Level(c.v) >= f.nLevels/2 {
					ink = st.ink[1]
				}
				style = style.Foreground(ink)
			}
		}
		// The plateau's glyph in the middle of its cell, or, when
		// the cell prints its value, in the level glyph's place
		// before it (never over a digit).
		mark := plateau && ((text == "" && dx == cw/2) || (text != "" && dx == 0))
		if mark {
			ch = plateauGlyph
		}
		switch {
		case cur && cw == 1:
			ch, mark = cursorGlyph, false
		case cur && dx == 0:
			ch, mark = '[', false
		case cur && dx == cw-1:
			ch, mark = ']', false
		}
		if ch != 0 {
			if cur {
				style = style.Inherit(st.cursor)
			}
			if mark {
				style = style.Inherit(st.plateau)
			}
			h.Canvas.SetCell(p, canvas.NewCellWithStyle(ch, style))
		}
	}
}

// infoLine is line 1: the selected combo and its value (in the overview
// of a summary, its block's too), and the plateau mark's legend.
func (m *Model) infoLine(f *frame) string {
	st, g, metric := f.st, f.g, f.metric
	if f.p.strat() {
		return m.planeInfo(f)
	}
	sel := g.Index(m.row, m.col)
	val := "-"
	if v, ok := m.value(sel, metric, f.prec); ok {
		val = common.Value(metric, v)
	}
	line := st.info.Render(fmt.Sprintf("hma %d x hma3 %d: ", g.HMA.At(m.row), g.HMA3.At(m.col))) + st.value.Render(metric+" "+val)
	if hs := m.summaryMap(); hs != nil && !hs.Full() && m.overview {
		// The summary's block the cursor is in: its max, mean and min.
		c := hs.Cell(hs.CellOf(sel))
		line += st.info.Render(fmt.Sprintf("; its block: max %s mean %s min %s", common.Value(metric, c.Max),
			common.Value(metric, c.Mean), common.Value(metric, c.Min)))
	}
	if f.pr >= 0 {
		// The legend of the plateau mark, with the combo it marks.
		line += st.info.Render("   ") + st.plateau.Render(string(plateauGlyph)) +
			st.info.Render(fmt.Sprintf(" plateau best %d x %d", g.HMA.At(f.pr), g.HMA3.At(f.pc)))
	}
	return line
}

// axes are the canvas's rows with their HMA labels (the overview marks
// the detail window's rows with > and its columns with ^ below), then the
// HMA3 labels under their columns; each line ends with a newline.
func (m *Model) axes(f *frame, grid []string) string {
	st, p, lw, gw, cw, rowH := f.st, f.p, f.lw, f.gw, f.cw, f.rowH
	var b strings.Builder
	winRow := func(y int) bool {
		return m.overview && f.rowOf(y) <= m.r0+f.visR-1 && f.rowOf(y)+m.bh-1 >= m.r0
	}
	for yy := 0; yy < f.gh && yy < len(grid); yy++ {
		lab := strings.Repeat(" ", lw-1)
		if yy%rowH == rowH/2 {
			lab = fmt.Sprintf("%*s", lw-1, p.rowLabel(f.rowOf(yy/rowH)))
		}
		gut := " "
		if winRow(yy / rowH) {
			gut = ">"
		}
		b.WriteString(st.label.Render(lab+gut) + grid[yy] + "\n")
	}
	if m.overview {
		marks := []byte(strings.Repeat(" ", lw+gw))
		for x := 0; x < f.nC; x++ {
			if f.colOf(x) <= m.c0+f.visC-1 && f.colOf(x)+m.bw-1 >= m.c0 {
				for dx := 0; dx < cw; dx++ {
					marks[lw+x*cw+dx] = '^'
				}
			}
		}
		b.WriteString(st.label.Render(strings.TrimRight(string(marks), " ")) + "\n")
	}
	// The HMA3 labels under their columns.
	xl := []byte(strings.Repeat(" ", lw+gw))
	every := 1
	for every*cw < p.colWidth()+1 {
		every++
	}
	for x := 0; x < f.nC; x += every {
		s := p.colLabel(f.colOf(x))
		pos := lw + x*cw
		if pos+len(s) <= len(xl) {
			copy(xl[pos:], s)
		}
	}
	b.WriteString(st.label.Render(strings.TrimRight(string(xl), " ")) + "\n")
	return b.String()
}

// legend is the legend, wrapped to the pane: what is shown, the scale
// with the value at each boundary of its levels, what a greyed cell
// means.
func (m *Model) legend(f *frame) []string {
	t, st, g, sc, num := f.t, f.st, f.g, f.sc, f.num
	var words []string
	say := func(s string) {
		for _, w := range strings.Fields(s) {
			words = append(words, st.label.Render(w))
		}
	}
	switch {
	case f.p.strat():
		say(m.planeLegend(f))
	case m.overview && f.ob.br*f.ob.bc > 1:
		say(fmt.Sprintf("overview: a cell is %s of hma x %s of hma3, its %s (the run's summary, blocks of %d x %d); > ^ mark the detail window;",
			common.Plural(m.bh, "row"), common.Plural(m.bw, "column"), m.bestName(), f.ob.br, f.ob.bc))
	case m.overview:
		say(fmt.Sprintf("overview: a cell is %s of hma x %s of hma3, its %s; > ^ mark the detail window;",
			common.Plural(m.bh, "row"), common.Plural(m.bw, "column"), m.bestName()))
	case f.visR < f.nh || f.visC < f.n3:
		say(fmt.Sprintf("shown: hma %d..%d of %d..%d, hma3 %d..%d of %d..%d;",
			g.HMA.At(m.r0), g.HMA.At(m.r0+f.visR-1), g.HMA.Start, g.HMA.Last(),
			g.HMA3.At(m.c0), g.HMA3.At(m.c0+f.visC-1), g.HMA3.Start, g.HMA3.Last()))
	default:
		say("rows hma, cols hma3;")
	}
	if e := sc.Edges; len(e) > 0 && e[0] == e[len(e)-1] {
		// One value everywhere: no scale to read.
		v := num.format(e[0])
		if num.pct {
			v += "%"
		}
		say("every cell " + v)
	} else {
		say(sc.Kind.String() + " scale" + num.unit + ":")
		for i, e := range sc.Edges {
			words = append(words, st.label.Render(num.format(e)))
			if i < f.nLevels {
				words = append(words, m.swatch(st, i))
			}
		}
	}
	nOff := 0
	for _, c := range m.cached {
		if c.st == off {
			nOff++
		}
	}
	if m.paged() {
		nOff = m.windowOff()
		if note := m.windowNote(); note != "" {
			words[len(words)-1] += st.label.Render(";")
			say(note)
		}
	}
	if nOff > 0 {
		glyph := "blank"
		if !t.Plain {
			glyph = st.off.Render(string(st.offGlyph))
		}
		words[len(words)-1] += st.label.Render(";")
		words = append(words, glyph)
		say(fmt.Sprintf("%s left out (filter, constraints)", common.Plural(nOff, "combo")))
	}
	if m.values && !f.numbers {
		words[len(words)-1] += st.label.Render(";")
		say("cells too narrow for values")
	}
	return m.ctx.Theme.WrapWords(words, m.w)
}

// planeInfo is a strategy plane's line 1: the cursor cell's combo and
// its value (a median cell: the median, and the combo nearest below it).
func (m *Model) planeInfo(f *frame) string {
	st, p, metric := f.st, f.p, f.metric
	at := p.xName() + " " + p.colLabel(m.col)
	if p.y >= 0 {
		at = p.yName() + " " + p.rowLabel(m.row) + " x " + at
	}
	sel := m.index(m.row, m.col)
	if sel < 0 {
		return st.info.Render(at+": ") + st.value.Render(metric+" -") + st.info.Render(" (no combo here)")
	}
	val := "-"
	if v, ok := m.value(sel, metric, f.prec); ok {
		val = common.Value(metric, v)
	}
	line := st.info.Render(common.ComboName(f.g, sel)+": ") + st.value.Render(metric+" "+val)
	if m.red == ReduceMedian && len(p.others) > 0 {
		if c := m.cached[m.row*p.cols+m.col]; c.st == shown {
			line += st.info.Render("; cell median " + common.Value(metric, c.v))
		}
	}
	return line
}

// planeLegend is the legend's first words for a strategy plane: the
// axes, the reduction, the part shown.
func (m *Model) planeLegend(f *frame) string {
	p := f.p
	s := "cols " + p.xName()
	if p.y >= 0 {
		s = "rows " + p.yName() + ", " + s
	}
	if red := m.reduction(p); red != "" {
		s += "; " + red
	}
	switch {
	case m.overview:
		s += fmt.Sprintf("; overview: a cell is %s x %s, its %s; > ^ mark the detail window", common.Plural(m.bh, "row"), common.Plural(m.bw, "column"), m.bestName())
	case f.visR < f.nh || f.visC < f.n3:
		s += fmt.Sprintf("; shown: rows %s..%s, cols %s..%s", p.rowLabel(m.r0), p.rowLabel(m.r0+f.visR-1), p.colLabel(m.c0), p.colLabel(m.c0+f.visC-1))
	}
	return s + ";"
}
