package report

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sweepbench/engine"
)

// DefaultWindow is the crossover chart's half-width in bars.
const DefaultWindow = 40

// MaxTradeMarks is the most trades the equity chart marks (the largest by
// |return| when a combo has more).
const MaxTradeMarks = 100

// MaxCurvePoints is the most points a curve of the equity chart draws: a
// longer series is reduced to the first, least, largest and last value
// of each of MaxCurvePoints/4 runs of bars (its extremes stay).
const MaxCurvePoints = 2000

// inspect recomputes combo c of the session in each of its precisions
// (engine.InspectCombo on the dataset loaded again); a precision the
// session did not run is nil.
func (s *Source) inspect(ctx context.Context, fig string, c engine.Combo) (st *engine.Study, d64, d32 *engine.ComboDetail, err error) {
	if !inGrid(s.Report.Grid, c) {
		return nil, nil, nil, s.unavailable(fig, "has no combo hma %d, hma3 %d: its grid is hma %s x hma3 %s", c.HMA, c.HMA3, s.Report.Grid.HMA, s.Report.Grid.HMA3)
	}
	st, err = s.Study(ctx)
	if err != nil {
		return nil, nil, nil, &UnavailableError{Figure: fig, ID: s.ID, Why: "cannot be recomputed: " + err.Error()}
	}
	for _, p := range st.Precisions {
		d, err := engine.InspectCombo(ctx, &st.Dataset.Bars, c, st.Params, p, st.WMA)
		if err != nil {
			return nil, nil, nil, err
		}
		if p == engine.FP64 {
			d64 = d
		} else {
			d32 = d
		}
	}
	return st, d64, d32, nil
}

func inGrid(g engine.Grid, c engine.Combo) bool {
	in := func(r engine.Range, v int) bool {
		return r.Step > 0 && v >= r.Start && v <= r.Last() && (v-r.Start)%r.Step == 0
	}
	return in(g.HMA, c.HMA) && in(g.HMA3, c.HMA3)
}

// crossoverFigure is one listed flip: close, h and h3 in both precisions
// around its bar, and the positions below.
func (s *Source) crossoverFigure(ctx context.Context, r Request) (*Figure, error) {
	p := s.Report.Parity
	if p == nil {
		return nil, s.unavailable("crossover", "has no parity report, so no flips: it needs both an fp64 and an fp32 run that finished (its precisions: %s)", s.precisions())
	}
	flips := p.Flips
	strat := s.Report.Grid.Strategy != nil
	if r.Combo != nil && !strat {
		flips = nil
		for _, f := range p.Flips {
			if f.Combo == *r.Combo {
				flips = append(flips, f)
			}
		}
	}
	if r.Index != nil && strat {
		flips = nil
		for _, f := range p.Flips {
			if f.Index == *r.Index {
				flips = append(flips, f)
			}
		}
	}
	k := max(r.Flip, 1)
	switch {
	case len(flips) == 0 && r.Index != nil && strat:
		return nil, s.unavailable("crossover", "lists no flip of %s (the parity report lists %d of %d flips, worst first)", s.Report.Grid.Label(*r.Index), len(p.Flips), p.FlipCount)
	case len(flips) == 0 && r.Combo != nil && !strat:
		return nil, s.unavailable("crossover", "lists no flip of hma %d, hma3 %d (the parity report lists %d of %d flips, worst first)", r.Combo.HMA, r.Combo.HMA3, len(p.Flips), p.FlipCount)
	case len(flips) == 0:
		return nil, s.unavailable("crossover", "has no flips: fp32 and fp64 hold the same position on every bar of every combo")
	case k > len(flips):
		return nil, s.unavailable("crossover", "lists %d flips: --flip %d is beyond them", len(flips), k)
	}
	f := flips[k-1]
	if strat {
		return s.strategyCrossover(ctx, r, f, k, len(flips))
	}
	st, d64, d32, err := s.inspect(ctx, "crossover", f.Combo)
	if err != nil {
		return nil, err
	}
	if d64 == nil || d32 == nil {
		return nil, s.unavailable("crossover", "needs both precisions")
	}
	w := r.Window
	if w <= 0 {
		w = DefaultWindow
	}
	n := len(d64.Close)
	lo, hi := max(f.Bar-w, 0), min(f.Bar+w, n-1)
	series := func(v []float64) plotter.XYs {
		xy := make(plotter.XYs, 0, hi-lo+1)
		for i := lo; i <= hi; i++ {
			if !math.IsNaN(v[i]) {
				xy = append(xy, plotter.XY{X: float64(i), Y: v[i]})
			}
		}
		return xy
	}
	top := newPlot()
	top.Title.Text = fmt.Sprintf("Flip %d of %d: hma %d x hma3 %d at bar %d, %s UTC", k, len(flips), f.HMA, f.HMA3, f.Bar, time.Unix(0, f.Time).UTC().Format("2006-01-02 15:04"))
	top.Y.Label.Text = "price"
	add := addLine
	add(top, "close", series(d64.Close), solid(colOther, 0.8))
	add(top, "h fp64", series(d64.H), solid(colFP64, 1.4))
	add(top, "h3 fp64", series(d64.H3), solid(colFP32, 1.4))
	add(top, "h fp32", series(d32.H), dashed(colFP64))
	add(top, "h3 fp32", series(d32.H3), dashed(colFP32))
	ymin, ymax := rangeOf(d64.Close[lo:hi+1], d64.H[lo:hi+1], d64.H3[lo:hi+1])
	top.Add(vline(float64(f.Bar), ymin, ymax, solid(colMark, 0.6)))
	top.X.Min, top.X.Max = float64(lo), float64(hi)

	bottom := positionsPane(top, st.Dataset.Bars.Time, d64.Pos, d32.Pos, f.Bar, lo, hi)
	kind := "borderline (explained by rounding)"
	if !f.Borderline {
		kind = "NOT borderline"
	}
	caption := fmt.Sprintf("Session %d, hma %d x hma3 %d recomputed on its dataset (%s fp32): bars %d..%d around the flip at bar %d, fp64 solid, fp32 dashed. Margin |h3-h|/close %.3g against the tolerance %g: %s; fp64 holds %+d, fp32 %+d.",
		s.ID, f.HMA, f.HMA3, st.WMA, lo, hi, f.Bar, f.Margin, p.Tolerance, kind, f.Pos64, f.Pos32)
	fig := newFigure("crossover", top.Title.Text, caption, panel{top, 0.72}, panel{bottom, 0.28})
	fig.Height = 12 * vg.Centimeter
	legendAbove(fig, 0)
	legendAbove(fig, 1)
	return fig, nil
}

// rangeOf is the least and largest finite value of vs.
func rangeOf(vs ...[]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		for _, x := range v {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	if lo > hi {
		return 0, 1
	}
	return lo, hi
}

// reduce is xs, ys with at most MaxCurvePoints points: every point when
// they fit, else per run of bars its first, least, largest and last point
// in bar order (a line through them keeps the curve's extremes).
func reduce(x, y []float64) plotter.XYs {
	n := len(y)
	if n <= MaxCurvePoints {
		xy := make(plotter.XYs, 0, n)
		for i := range y {
			if !math.IsNaN(y[i]) {
				xy = append(xy, plotter.XY{X: x[i], Y: y[i]})
			}
		}
		return xy
	}
	buckets := MaxCurvePoints / 4
	xy := make(plotter.XYs, 0, MaxCurvePoints)
	for b := 0; b < buckets; b++ {
		i0, i1 := b*n/buckets, (b+1)*n/buckets
		idx := []int{i0, i1 - 1}
		lo, hi := -1, -1
		for i := i0; i < i1; i++ {
			if math.IsNaN(y[i]) {
				continue
			}
			if lo < 0 || y[i] < y[lo] {
				lo = i
			}
			if hi < 0 || y[i] > y[hi] {
				hi = i
			}
		}
		if lo >= 0 {
			idx = append(idx, lo, hi)
		}
		slices.Sort(idx)
		idx = slices.Compact(idx)
		for _, i := range idx {
			if !math.IsNaN(y[i]) {
				xy = append(xy, plotter.XY{X: x[i], Y: y[i]})
			}
		}
	}
	return xy
}

// equityFigure is a combo's equity in both precisions with buy-and-hold
// and trade markers, and its drawdown below.
func (s *Source) equityFigure(ctx context.Context, r Request) (*Figure, error) {
	var (
		c        engine.Combo
		st       *engine.Study
		d64, d32 *engine.ComboDetail
		err      error
		what     string // the combo in words, for a strategy grid's
	)
	if g := s.Report.Grid; g.Strategy != nil {
		i := -1
		if r.Index != nil {
			i = *r.Index
		} else if sel, ok := s.Selected(); ok {
			i = sel.Index
		} else {
			return nil, s.unavailable("equity", "has no selected combo (none meets the objective's constraints): name one by its index in the grid")
		}
		if st, _, d64, d32, err = s.strategyInspect(ctx, "equity", i); err != nil {
			return nil, err
		}
		what = g.Label(i)
	} else {
		if r.Combo != nil {
			c = *r.Combo
		} else if sel, ok := s.Selected(); ok {
			c = sel.Combo
		} else {
			return nil, s.unavailable("equity", "has no selected combo (none meets the objective's constraints): name one with --combo HMA:HMA3")
		}
		if st, d64, d32, err = s.inspect(ctx, "equity", c); err != nil {
			return nil, err
		}
	}
	ref := d64
	if ref == nil {
		ref = d32
	}
	if ref == nil {
		return nil, s.unavailable("equity", "has no run to recompute")
	}
	bars := &st.Dataset.Bars
	n := bars.Len()
	t := make([]float64, n)
	for i, v := range bars.Time {
		t[i] = float64(v) / 1e9
	}
	top := newPlot()
	top.Title.Text = fmt.Sprintf("Equity of hma %d x hma3 %d", c.HMA, c.HMA3)
	if what != "" {
		top.Title.Text = "Equity of " + what
	}
	top.Y.Label.Text = "equity (growth of 1)"
	timeAxis(top)
	add := addLine
	bh := make([]float64, n)
	for i, v := range bars.Close {
		bh[i] = v / bars.Close[0]
	}
	add(top, "buy and hold (close / first close)", reduce(t, bh), solid(colOther, 0.8))
	if d64 != nil {
		add(top, fmt.Sprintf("fp64 (return %+.2f%%)", 100*d64.TotalReturn), reduce(t, d64.Equity), solid(colFP64, 1.2))
	}
	if d32 != nil {
		add(top, fmt.Sprintf("fp32 (return %+.2f%%)", 100*d32.TotalReturn), reduce(t, d32.Equity), dashed(colFP32))
	}
	// Trade markers on the reference curve: entries, long up, short down.
	trades := slices.Clone(ref.Trades)
	marked := len(trades)
	if marked > MaxTradeMarks {
		slices.SortFunc(trades, func(a, b engine.Trade) int { return cmp.Compare(math.Abs(b.Return), math.Abs(a.Return)) })
		trades, marked = trades[:MaxTradeMarks], MaxTradeMarks
	}
	var longs, shorts plotter.XYs
	for _, tr := range trades {
		pt := plotter.XY{X: t[tr.Entry], Y: ref.Equity[tr.Entry]}
		if tr.Side > 0 {
			longs = append(longs, pt)
		} else {
			shorts = append(shorts, pt)
		}
	}
	for i, xy := range []plotter.XYs{longs, shorts} {
		if len(xy) == 0 {
			continue
		}
		sc, _ := plotter.NewScatter(xy)
		sc.GlyphStyle = draw.GlyphStyle{Color: []colorT{colGood, colBad}[i], Radius: vg.Points(2.6), Shape: []draw.GlyphDrawer{draw.TriangleGlyph{}, draw.CrossGlyph{}}[i]}
		top.Add(sc)
		top.Legend.Add([]string{"long entry", "short entry"}[i], sc)
	}
	bottom := newPlot()
	bottom.Y.Label.Text = "drawdown (%)"
	bottom.X.Label.Text = "time (UTC)"
	timeAxis(bottom)
	bottom.Y.Tick.Marker = upTo{0}
	dd := func(e []float64) []float64 {
		out := make([]float64, len(e))
		peak := math.Inf(-1)
		for i, v := range e {
			peak = math.Max(peak, v)
			out[i] = -100 * (1 - v/peak)
		}
		return out
	}
	if d64 != nil {
		add(bottom, fmt.Sprintf("fp64 (max %.2f%%)", 100*d64.MaxDrawdown), reduce(t, dd(d64.Equity)), solid(colFP64, 1))
	}
	if d32 != nil {
		add(bottom, fmt.Sprintf("fp32 (max %.2f%%)", 100*d32.MaxDrawdown), reduce(t, dd(d32.Equity)), dashed(colFP32))
	}
	for _, pl := range []*plot.Plot{top, bottom} {
		pl.X.Min, pl.X.Max = t[0], t[n-1]
	}
	caption := fmt.Sprintf("Session %d, hma %d x hma3 %d recomputed on its dataset: equity (growth of 1, fees included) in fp64 (solid) and fp32 (dashed) beside buying and holding; its %d trades' entries marked",
		s.ID, c.HMA, c.HMA3, len(ref.Trades))
	if what != "" {
		caption = fmt.Sprintf("Session %d, %s %s recomputed on its dataset by the family's arithmetic: equity (growth of 1, fees included) in fp64 (solid) and fp32 (dashed) beside buying and holding; its %d trades' entries marked",
			s.ID, s.Report.Grid.Family(), what, len(ref.Trades))
	}
	if marked < len(ref.Trades) {
		caption += fmt.Sprintf(" (the %d largest by |return|)", marked)
	}
	caption += "; the drawdown from the running peak below."
	fig := newFigure("equity", top.Title.Text, caption, panel{top, 0.68}, panel{bottom, 0.32})
	fig.Height = 12 * vg.Centimeter
	// The legends above the data (legendAbove): the curves, the markers
	// and the drawdown's zero line stay uncovered.
	legendAbove(fig, 0)
	legendAbove(fig, 1)
	return fig, nil
}

// timeAxis makes p's x axis Unix seconds shown as UTC dates, ticked on
// round calendar steps (calendarTicks).
func timeAxis(p *plot.Plot) {
	p.X.Tick.Marker = calendarTicks{}
}

// addLine draws xy on pl as a line of style st with label in its legend;
// nothing for no points or points a line cannot take (plotter.NewLine's
// error: a NaN or an infinity).
func addLine(pl *plot.Plot, label string, xy plotter.XYs, st draw.LineStyle) {
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

// positionsPane is a flip chart's lower pane: both precisions' positions
// (pos[i] held over bar i+1; fp64 solid, fp32 dashed) over bars lo..hi
// with the flip bar marked, its x axis and top's ticked at the bars that
// open a round time (times: each bar's, Unix ns). Hull's and the
// strategies' crossover figures share it.
func positionsPane(top *plot.Plot, times []int64, pos64, pos32 []int8, bar, lo, hi int) *plot.Plot {
	bottom := newPlot()
	bottom.Y.Label.Text = "position"
	bottom.X.Label.Text = "time (UTC)"
	ticks := barTimeTicks{times} // bars on the x axis, ticked at their round times
	top.X.Tick.Marker, bottom.X.Tick.Marker = ticks, ticks
	pos := func(v []int8) plotter.XYs {
		xy := make(plotter.XYs, 0, 2*(hi-lo+1))
		for i := lo; i <= hi; i++ {
			// pos[i] is decided at the close of bar i, held over bar i+1.
			xy = append(xy, plotter.XY{X: float64(i), Y: float64(v[i])}, plotter.XY{X: float64(i + 1), Y: float64(v[i])})
		}
		return xy
	}
	addLine(bottom, "fp64", pos(pos64), solid(colFP64, 1.6))
	addLine(bottom, "fp32", pos(pos32), dashed(colFP32))
	bottom.Add(vline(float64(bar), -1.2, 1.2, solid(colMark, 0.6)))
	bottom.X.Min, bottom.X.Max = float64(lo), float64(hi)
	bottom.Y.Min, bottom.Y.Max = -1.2, 1.2 // legendAbove makes room for the legend above long
	bottom.Y.Tick.Marker = plot.ConstantTicks{{Value: -1, Label: "short"}, {Value: 0, Label: "flat"}, {Value: 1, Label: "long"}}
	return bottom
}
