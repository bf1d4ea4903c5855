package report

import (
	"fmt"
	"image/color"
	"math"
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
type heat struct {
	g                  engine.Grid
	rows, cols, br, bc int
	val                []float64 // rows*cols, row-major; NaN: no value
	grey               []bool    // constrained out (nil: none)
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

func ceilDiv(a, b int) int { return max((a+b-1)/b, 1) }

// span is cell (r, c)'s rectangle in lengths: HMA3 along x, HMA along y,
// each combo a step wide, centred on its length.
func (h *heat) span(r, c int) (x0, x1, y0, y1 float64) {
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

// mark is a combo marked on a heatmap.
type mark struct {
	label string
	sign  string // the glyph in words, for the title
	combo engine.Combo
	glyph draw.GlyphDrawer
}

// heatPlot is the plot of h's cells coloured by colour(value) (grey for
// the constrained out, white for none), the marks on top with a legend.
func heatPlot(h *heat, title string, colour func(v float64) color.Color, marks []mark) *plot.Plot {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "HMA3 length (bars)"
	p.Y.Label.Text = "HMA length (bars)"
	cells := make(rects, 0, len(h.val))
	for r := 0; r < h.rows; r++ {
		for c := 0; c < h.cols; c++ {
			i := r*h.cols + c
			x0, x1, y0, y1 := h.span(r, c)
			fill := color.Color(missing)
			switch {
			case h.grey != nil && h.grey[i]:
				fill = greyOut
			case !math.IsNaN(h.val[i]):
				fill = colour(h.val[i])
			}
			cells = append(cells, rect{x0, x1, y0, y1, fill})
		}
	}
	p.Add(cells)
	x0, _, y0, _ := h.span(0, 0)
	_, x1, _, y1 := h.span(h.rows-1, h.cols-1)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = x0, x1, y0, y1
	var notes []string
	for _, m := range marks {
		sc, err := plotter.NewScatter(plotter.XYs{{X: float64(m.combo.HMA3), Y: float64(m.combo.HMA)}})
		if err != nil {
			continue
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: colMark, Radius: vg.Points(6), Shape: m.glyph}
		p.Add(sc)
		notes = append(notes, fmt.Sprintf("%s %s: hma %d, hma3 %d", m.sign, m.label, m.combo.HMA, m.combo.HMA3))
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

// divergingKey is the key of a diverging scale of limit lim: each band
// labelled with the largest |value| it colours, signed.
func divergingKey(lim float64, format func(float64) string) *plot.Plot {
	fills := make([]color.Color, len(diverging))
	labels := make([]string, len(diverging))
	mid := len(diverging) / 2
	for i := range diverging {
		fills[i] = diverging[i]
		labels[i] = format(float64(i-mid) / float64(mid) * lim)
	}
	return keyPlot("up to", fills, labels, true)
}

// gridFigure is a heatmap figure: the map and its key side by side.
func gridFigure(name, title, caption string, mapPlot, key *plot.Plot) *Figure {
	f := newFigure(name, title, caption, panel{mapPlot, 0.84}, panel{key, 0.16})
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
