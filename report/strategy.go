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
	"sweepbench/strategy"
)

// The charts of one combo for a strategy family (engine.Grid.Strategy):
// the family's arithmetic (package strategy) on the session's dataset
// loaded again, as the engine's parity report computed it.

// strategyCrossover is crossoverFigure for a strategy grid: flip k of n
// (f) recomputed with strategy.Evaluate in fp64 (direct) and fp32 (the
// session's formulation), the close and, for a crossover family, its two
// legs' moving averages in both precisions around the flip's root bar,
// the positions (after the mode) below.
func (s *Source) strategyCrossover(ctx context.Context, r Request, f engine.Flip, k, n int) (*Figure, error) {
	st, err := s.Study(ctx)
	if err != nil {
		return nil, &UnavailableError{Figure: "crossover", ID: s.ID, Why: "cannot be recomputed: " + err.Error()}
	}
	sg, ok := strategy.GridOf(st.Grid.Strategy)
	if !ok || st.Grid.Len() != s.Report.Grid.Len() || f.Index < 0 || f.Index >= sg.Len() {
		return nil, s.unavailable("crossover", "cannot be recomputed: its grid %s is not the study's built again", s.Report.Grid.Text())
	}
	c := sg.At(f.Index)
	label := f.Label()
	bars := &st.Dataset.Bars
	nb := bars.Len()
	in64 := strategy.NewInputs[float64](bars, st.Params.Source)
	in32 := strategy.NewInputs[float32](bars, st.Params.Source)
	pos64, pos32 := make([]strategy.State, nb), make([]strategy.State, nb)
	if _, err := strategy.Evaluate(sg, c, in64, engine.Direct, pos64, nil); err != nil {
		return nil, fmt.Errorf("figure crossover: session %d, %s in fp64: %w", s.ID, label, err)
	}
	if _, err := strategy.Evaluate(sg, c, in32, st.WMA, pos32, nil); err != nil {
		return nil, fmt.Errorf("figure crossover: session %d, %s in fp32: %w", s.ID, label, err)
	}
	if st.Params.Mode == engine.LongOnly {
		for i := range pos64 {
			pos64[i], pos32[i] = max(pos64[i], 0), max(pos32[i], 0)
		}
	}
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
		colours := []colorT{colFP64, colFP32}
		names := []string{"fast", "slow"}
		for a := 0; a < 2 && a < len(c.Values); a++ {
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
	pos := func(v []strategy.State) plotter.XYs {
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
	fig := newFigure("crossover", top.Title.Text, caption, panel{top, 0.72}, panel{bottom, 0.28})
	fig.Height = 12 * vg.Centimeter
	return fig, nil
}
