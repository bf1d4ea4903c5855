package report

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sweepbench/engine"
)

// heat is a grid heatmap's cells: rows along the HMA lengths, columns
// along the HMA3 lengths (engine.Grid order), each cell a block of br x bc
// combos (the last row and column hold what is left).
//
// A strategy grid's heatmap (g.Strategy set, newStrategyHeat) has its rows
// along the grid's first axis and its columns along its second
// (Strategy.Axes), each cell reducing the combos of its block and of
// every other axis (rest) to one value.
type heat struct {
	g                  engine.Grid
	rows, cols, br, bc int
	val                []float64 // rows*cols, row-major; NaN: no value
	grey               []bool    // constrained out (nil: none)

	ax   [2]heatAxis // a strategy grid's: rows (y), columns (x)
	axi  [2]int      // their places in Strategy.Axes (-1: none, a grid of one axis)
	rest []string    // a strategy grid's axes reduced in each cell, by name

	cells *cellRects // the cells heatPlot drew last (their hover titles)
}

// heatAxis is one axis of a strategy grid's heatmap: its label, the
// position of each of its values and half a step.
type heatAxis struct {
	label string
	pos   []float64
	text  []string // each value as the grid names it (nil: none, a grid of one axis)
	half  float64
}

func newHeat(g engine.Grid, br, bc int) *heat {
	br, bc = max(br, 1), max(bc, 1)
	h := &heat{g: g, br: br, bc: bc, rows: ceilDiv(g.HMA.Len(), br), cols: ceilDiv(g.HMA3.Len(), bc)}
	h.val = make([]float64, h.rows*h.cols)
	for i := range h.val {
		h.val[i] = math.NaN()
	}
	return h
}

// newStrategyHeat is the empty heatmap of strategy grid g (g.Strategy
// set): rows along its axis axes[0], columns along axes[1] (-1: a single
// column, for a grid of one axis), at most cells of each (beyond, a cell
// is a block of values), every other axis reduced in each cell.
func newStrategyHeat(g engine.Grid, cells int, axes [2]int) *heat {
	cells = max(cells, 1)
	all := g.Strategy.Axes()
	h := &heat{g: g, axi: axes}
	for k, a := range axes {
		if a >= 0 && a < len(all) {
			h.ax[k] = strategyAxis(all[a])
		} else {
			h.ax[k], h.axi[k] = heatAxis{pos: []float64{0}, half: 0.5}, -1
		}
	}
	for a, ax := range all {
		if a != h.axi[0] && a != h.axi[1] {
			h.rest = append(h.rest, ax.Name)
		}
	}
	n0, n1 := len(h.ax[0].pos), len(h.ax[1].pos)
	h.br, h.bc = ceilDiv(n0, cells), ceilDiv(n1, cells)
	h.rows, h.cols = ceilDiv(n0, h.br), ceilDiv(n1, h.bc)
	h.val = make([]float64, h.rows*h.cols)
	for i := range h.val {
		h.val[i] = math.NaN()
	}
	return h
}

// CheckAxes reports whether names (Request.Axes) name the rows and the
// columns of a heatmap of g: nil names are the default; a strategy grid's
// must be two of its parameters; a hull grid's heatmap is always hma by
// hma3. Errors say what g has.
func CheckAxes(g engine.Grid, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if g.Strategy == nil {
		return fmt.Errorf("a hull study's heatmaps are hma by hma3: there are no axes to choose (its grid %s)", g.Text())
	}
	_, err := heatAxes(g, names)
	return err
}

// heatAxes are the places in g's axes of the parameters names gives for
// a strategy heatmap's rows and columns: by default ([] or ""s) its first
// two axes (a grid of one axis: that one and none). Errors name the
// parameters the grid has.
func heatAxes(g engine.Grid, names []string) ([2]int, error) {
	all := g.Strategy.Axes()
	axes := [2]int{0, 1}
	if len(all) < 2 {
		axes[1] = -1
	}
	if len(names) == 0 {
		return axes, nil
	}
	var have []string
	for _, ax := range all {
		have = append(have, ax.Name)
	}
	if len(names) != 2 {
		return axes, fmt.Errorf("want two parameters for the rows and the columns (of %s), not %d", strings.Join(have, ", "), len(names))
	}
	for k, n := range names {
		a := slices.Index(have, n)
		if a < 0 {
			return axes, fmt.Errorf("%s has no parameter %q (its parameters: %s)", g.Family(), n, strings.Join(have, ", "))
		}
		axes[k] = a
	}
	if axes[0] == axes[1] {
		return axes, fmt.Errorf("the rows and the columns are both %q: want two parameters of %s", names[0], strings.Join(have, ", "))
	}
	return axes, nil
}

// strategyAxis is ax as a heatmap draws it: a leg's lengths ("fast ema
// length (bars)"), another parameter's values by its name.
func strategyAxis(ax engine.StrategyAxis) heatAxis {
	a := heatAxis{label: ax.Name, half: 0.5}
	switch ax.Kind {
	case "":
	case "price": // no length
		a.label = ax.Name + " price"
	default:
		a.label = fmt.Sprintf("%s %s length (bars)", ax.Name, ax.Kind)
	}
	for k, t := range ax.Values {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			v = float64(k) // not a number: drawn by its place
		}
		a.pos = append(a.pos, v)
		a.text = append(a.text, t)
	}
	if len(a.pos) == 0 {
		a.pos, a.text = []float64{0}, nil
	}
	if len(a.pos) > 1 && a.pos[1] > a.pos[0] {
		a.half = (a.pos[1] - a.pos[0]) / 2
	}
	return a
}

// cellOf is the cell of combo index i (row-major in val); ok is false
// when the grid has no such combo.
func (h *heat) cellOf(i int) (k int, ok bool) {
	if i < 0 || i >= h.g.Len() {
		return 0, false
	}
	if h.g.Strategy == nil {
		n3 := max(h.g.HMA3.Len(), 1)
		return i/n3/h.br*h.cols + i%n3/h.bc, true
	}
	r, c, ok := h.coords(i)
	if !ok {
		return 0, false
	}
	r, c = r/h.br, c/h.bc
	if r >= h.rows || c >= h.cols {
		return 0, false
	}
	return r*h.cols + c, true
}

// coords is strategy combo i's index along the heatmap's rows' axis and
// its columns' (0 for none).
func (h *heat) coords(i int) (r, c int, ok bool) {
	co := h.g.Strategy.Coords(i)
	at := func(a int) (int, bool) {
		if a < 0 {
			return 0, true
		}
		if a >= len(co) {
			return 0, false
		}
		return co[a], true
	}
	r, ok0 := at(h.axi[0])
	c, ok1 := at(h.axi[1])
	return r, c, ok0 && ok1
}

// at is the point combo i of a strategy grid is drawn at: its value along
// the columns' axis (x) and along the rows' (y).
func (h *heat) at(i int) (x, y float64, ok bool) {
	if i < 0 || i >= h.g.Len() {
		return 0, 0, false
	}
	r, c, ok := h.coords(i)
	if !ok || r >= len(h.ax[0].pos) || c >= len(h.ax[1].pos) {
		return 0, 0, false
	}
	return h.ax[1].pos[c], h.ax[0].pos[r], true
}

// over is the caption's words for what a strategy heatmap's cell reduces,
// e.g. " over exit" (every combo of the cell's first two parameters,
// whatever its exit), or "".
func (h *heat) over() string {
	if len(h.rest) == 0 {
		return ""
	}
	return " over " + joinAnd(h.rest)
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(ws []string) string {
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

func ceilDiv(a, b int) int { return max((a+b-1)/b, 1) }

// span is cell (r, c)'s rectangle in lengths: HMA3 along x, HMA along y,
// each combo a step wide, centred on its length. A strategy grid's: its
// second axis' values along x, its first's along y.
func (h *heat) span(r, c int) (x0, x1, y0, y1 float64) {
	if h.g.Strategy != nil {
		ay, ax := &h.ax[0], &h.ax[1]
		c0, c1 := c*h.bc, min((c+1)*h.bc, len(ax.pos))
		r0, r1 := r*h.br, min((r+1)*h.br, len(ay.pos))
		return ax.pos[c0] - ax.half, ax.pos[c1-1] + ax.half, ay.pos[r0] - ay.half, ay.pos[r1-1] + ay.half
	}
	c0, c1 := c*h.bc, min((c+1)*h.bc, h.g.HMA3.Len())
	r0, r1 := r*h.br, min((r+1)*h.br, h.g.HMA.Len())
	s3, s := float64(max(h.g.HMA3.Step, 1))/2, float64(max(h.g.HMA.Step, 1))/2
	return float64(h.g.HMA3.At(c0)) - s3, float64(h.g.HMA3.At(c1-1)) + s3, float64(h.g.HMA.At(r0)) - s, float64(h.g.HMA.At(r1-1)) + s
}

// rect is a filled rectangle in data coordinates.
type rect struct {
	x0, x1, y0, y1 float64
	fill           color.Color
}

// rects is a plotter of filled rectangles (a heatmap's cells, a key's
// bands): one SVG path each.
type rects []rect

func (rs rects) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, r := range rs {
		x0, x1, y0, y1 := trX(r.x0), trX(r.x1), trY(r.y0), trY(r.y1)
		var pa vg.Path
		pa.Move(vg.Point{X: x0, Y: y0})
		pa.Line(vg.Point{X: x1, Y: y0})
		pa.Line(vg.Point{X: x1, Y: y1})
		pa.Line(vg.Point{X: x0, Y: y1})
		pa.Close()
		c.SetColor(r.fill)
		c.Fill(pa)
	}
}

func (rs rects) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, r := range rs {
		xmin, xmax = math.Min(xmin, r.x0), math.Max(xmax, r.x1)
		ymin, ymax = math.Min(ymin, r.y0), math.Max(ymax, r.y1)
	}
	return
}

// mark is a combo marked on a heatmap: a hull combo by its lengths, a
// strategy grid's by its index.
type mark struct {
	label string
	sign  string // the glyph in words, for the title
	combo engine.Combo
	index int
	glyph draw.GlyphDrawer
}

// place is where heatPlot draws mark m and its note under the title: a
// hull combo at (HMA3, HMA); a strategy combo at its own values along the
// columns' and the rows' axes (heat.at, by Strategy.Coords of its index),
// whatever the other parameters the cells reduce; ok is false when the
// grid has no such combo.
func (h *heat) place(m mark) (xy plotter.XY, note string, ok bool) {
	if h.g.Strategy == nil {
		return plotter.XY{X: float64(m.combo.HMA3), Y: float64(m.combo.HMA)}, fmt.Sprintf("%s %s: hma %d, hma3 %d", m.sign, m.label, m.combo.HMA, m.combo.HMA3), true
	}
	x, y, ok := h.at(m.index)
	if !ok {
		return xy, "", false
	}
	return plotter.XY{X: x, Y: y}, fmt.Sprintf("%s %s: %s", m.sign, m.label, h.g.Label(m.index)), true
}

// ticks are the ticks of h's axis k (0: the rows', y; 1: the columns',
// x): at the grid's values (gridTicks), none for a strategy grid's
// missing second axis.
func (h *heat) ticks(k int) gridTicks {
	if h.g.Strategy != nil {
		return gridTicks{vals: h.ax[k].pos[:len(h.ax[k].text)], text: h.ax[k].text}
	}
	r := h.g.HMA
	if k == 1 {
		r = h.g.HMA3
	}
	var t gridTicks
	for i := 0; i < r.Len(); i++ {
		t.vals = append(t.vals, float64(r.At(i)))
		t.text = append(t.text, strconv.Itoa(r.At(i)))
	}
	return t
}

// heatPlot is the plot of h's cells coloured by colour(value) (grey for
// the constrained out, white for none), the marks on top with a legend.
func heatPlot(h *heat, title string, colour func(v float64) color.Color, marks []mark) *plot.Plot {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "HMA3 length (bars)"
	p.Y.Label.Text = "HMA length (bars)"
	if h.g.Strategy != nil {
		p.X.Label.Text, p.Y.Label.Text = h.ax[1].label, h.ax[0].label
	}
	p.Y.Tick.Marker, p.X.Tick.Marker = h.ticks(0), h.ticks(1)
	cells := &cellRects{rects: make(rects, 0, len(h.val))}
	for r := 0; r < h.rows; r++ {
		for c := 0; c < h.cols; c++ {
			i := r*h.cols + c
			x0, x1, y0, y1 := h.span(r, c)
			fill := color.Color(missing)
			what := "no value"
			switch {
			case h.grey != nil && h.grey[i]:
				fill, what = greyOut, "constrained out"
				if !math.IsNaN(h.val[i]) {
					what = fmt.Sprintf("%.4g, constrained out", h.val[i])
				}
			case !math.IsNaN(h.val[i]):
				fill, what = colour(h.val[i]), fmt.Sprintf("%.4g", h.val[i])
			}
			cells.rects = append(cells.rects, rect{x0, x1, y0, y1, fill})
			cells.titles = append(cells.titles, h.cellName(r, c)+": "+what)
		}
	}
	h.cells = cells
	p.Add(cells)
	x0, _, y0, _ := h.span(0, 0)
	_, x1, _, y1 := h.span(h.rows-1, h.cols-1)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = x0, x1, y0, y1
	var notes []string
	for _, m := range marks {
		xy, note, ok := h.place(m)
		if !ok {
			continue
		}
		sc, err := plotter.NewScatter(plotter.XYs{xy})
		if err != nil {
			continue
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: colMark, Radius: vg.Points(6), Shape: m.glyph}
		p.Add(sc)
		notes = append(notes, note)
	}
	if h.grey != nil {
		notes = append(notes, "grey: constrained out")
	}
	if len(notes) > 0 {
		// Under the title: a legend would cover cells.
		p.Title.Text += "\n" + strings.Join(notes, "; ")
	}
	return p
}

// cellName is cell (r, c) in words, for its hover title: its combo's
// lengths ("hma 20, hma3 36") or parameters' values, a block's ranges
// ("hma 20-40"), and the parameters a strategy cell reduces (" over
// exit").
func (h *heat) cellName(r, c int) string {
	part := func(name string, lo, hi string) string {
		if lo == hi {
			return name + " " + lo
		}
		return name + " " + lo + "-" + hi
	}
	if h.g.Strategy == nil {
		c0, c1 := c*h.bc, min((c+1)*h.bc, h.g.HMA3.Len())-1
		r0, r1 := r*h.br, min((r+1)*h.br, h.g.HMA.Len())-1
		return part("hma", strconv.Itoa(h.g.HMA.At(r0)), strconv.Itoa(h.g.HMA.At(r1))) + ", " +
			part("hma3", strconv.Itoa(h.g.HMA3.At(c0)), strconv.Itoa(h.g.HMA3.At(c1)))
	}
	var ws []string
	all := h.g.Strategy.Axes()
	for k := range 2 {
		a := h.axi[k]
		if a < 0 || len(h.ax[k].text) == 0 {
			continue
		}
		b := h.br
		i := r
		if k == 1 {
			b, i = h.bc, c
		}
		i0, i1 := i*b, min((i+1)*b, len(h.ax[k].text))-1
		ws = append(ws, part(all[a].Name, h.ax[k].text[i0], h.ax[k].text[i1]))
	}
	return strings.Join(ws, ", ") + h.over()
}

// cellRects is a heatmap's cells with a hover title each: Plot records
// where each was drawn (in the canvas' points, y up), for hoverSVG.
type cellRects struct {
	rects
	titles []string
	drawn  []drawnCell
}

// drawnCell is a cell as drawn: its corners in points and its title.
type drawnCell struct {
	x0, y0, x1, y1 vg.Length
	title          string
}

func (cr *cellRects) Plot(c draw.Canvas, p *plot.Plot) {
	cr.rects.Plot(c, p)
	trX, trY := p.Transforms(&c)
	cr.drawn = cr.drawn[:0]
	for i, r := range cr.rects {
		cr.drawn = append(cr.drawn, drawnCell{trX(r.x0), trY(r.y0), trX(r.x1), trY(r.y1), cr.titles[i]})
	}
}

// hoverSVG is an SVG element per drawn cell, transparent, over it, with
// its <title> (the browser's tooltip: no script), in the coordinates of
// vgsvg's outer group (points, origin bottom left).
func (cr *cellRects) hoverSVG() []byte {
	var b strings.Builder
	for _, d := range cr.drawn {
		x, y := min(d.x0, d.x1), min(d.y0, d.y1)
		fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="#fff" fill-opacity="0"><title>%s</title></rect>`+"\n",
			x.Points(), y.Points(), (max(d.x0, d.x1) - x).Points(), (max(d.y0, d.y1) - y).Points(), html.EscapeString(d.title))
	}
	return []byte(b.String())
}

// Thumbnail draws a rects' legend swatch (its first fill).
func (rs rects) Thumbnail(c *draw.Canvas) {
	if len(rs) == 0 {
		return
	}
	var pa vg.Path
	pa.Move(vg.Point{X: c.Min.X, Y: c.Min.Y})
	pa.Line(vg.Point{X: c.Max.X, Y: c.Min.Y})
	pa.Line(vg.Point{X: c.Max.X, Y: c.Max.Y})
	pa.Line(vg.Point{X: c.Min.X, Y: c.Max.Y})
	pa.Close()
	c.SetColor(rs[0].fill)
	c.Fill(pa)
}

// keyPlot is a colour key: band i of len(fills) filled fills[i], the
// labels at the band boundaries (len(fills)+1) or, with centred, at the
// bands' centres (len(fills)).
func keyPlot(title string, fills []color.Color, labels []string, centred bool) *plot.Plot {
	p := newPlot()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 8
	p.HideX()
	bands := make(rects, len(fills))
	for i, f := range fills {
		bands[i] = rect{0, 1, float64(i), float64(i + 1), f}
	}
	p.Add(bands)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, float64(len(fills))
	var ticks []plot.Tick
	for i, l := range labels {
		v := float64(i)
		if centred {
			v += 0.5
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: l})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	return p
}

// quantileKey is the key of a quantile scale.
func quantileKey(s Scale, format func(float64) string) *plot.Plot {
	fills := make([]color.Color, s.Levels())
	labels := make([]string, len(s.Edges))
	for i := range fills {
		fills[i] = sequential[i*len(sequential)/len(fills)]
	}
	for i, e := range s.Edges {
		labels[i] = format(e)
	}
	return keyPlot("quantiles", fills, labels, false)
}

// divKey is the key of diverging scale d: white for 0, then each shade
// a side labelled with the largest |value| it colours, signed.
func divKey(d divScale, format func(float64) string) *plot.Plot {
	fills := []color.Color{diverging[len(diverging)/2]}
	labels := []string{format(0)}
	for k := range d.edges {
		fills = append([]color.Color{diverging[d.Level(-d.edges[k])]}, fills...)
		labels = append([]string{format(-d.edges[k])}, labels...)
		fills = append(fills, diverging[d.Level(d.edges[k])])
		labels = append(labels, format(d.edges[k]))
	}
	return keyPlot("up to", fills, labels, true)
}

// gridFigure is a heatmap figure: the map and its key side by side.
func gridFigure(name, title, caption string, mapPlot, key *plot.Plot, h *heat) *Figure {
	f := newFigure(name, title, caption, panel{mapPlot, 0.84}, panel{key, 0.16})
	f.hover = h.cells
	f.across = true
	f.Height = 12 * vg.Centimeter
	return f
}

// g3 formats a value for a key or a label: 3 significant digits.
func g3(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case v == 0:
		return "0"
	}
	return fmt.Sprintf("%.3g", v)
}
