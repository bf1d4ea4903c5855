package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is one chart of a session, ready to write: one or more panels
// (plots) stacked top to bottom (or side by side) with their data areas
// aligned.
type Figure struct {
	Name    string // its --figure name, e.g. "heatmap"
	Title   string // what it shows, one line (also drawn above the top panel)
	Caption string // how to read it, a sentence or two (the HTML report prints it)
	// Width and Height are the figure's size (points: 1/72 inch).
	Width, Height vg.Length
	panels        []panel
	across        bool       // panels side by side (else stacked)
	hover         *cellRects // a heatmap's cells, a <title> each in the SVG (nil: none)
}

// panel is one plot of a figure and its share of the figure's height
// (stacked) or width (across).
type panel struct {
	p     *plot.Plot
	share float64
}

// Default figure size: 16 x 10 cm, readable on a phone (the report scales
// it to the screen's width) and on an A4 page.
const (
	DefaultWidth  = 16 * vg.Centimeter
	DefaultHeight = 10 * vg.Centimeter
)

// newFigure is a figure of the given panels, stacked.
func newFigure(name, title, caption string, panels ...panel) *Figure {
	return &Figure{Name: name, Title: title, Caption: caption, Width: DefaultWidth, Height: DefaultHeight, panels: panels}
}

// newPlot is a plot with the figures' common style: a sans-serif face
// the report's readers have (gonum's default Liberation, drawn by the
// browser from the family name, falls back to the reader's sans-serif).
func newPlot() *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.TextStyle.Font.Size = 9
	p.Y.Label.TextStyle.Font.Size = 9
	p.X.Tick.Label.Font.Size = 8
	p.Y.Tick.Label.Font.Size = 8
	p.Legend.TextStyle.Font.Size = 8
	p.Legend.Top = true
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{}
	return p
}

// Draw draws the figure on c: the panels in their shares of c, their
// data areas aligned (stacked: the same left and right edges; across: the
// same top and bottom).
func (f *Figure) Draw(c draw.Canvas) {
	if len(f.panels) == 0 {
		return
	}
	total := 0.0
	for _, p := range f.panels {
		total += p.share
	}
	cs := make([]draw.Canvas, len(f.panels))
	size := c.Max.Y - c.Min.Y
	if f.across {
		size = c.Max.X - c.Min.X
	}
	var at vg.Length
	for i, p := range f.panels {
		part := vg.Length(p.share / total * float64(size))
		if f.across {
			cs[i] = draw.Crop(c, at, -(size - at - part), 0, 0)
		} else { // top to bottom
			cs[i] = draw.Crop(c, 0, 0, size-at-part, -at)
		}
		at += part
	}
	// Align the data areas: the largest margin on each side wins.
	var lo, hi vg.Length
	margins := make([][2]vg.Length, len(cs))
	for i, p := range f.panels {
		d := p.p.DataCanvas(cs[i])
		if f.across {
			margins[i] = [2]vg.Length{d.Min.Y - cs[i].Min.Y, cs[i].Max.Y - d.Max.Y}
		} else {
			margins[i] = [2]vg.Length{d.Min.X - cs[i].Min.X, cs[i].Max.X - d.Max.X}
		}
		lo, hi = max(lo, margins[i][0]), max(hi, margins[i][1])
	}
	for i, p := range f.panels {
		a, b := lo-margins[i][0], hi-margins[i][1]
		if f.across {
			p.p.Draw(draw.Crop(cs[i], 0, 0, a, -b))
		} else {
			p.p.Draw(draw.Crop(cs[i], a, -b, 0, 0))
		}
	}
}

// RenderError is a figure that could not be drawn (a plotting library
// panic turned into an error, naming the figure).
type RenderError struct {
	Figure string
	Err    error
}

func (e *RenderError) Error() string { return fmt.Sprintf("drawing figure %s: %v", e.Figure, e.Err) }
func (e *RenderError) Unwrap() error { return e.Err }

// render draws f on a canvas of the vg package through draw, turning a
// panic of the plotting library into a *RenderError.
func (f *Figure) render(c vg.CanvasSizer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &RenderError{f.Name, fmt.Errorf("%v", r)}
		}
	}()
	f.Draw(draw.New(c))
	return nil
}

// WriteSVG writes the figure as a standalone SVG document (text as <text>
// elements, no fonts embedded, no external reference).
func (f *Figure) WriteSVG(w io.Writer) error {
	c := vgsvg.New(f.Width, f.Height)
	if err := f.render(c); err != nil {
		return err
	}
	if f.hover == nil {
		_, err := c.WriteTo(w)
		return err
	}
	// The cells' hover titles go last, inside the outer group (vgsvg's
	// coordinates), over everything drawn.
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return err
	}
	s := b.Bytes()
	end := bytes.LastIndex(s, []byte("</g>"))
	if end < 0 {
		return &RenderError{f.Name, errors.New("no </g> in the SVG output")}
	}
	out := append(append(append([]byte{}, s[:end]...), f.hover.hoverSVG()...), s[end:]...)
	_, err := w.Write(out)
	return err
}

// PNGDPI is the resolution of WritePNG: 16 x 10 cm at 150 dpi is 945 x
// 591 pixels.
const PNGDPI = 150

// WritePNG writes the figure as a PNG image at PNGDPI.
func (f *Figure) WritePNG(w io.Writer) error {
	c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(missing))
	if err := f.render(c); err != nil {
		return err
	}
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// svgHead is the root element's size attributes in vgsvg's output.
var svgHead = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*"`)

// InlineSVG is the figure as an <svg> element to put in an HTML page:
// WriteSVG's document without the XML declaration and comment, sized by
// its viewBox to the width of its container (so it fits a phone), with
// its title as the accessible name.
func (f *Figure) InlineSVG() ([]byte, error) {
	var b bytes.Buffer
	if err := f.WriteSVG(&b); err != nil {
		return nil, err
	}
	s := b.Bytes()
	i := bytes.Index(s, []byte("<svg "))
	if i < 0 {
		return nil, &RenderError{f.Name, errors.New("no <svg> element in the output")}
	}
	s = s[i:]
	loc := svgHead.FindIndex(s)
	if loc == nil {
		return nil, &RenderError{f.Name, errors.New("unexpected <svg> element")}
	}
	head := fmt.Sprintf(`<svg class="figure" role="img" aria-label="%s" width="100%%" preserveAspectRatio="xMidYMid meet"`, htmlAttr(f.Title))
	return append([]byte(head), s[loc[1]:]...), nil
}
