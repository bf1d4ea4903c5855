// Package chart draws the workbench's line charts (crossover, equity) with
// ntcharts' timeserieslinechart: several series over one index domain (bar
// k of a window), one column per point or per bucket of points, axes with
// labels. With colour the series are lines in their own colours; in plain
// mode they are marker characters, so they stay apart without colour.
package chart

import (
	"math"
	"strconv"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	tslc "github.com/NimbleMarkets/ntcharts/linechart/timeserieslinechart"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/common"
)

// Series is one line: a value per point (NaN: no value), its colour and
// its marker in plain mode.
type Series struct {
	Name   string
	Values []float64
	Color  lipgloss.TerminalColor
	Marker rune
}

// Spec describes a chart of N points.
type Spec struct {
	W, H      int
	Series    []Series // drawn in order, later on top
	XLabel    func(k int) string
	XStep     int   // columns between X labels (0: no X axis)
	Highlight []int // points whose column is highlighted (colour mode)
}

// Layout says where the points landed, so callers can align text under them.
type Layout struct {
	Left  int     // canvas column of point 0
	Scale float64 // columns per point: point k is at Left + round(k*Scale)
	Cols  int     // columns available for points, Left included
}

// Col returns the canvas column of point k.
func (l Layout) Col(k int) int { return l.Left + int(math.Round(float64(k)*l.Scale)) }

// PointsFor is how many points fill a chart of width w one column each,
// given the widest Y label: the caller picks its window with it.
func PointsFor(w, yLabelWidth int) int { return max(2, w-yLabelWidth) }

// Render draws the chart. It returns the rendered w x h string and the
// layout of its points.
func Render(ctx *common.Context, sp Spec) (string, Layout) {
	t := ctx.Theme
	st := newStyles(t)
	n := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range sp.Series {
		n = max(n, len(s.Values))
		for _, v := range s.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if sp.W < 8 || sp.H < 3 || n < 2 || lo > hi {
		return t.Fit(t.Subtle.Render("(no data to chart)"), max(sp.W, 0), max(sp.H, 0)), Layout{}
	}
	pad := (hi - lo) * 0.04
	if pad == 0 {
		pad = math.Max(math.Abs(lo)*0.01, 1e-9)
	}
	lo, hi = lo-pad, hi+pad
	t0 := time.Unix(0, 0).UTC()
	yfmt := func(_ int, v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	xfmt := func(_ int, v float64) string {
		if sp.XLabel == nil {
			return ""
		}
		return sp.XLabel(int(math.Round(v - float64(t0.Unix()))))
	}
	ch := tslc.New(sp.W, sp.H,
		tslc.WithXYSteps(sp.XStep, 2),
		tslc.WithYLabelFormatter(yfmt),
		tslc.WithXLabelFormatter(xfmt),
		tslc.WithAxesStyles(st.axis, st.label),
		tslc.WithYRange(lo, hi),
		tslc.WithTimeRange(t0, t0.Add(time.Second)))
	// Stretch or compress the N points over every column: a column without
	// a point would be drawn at the bottom.
	gw := ch.GraphWidth()
	span := n - 1
	lay := Layout{Left: ch.Origin().X, Scale: float64(gw) / float64(span), Cols: sp.W - ch.Origin().X}
	// Point k is at second k of the (synthetic) time axis; XLabel names it.
	ch.SetTimeRange(t0, t0.Add(time.Duration(span)*time.Second))
	ch.SetViewTimeRange(t0, t0.Add(time.Duration(span)*time.Second))
	if t.Plain {
		ch.Clear()
		ch.DrawXYAxisAndLabel()
		oy := ch.Origin().Y
		for _, s := range sp.Series {
			cols := bucket(s.Values, lay)
			for c, v := range cols {
				if math.IsNaN(v) || c == 0 {
					continue // column 0 is the Y axis: keep it readable
				}
				row := oy - int(math.Round((v-lo)*float64(oy)/(hi-lo)))
				ch.Canvas.SetCell(canvas.Point{X: lay.Left + c, Y: row}, canvas.NewCell(s.Marker))
			}
		}
	} else {
		var names []string
		for _, s := range sp.Series {
			any := false
			for k, v := range s.Values {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				any = true
				ch.PushDataSet(s.Name, tslc.TimePoint{Time: t0.Add(time.Duration(k) * time.Second), Value: v})
			}
			if any {
				ch.SetDataSetStyle(s.Name, lipgloss.NewStyle().Foreground(s.Color))
				ch.SetDataSetLineStyle(s.Name, runes.ArcLineStyle)
				names = append(names, s.Name)
			}
		}
		ch.DrawDataSets(names)
		for _, k := range sp.Highlight {
			x := lay.Col(k)
			for y := 0; y < ch.Origin().Y; y++ {
				p := canvas.Point{X: x, Y: y}
				cs := ch.Canvas.Cell(p).Style.Background(st.highlight.GetBackground())
				ch.Canvas.SetCellStyle(p, cs)
			}
		}
	}
	return t.Fit(t.Sanitize(ch.View()), sp.W, sp.H), lay
}

// bucket averages the values that land in each column (NaN where none).
func bucket(vals []float64, lay Layout) []float64 {
	sum := make([]float64, lay.Cols)
	cnt := make([]int, lay.Cols)
	for k, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		c := lay.Col(k) - lay.Left
		if c < 0 || c >= lay.Cols {
			continue
		}
		sum[c] += v
		cnt[c]++
	}
	out := make([]float64, lay.Cols)
	for c := range out {
		out[c] = math.NaN()
		if cnt[c] > 0 {
			out[c] = sum[c] / float64(cnt[c])
		}
	}
	return out
}
