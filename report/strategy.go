package report

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
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
	c := sg.At(i)
	bars := &st.Dataset.Bars
	for _, p := range st.Precisions {
		var d *engine.ComboDetail
		if p == engine.FP64 {
			d, err = traceStrategy[float64](sg, c, bars, st.Params, engine.Direct)
		} else {
			d, err = traceStrategy[float32](sg, c, bars, st.Params, st.WMA)
		}
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

// traceStrategy is combo c of sg over bars in precision F and formulation
// f: its states, then the backtest with its trace.
func traceStrategy[F engine.Float](sg strategy.Grid, c strategy.Combo, bars *engine.Bars, p engine.Params, f engine.Formulation) (*engine.ComboDetail, error) {
	in := strategy.NewInputs[F](bars, p.Source)
	pos := make([]strategy.State, bars.Len())
	first, err := strategy.Evaluate(sg, c, in, f, pos, nil)
	if err != nil {
		return nil, err
	}
	m, tr := reference.BacktestPositionsTrace(pos, kernels.BarReturns[F](bars), first, p)
	return &engine.ComboDetail{WMA: f, Close: bars.Close, Metrics: m, Trace: tr}, nil
}

// strategyCrossover is crossoverFigure for a strategy grid: flip k of n
// (f) recomputed (strategyInspect), the close and, for a crossover
// family, its two legs' moving averages in both precisions around the
// flip's root bar, the positions (after the mode) below.
func (s *Source) strategyCrossover(ctx context.Context, r Request, f engine.Flip, k, n int) (*Figure, error) {
	st, sg, d64, d32, err := s.strategyInspect(ctx, "crossover", f.Index)
	if err != nil {
		return nil, err
	}
	if d64 == nil || d32 == nil {
		return nil, s.unavailable("crossover", "needs both precisions")
	}
	c := sg.At(f.Index)
	label := s.Report.Grid.Label(f.Index) // the grid names it, whether or not the saved flip kept its Name
	bars := &st.Dataset.Bars
	nb := bars.Len()
	pos64, pos32 := d64.Pos, d32.Pos
	w := r.Window
	if w <= 0 {
		w = DefaultWindow
	}
	lo, hi := max(f.Bar-w, 0), min(f.Bar+w, nb-1)
	series := func(v []float64) plotter.XYs {
		xy := make(plotter.XYs, 0, hi-lo+1)
		for i := lo; i <= hi; i++ {
			if !math.IsNaN(v[i]) {
				xy = append(xy, plotter.XY{X: float64(i), Y: v[i]})
			}
		}
		return xy
	}
	add := func(pl *plot.Plot, label string, xy plotter.XYs, st draw.LineStyle) {
		if len(xy) == 0 {
			return
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return
		}
		l.LineStyle = st
		pl.Add(l)
		pl.Legend.Add(label, l)
	}
	top := newPlot()
	top.Title.Text = fmt.Sprintf("Flip %d of %d: %s at bar %d, %s UTC", k, n, label, f.Bar, time.Unix(0, f.Time).UTC().Format("2006-01-02 15:04"))
	top.Y.Label.Text = "price"
	add(top, "close", series(bars.Close), solid(colOther, 0.8))
	ranged := [][]float64{bars.Close[lo : hi+1]}
	legs, drawn := 1, "the close"
	if sg.Family == "cross" {
		// The two legs' moving averages of the source, as the family reads them.
		in64 := strategy.NewInputs[float64](bars, st.Params.Source)
		in32 := strategy.NewInputs[float32](bars, st.Params.Source)
		colours := []colorT{colFP64, colFP32}
		names := []string{"fast", "slow"}
		for a := 0; a < 2 && a < len(c.Values); a++ {
			if c.Kinds[a] == "price" {
				continue // the source itself
			}
			L := int(c.Values[a].Int())
			m64, m32 := make([]float64, nb), make([]float32, nb)
			if err := strategy.MA(c.Kinds[a], in64.Src, L, 0, engine.Direct, m64); err != nil {
				return nil, fmt.Errorf("figure crossover: session %d, %s: %w", s.ID, label, err)
			}
			if err := strategy.MA(c.Kinds[a], in32.Src, L, 0, st.WMA, m32); err != nil {
				return nil, fmt.Errorf("figure crossover: session %d, %s: %w", s.ID, label, err)
			}
			m32d := make([]float64, nb)
			for i, v := range m32 {
				m32d[i] = float64(v)
			}
			name := fmt.Sprintf("%s %s %d", names[a], c.Kinds[a], L)
			add(top, name+" fp64", series(m64), solid(colours[a], 1.4))
			add(top, name+" fp32", series(m32d), dashed(colours[a]))
			ranged = append(ranged, m64[lo:hi+1])
		}
		legs, drawn = 5, "the close and the two legs' moving averages"
	}
	ymin, ymax := rangeOf(ranged...)
	top.Add(vline(float64(f.Bar), ymin, ymax, solid(colMark, 0.6)))
	top.X.Min, top.X.Max = float64(lo), float64(hi)
	roomForLegend(top, legs, false)

	bottom := newPlot()
	bottom.X.Label.Text = "bar"
	bottom.Y.Label.Text = "position"
	pos := func(v []int8) plotter.XYs {
		xy := make(plotter.XYs, 0, 2*(hi-lo+1))
		for i := lo; i <= hi; i++ {
			// pos[i] is decided at the close of bar i, held over bar i+1.
			xy = append(xy, plotter.XY{X: float64(i), Y: float64(v[i])}, plotter.XY{X: float64(i + 1), Y: float64(v[i])})
		}
		return xy
	}
	add(bottom, "fp64", pos(pos64), solid(colFP64, 1.6))
	add(bottom, "fp32", pos(pos32), dashed(colFP32))
	bottom.Add(vline(float64(f.Bar), -1.2, 1.2, solid(colMark, 0.6)))
	bottom.X.Min, bottom.X.Max = float64(lo), float64(hi)
	bottom.Y.Min, bottom.Y.Max = -1.2, 1.6
	bottom.Y.Tick.Marker = plot.ConstantTicks{{Value: -1, Label: "short"}, {Value: 0, Label: "flat"}, {Value: 1, Label: "long"}}
	kind := "borderline (explained by rounding)"
	if !f.Borderline {
		kind = "NOT borderline"
	}
	p := s.Report.Parity
	caption := fmt.Sprintf("Session %d, %s %s recomputed on its dataset by the family's arithmetic (%s fp32): %s, bars %d..%d around the flip rooted at bar %d, fp64 solid, fp32 dashed. Margin %.3g of the close against the tolerance %g: %s; fp64 holds %+d, fp32 %+d.",
		s.ID, sg.Family, label, st.WMA, drawn, lo, hi, f.Bar, f.Margin, p.Tolerance, kind, f.Pos64, f.Pos32)
	if f.Bars > 1 {
		caption += fmt.Sprintf(" The positions differ over %d bars from the root, moving %d trades and %+.3g pp of return.", f.Bars, f.Trades, f.DPnLpp)
	}
	fig := newFigure("crossover", top.Title.Text, caption, panel{top, 0.72}, panel{bottom, 0.28})
	fig.Height = 12 * vg.Centimeter
	return fig, nil
}
