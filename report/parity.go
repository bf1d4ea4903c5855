package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sweepbench/engine"
)

// binsPerDecade is the flip-margin histogram's resolution on its log axis.
const binsPerDecade = 4

// logBins counts the positive values of vals in bins of binsPerDecade per
// decade, spanning them and also, when extra > 0, extra; edges at
// 10^(k/binsPerDecade). It returns the bins and how many values were not
// positive (not drawn on a log axis).
func logBins(vals []float64, extra float64) (bins []plotter.HistogramBin, skipped int) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		} else {
			skipped++
		}
	}
	if extra > 0 {
		lo, hi = math.Min(lo, extra), math.Max(hi, extra)
	}
	if math.IsInf(lo, 1) {
		return nil, skipped
	}
	k0 := int(math.Floor(math.Log10(lo) * binsPerDecade))
	k1 := int(math.Floor(math.Log10(hi)*binsPerDecade)) + 1
	edge := func(k int) float64 { return math.Pow(10, float64(k)/binsPerDecade) }
	for k := k0; k < k1; k++ {
		bins = append(bins, plotter.HistogramBin{Min: edge(k), Max: edge(k + 1)})
	}
	for _, v := range vals {
		if v > 0 && !math.IsInf(v, 0) {
			i := int(math.Floor(math.Log10(v)*binsPerDecade)) - k0
			i = min(max(i, 0), len(bins)-1) // rounding at an edge
			bins[i].Weight++
		}
	}
	return bins, skipped
}

// vline is a vertical line at x over [y0, y1] in style st.
func vline(x, y0, y1 float64, st draw.LineStyle) *plotter.Line {
	l, _ := plotter.NewLine(plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}})
	l.LineStyle = st
	return l
}

// hline is a horizontal line at y over [x0, x1] in style st.
func hline(y, x0, x1 float64, st draw.LineStyle) *plotter.Line {
	l, _ := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	l.LineStyle = st
	return l
}

func dashed(c colorT) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
}

func solid(c colorT, w float64) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(w)}
}

// flipMarginFigure is the histogram of the listed flips' margins on a log
// axis with the borderline tolerance.
func (s *Source) flipMarginFigure() (*Figure, error) {
	p := s.Report.Parity
	if p == nil {
		return nil, s.unavailable("flip-margins", "has no parity report: it needs both an fp64 and an fp32 run that finished (its precisions: %s)", s.precisions())
	}
	if len(p.Flips) == 0 {
		return nil, s.unavailable("flip-margins", "has no flips: fp32 and fp64 hold the same position on every bar of every combo")
	}
	tol := p.Tolerance
	if tol <= 0 {
		tol = engine.DefaultBorderline
	}
	margins := make([]float64, len(p.Flips))
	for i, f := range p.Flips {
		margins[i] = f.Margin
	}
	bins, skipped := logBins(margins, tol)
	pl := newPlot()
	pl.Title.Text = "Flip margins |h3-h|/close"
	pl.X.Label.Text = "margin |h3-h|/close at the flip (fraction, log scale)"
	if g := s.Report.Grid; g.Strategy != nil {
		// A family's margin is its own (SPEC Part 2), at a divergence's root bar.
		pl.Title.Text = fmt.Sprintf("Flip margins of %s (fraction of close)", g.Family())
		pl.X.Label.Text = "margin at the flip's root bar, fraction of close (log scale)"
	}
	pl.Y.Label.Text = "flips"
	pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, logTicks{}
	h := &plotter.Histogram{Bins: bins, FillColor: colFP64, LineStyle: solid(missing, 0.5)}
	pl.Add(h)
	top := 0.0
	for _, b := range bins {
		top = math.Max(top, b.Weight)
	}
	tl := vline(tol, 0, top, dashed(colBad))
	pl.Add(tl)
	pl.Legend.Add(fmt.Sprintf("flips listed (%d of %d)", len(p.Flips), p.FlipCount), h)
	pl.Legend.Add(fmt.Sprintf("borderline tolerance %g", tol), tl)
	pl.X.Min, pl.X.Max = bins[0].Min, bins[len(bins)-1].Max
	roomForLegend(pl, 2, false)
	caption := fmt.Sprintf("Session %d: the margin of each flip the parity report lists (the worst %d of %d, non-borderline first); left of the dashed line a flip is borderline, explained by rounding. %d non-borderline in all.",
		s.ID, len(p.Flips), p.FlipCount, p.NonBorderlineFlips)
	if skipped > 0 {
		caption += fmt.Sprintf(" %d flips at margin 0 are not drawn (a log axis has no 0).", skipped)
	}
	return newFigure("flip-margins", pl.Title.Text, caption, panel{pl, 1}), nil
}

// indicatorErrorFigure is the max relative error of each fp32 indicator
// series by length, h and h3, on a log axis with the collapse limit.
func (s *Source) indicatorErrorFigure() (*Figure, error) {
	p := s.Report.Parity
	if p == nil {
		return nil, s.unavailable("indicator-error", "has no parity report: it needs both an fp64 and an fp32 run that finished (its precisions: %s)", s.precisions())
	}
	if len(p.IndicatorErrors) == 0 {
		return nil, s.unavailable("indicator-error", "has no indicator errors saved")
	}
	series := map[string]plotter.XYs{}
	floor := math.Inf(1)
	for _, e := range p.IndicatorErrors {
		if e.MaxRel > 0 {
			floor = math.Min(floor, e.MaxRel)
		}
	}
	if math.IsInf(floor, 1) {
		floor = 1e-17
	}
	ceiling := engine.MaxIndicatorRel
	for _, e := range p.IndicatorErrors {
		if e.MaxRel > 0 && !math.IsInf(e.MaxRel, 1) {
			ceiling = math.Max(ceiling, e.MaxRel)
		}
	}
	zeros, infs := 0, 0
	for _, e := range p.IndicatorErrors {
		v := e.MaxRel
		if !(v > 0) {
			v, zeros = floor/2, zeros+1 // drawn at the bottom: exact
		}
		if math.IsInf(v, 1) {
			v, infs = ceiling*10, infs+1 // drawn at the top: no finite error (fp64 0 where fp32 is not)
		}
		series[e.Series] = append(series[e.Series], plotter.XY{X: float64(e.Length), Y: v})
	}
	pl := newPlot()
	pl.Title.Text = "Indicator max relative error, fp32 vs fp64"
	pl.X.Label.Text = "length (bars)"
	pl.Y.Label.Text = "max |x32-x64|/|x64| (log scale)"
	pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	names := []string{"h", "h3"}
	if s.Report.Grid.Strategy != nil {
		// A family's series, by name ("ema", "sma", "zscore", ...).
		names = names[:0]
		for name := range series {
			names = append(names, name)
		}
		slices.Sort(names)
	}
	colours := []colorT{colFP64, colFP32, colGood, colMark, colOther, colBad}
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}
	for i, name := range names {
		xy := series[name]
		if len(xy) == 0 {
			continue
		}
		sortXY(xy)
		c := colours[i%len(colours)]
		sc, _ := plotter.NewScatter(xy)
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: glyphs[i%len(glyphs)]}
		ln, _ := plotter.NewLine(xy)
		ln.LineStyle = solid(c, 0.8)
		pl.Add(ln, sc)
		label, ok := map[string]string{"h": "h = HMA(source, length)", "h3": "h3 = HMA3(close, length)"}[name]
		if s.Report.Grid.Strategy != nil || !ok {
			label = name + " by length"
		}
		pl.Legend.Add(label, ln, sc)
		xmin, xmax = math.Min(xmin, xy[0].X), math.Max(xmax, xy[len(xy)-1].X)
	}
	lim := hline(engine.MaxIndicatorRel, xmin, xmax, dashed(colBad))
	pl.Add(lim)
	pl.Legend.Add(fmt.Sprintf("collapse limit %g", engine.MaxIndicatorRel), lim)
	caption := fmt.Sprintf("Session %d: for each indicator series (one per distinct length) the largest relative error of its fp32 values against fp64 over the defined bars; above the dashed line the parity verdict is collapse. Worst %.3g.",
		s.ID, p.MaxRelIndicatorError)
	if zeros > 0 {
		caption += fmt.Sprintf(" %d series are exact (error 0), drawn at the bottom.", zeros)
	}
	if infs > 0 {
		caption += fmt.Sprintf(" %d series have an infinite error (fp32 not 0 where fp64 is), drawn at the top.", infs)
	}
	return newFigure("indicator-error", pl.Title.Text, caption, panel{pl, 1}), nil
}

func sortXY(xy plotter.XYs) {
	slices.SortFunc(xy, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
}
