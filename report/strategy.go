package report

import (
	"cmp"
	"context"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"sweepbench/engine"
	"sweepbench/strategy"
)

// The charts of one combo for a strategy family (engine.Grid.Strategy):
// the family's arithmetic (package strategy) on the session's dataset
// loaded again, as the engine's parity report computed it.

// strategyInspect recomputes combo i of the session's strategy grid in
// each of its precisions on its dataset loaded again, by the sweep's own
// path: the family's states (strategy.Evaluate: fp64 direct, fp32 in the
// session's formulation) then reference.BacktestPositionsTrace, the
// backtest strategy's kernel runs (so the metrics equal the run's bit
// for bit); a precision the session did not run is nil. The details
// hold the close, the metrics and the trace (positions after the mode,
// equity, trades), no indicator series.
func (s *Source) strategyInspect(ctx context.Context, fig string, i int) (st *engine.Study, sg strategy.Grid, d64, d32 *engine.ComboDetail, err error) {
	g := s.Report.Grid
	if i < 0 || i >= g.Len() {
		return nil, sg, nil, nil, s.unavailable(fig, "has no combo %d: its grid %s has %d", i, g.Text(), g.Len())
	}
	st, err = s.Study(ctx)
	if err != nil {
		return nil, sg, nil, nil, &UnavailableError{Figure: fig, ID: s.ID, Why: "cannot be recomputed: " + err.Error()}
	}
	sg, ok := strategy.GridOf(st.Grid.Strategy)
	if !ok || st.Grid.Text() != g.Text() || st.Grid.Len() != g.Len() {
		return nil, sg, nil, nil, s.unavailable(fig, "cannot be recomputed: its grid %s is not the study's built again (%s)", g.Text(), st.Grid.Text())
	}
	bars := &st.Dataset.Bars
	for _, p := range st.Precisions {
		var d *engine.ComboDetail
		d, err = engine.InspectIndex(ctx, bars, st.Grid, i, st.Params, p, st.WMA)
		if err != nil {
			return nil, sg, nil, nil, fmt.Errorf("figure %s: session %d, %s in %s: %w", fig, s.ID, g.Label(i), p, err)
		}
		d.Precision = p
		if p == engine.FP64 {
			d64 = d
		} else {
			d32 = d
		}
	}
	return st, sg, d64, d32, nil
}

// strategyCrossover is crossoverFigure for a strategy grid: flip k of n
// (f) recomputed (strategyInspect), its signal chart around the flip's
// root bar (signalChartOf: the lines the family's state machine compares
// in both precisions, and its constant levels), the positions (after
// the mode) below.
func (s *Source) strategyCrossover(ctx context.Context, r Request, f engine.Flip, k, n int) (*Figure, error) {
	st, sg, d64, d32, err := s.strategyInspect(ctx, "crossover", f.Index)
	if err != nil {
		return nil, err
	}
	if d64 == nil || d32 == nil {
		return nil, s.unavailable("crossover", "needs both precisions")
	}
	label := s.Report.Grid.Label(f.Index) // the grid names it, whether or not the saved flip kept its Name
	bars := &st.Dataset.Bars
	nb := bars.Len()
	pos64, pos32 := d64.Pos, d32.Pos
	w := r.Window
	if w <= 0 {
		w = DefaultWindow
	}
	lo, hi := max(f.Bar-w, 0), min(f.Bar+w, nb-1)
	sc, err := signalChartOf(d64.Signal, d32.Signal, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("figure crossover: session %d, %s: %w", s.ID, label, err)
	}
	add := addLine
	top := newPlot()
	top.Title.Text = fmt.Sprintf("Flip %d of %d: %s at bar %d, %s UTC", k, n, label, f.Bar, time.Unix(0, f.Time).UTC().Format("2006-01-02 15:04"))
	top.Y.Label.Text = sc.Axis
	entries := 0
	for _, l := range sc.Lines {
		style := solid(l.colour, 1.4)
		if l.Precision == engine.FP32 {
			style = dashed(l.colour)
			style.Width = vg.Points(1)
		}
		// One line per run of defined bars (no segment across an
		// undefined value), the legend naming the first.
		for ri, run := range l.runs() {
			if ri == 0 {
				add(top, l.Name, run, style)
				entries++
			} else if ln, err := plotter.NewLine(run); err == nil {
				ln.LineStyle = style
				top.Add(ln)
			}
		}
	}
	for j, lv := range sc.Levels {
		style := solid(levelColours[j/2%len(levelColours)], 0.9)
		style.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
		add(top, levelText(lv), plotter.XYs{{X: float64(lo), Y: lv.Value}, {X: float64(hi), Y: lv.Value}}, style)
		entries++
	}
	top.Add(vline(float64(f.Bar), sc.YMin, sc.YMax, solid(colMark, 0.6)))
	top.X.Min, top.X.Max = float64(lo), float64(hi)
	top.Y.Min, top.Y.Max = sc.YMin, sc.YMax

	bottom := positionsPane(top, st.Dataset.Bars.Time, pos64, pos32, f.Bar, lo, hi)
	kind := "borderline (explained by rounding)"
	if !f.Borderline {
		kind = "NOT borderline"
	}
	p := s.Report.Parity
	caption := fmt.Sprintf("Session %d, %s %s recomputed on its dataset by the family's arithmetic (%s fp32): %s, bars %d..%d around the flip rooted at bar %d, fp64 solid, fp32 dashed. Margin %.3g of the close against the tolerance %g: %s; fp64 holds %+d, fp32 %+d.",
		s.ID, sg.Family, label, st.WMA, sc.drawn(), lo, hi, f.Bar, f.Margin, p.Tolerance, kind, f.Pos64, f.Pos32)
	if u := sc.undefinedAt(f.Bar); len(u) > 0 {
		caption += fmt.Sprintf(" At bar %d fp32's %s is undefined (not drawn), fp64's is not.", f.Bar, strings.Join(u, ", "))
	}
	if f.Bars > 1 {
		caption += fmt.Sprintf(" The positions differ over %d bars from the root, moving %d trades and %+.3g pp of return.", f.Bars, f.Trades, f.DPnLpp)
	}
	fig := newFigure("crossover", top.Title.Text, caption, panel{top, 0.72}, panel{bottom, 0.28})
	// A legend of more lines than hull's five: a taller figure, so the
	// data keeps its height below the legend.
	fig.Height = 12*vg.Centimeter + vg.Length(max(entries-5, 0))*0.45*vg.Centimeter
	fig.panels[0].share = 0.72 * float64(12*vg.Centimeter) / float64(fig.Height)
	fig.panels[1].share = 1 - fig.panels[0].share
	legendAbove(fig, 0)
	legendAbove(fig, 1)
	return fig, nil
}

// levelColours colour a Signal's levels by pairs (+entry and -entry,
// +exit and -exit; lower and upper).
var levelColours = []colorT{colBad, colGood}

// signalChart is the plotted data of a strategy flip's signal chart:
// strategy.SignalSeries of its combo in fp64 (direct) and fp32 (the
// study's formulation) over bars Lo..Hi.
type signalChart struct {
	Scale  string // the Signal's: "price", "z" or "rsi"
	Axis   string // the y axis' label: "price", "z-score" or "RSI"
	Lo, Hi int
	// Lines are each Signal line in fp64 then in fp32 ("z 20 fp64",
	// "z 20 fp32"), their finite values at x = bar.
	Lines []signalLine
	// Levels are the Signal's constant levels (fp64's: a level is the
	// combo's parameter, the same in both precisions).
	Levels     []strategy.Level
	YMin, YMax float64 // the range of the lines (both precisions) and the levels
}

// signalLine is one drawn line of a signal chart.
type signalLine struct {
	Name      string // the Signal line's name and the precision
	Precision engine.Precision
	XY        plotter.XYs
	colour    colorT
}

// signalAxis labels a Signal's Scale.
var signalAxis = map[string]string{"price": "price", "z": "z-score", "rsi": "RSI"}

// signalColours colour a Signal's lines in order (the same colour in
// both precisions).
var signalColours = []colorT{colFP64, colFP32, colGood, colBad, color.RGBA{0x75, 0x70, 0xb3, 0xff}, colOther}

// signalChartOf is a combo's signal chart over bars lo..hi from its
// Signal in fp64 (direct) and fp32 (the study's formulation), as
// engine.InspectIndex recomputed them (strategyInspect).
func signalChartOf(s64p, s32p *engine.Signal, lo, hi int) (*signalChart, error) {
	if s64p == nil || s32p == nil {
		return nil, fmt.Errorf("no signal to chart (not a strategy combo)")
	}
	s64, s32 := *s64p, *s32p
	if s32.Scale != s64.Scale || len(s32.Lines) != len(s64.Lines) {
		return nil, fmt.Errorf("the fp32 signal (%s, %d lines) is not the fp64's (%s, %d lines)", s32.Scale, len(s32.Lines), s64.Scale, len(s64.Lines))
	}
	axis, ok := signalAxis[s64.Scale]
	if !ok {
		axis = s64.Scale
	}
	sc := &signalChart{Scale: s64.Scale, Axis: axis, Lo: lo, Hi: hi, Levels: s64.Levels}
	var ranged [][]float64
	for j, l := range s64.Lines {
		colour := signalColours[j%len(signalColours)]
		for _, x := range []struct {
			p engine.Precision
			l strategy.Line
		}{{engine.FP64, l}, {engine.FP32, s32.Lines[j]}} {
			xy := make(plotter.XYs, 0, hi-lo+1)
			for i := lo; i <= hi && i < len(x.l.Values); i++ {
				if v := x.l.Values[i]; !math.IsNaN(v) && !math.IsInf(v, 0) {
					xy = append(xy, plotter.XY{X: float64(i), Y: v})
				}
			}
			sc.Lines = append(sc.Lines, signalLine{Name: x.l.Name + " " + x.p.String(), Precision: x.p, XY: xy, colour: colour})
			if lo < len(x.l.Values) {
				ranged = append(ranged, x.l.Values[lo:min(hi+1, len(x.l.Values))])
			}
		}
	}
	levels := make([]float64, len(sc.Levels))
	for j, lv := range sc.Levels {
		levels[j] = lv.Value
	}
	sc.YMin, sc.YMax = rangeOf(append(ranged, levels)...)
	if sc.YMin == sc.YMax {
		sc.YMin, sc.YMax = sc.YMin-1, sc.YMax+1
	}
	return sc, nil
}

// levelText is a level's name and value, e.g. "-entry -2" ("-exit 0",
// not "-0").
func levelText(l strategy.Level) string {
	v := l.Value
	if v == 0 {
		v = 0 // -0
	}
	return l.Name + " " + strconv.FormatFloat(v, 'g', -1, 64)
}

// undefinedAt names the Signal lines fp64 defines at bar and fp32 does
// not (NaN: a prefix variance below 0, ...), for the caption.
func (sc *signalChart) undefinedAt(bar int) []string {
	var out []string
	for j := 0; j+1 < len(sc.Lines); j += 2 {
		_, ok64 := sc.Lines[j].at(bar)
		_, ok32 := sc.Lines[j+1].at(bar)
		if ok64 && !ok32 {
			out = append(out, strings.TrimSuffix(sc.Lines[j].Name, " "+engine.FP64.String()))
		}
	}
	return out
}

// runs are l's points split where a bar is undefined (not drawn).
func (l signalLine) runs() []plotter.XYs {
	var out []plotter.XYs
	start := 0
	for i := 1; i <= len(l.XY); i++ {
		if i == len(l.XY) || l.XY[i].X != l.XY[i-1].X+1 {
			out = append(out, l.XY[start:i])
			start = i
		}
	}
	return out
}

// at is l's drawn value at bar (ok false: undefined there, not drawn).
func (l signalLine) at(bar int) (float64, bool) {
	i, ok := slices.BinarySearchFunc(l.XY, float64(bar), func(p plotter.XY, x float64) int { return cmp.Compare(p.X, x) })
	if !ok {
		return 0, false
	}
	return l.XY[i].Y, true
}

// drawn says what a signal chart draws, for its caption.
func (sc *signalChart) drawn() string {
	var names []string
	for _, l := range sc.Lines {
		if l.Precision == engine.FP64 {
			names = append(names, strings.TrimSuffix(l.Name, " "+engine.FP64.String()))
		}
	}
	s := fmt.Sprintf("the %s its state machine compares (%s)", map[bool]string{true: "line", false: "lines"}[len(names) == 1], strings.Join(names, ", "))
	if len(sc.Levels) > 0 {
		var lv []string
		for _, l := range sc.Levels {
			lv = append(lv, levelText(l))
		}
		s += " against its levels (" + strings.Join(lv, ", ") + ")"
	}
	return s + ", y axis " + sc.Axis
}

// legendAbove raises the top of panel k of fig (its y range already the
// data's) so that its legend, drawn at the top of the panel, sits above
// the data: measured on fig's size, the legend's entries and the data
// area below the title, with a gap of 3 points.
func legendAbove(fig *Figure, k int) {
	p := fig.panels[k].p
	n := p.Legend.Rectangle(draw.Canvas{}).Size().Y
	span := p.Y.Max - p.Y.Min
	if n == 0 || !(span > 0) {
		return
	}
	total := 0.0
	for _, q := range fig.panels {
		total += q.share
	}
	h := vg.Length(fig.panels[k].share / total * float64(fig.Height))
	d := p.DataCanvas(draw.New(vgsvg.New(fig.Width, h)))
	room := d.Max.Y - d.Min.Y
	legend := n + p.Legend.TextStyle.FontExtents().Descent + vg.Points(3)
	if legend >= 0.8*room { // too many entries to keep a readable data area: the most it can give
		legend = 0.8 * room
	}
	p.Y.Max = p.Y.Min + span*float64(room)/float64(room-legend)
}
