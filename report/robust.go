package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sweepbench/engine/bench"
	"sweepbench/engine/robust"
)

// robustness is the saved robustness summary, or why fig cannot be drawn.
func (s *Source) robustness(fig string) (*robust.Summary, error) {
	if s.RobustErr != nil {
		return nil, &UnavailableError{Figure: fig, ID: s.ID, Why: "has a robustness summary that does not read: " + s.RobustErr.Error()}
	}
	if s.Robust == nil {
		return nil, s.unavailable(fig, "has no robustness section: its study ran without --blocks (run it again with --blocks 16, and --wf rolling:8 for the walk-forward)")
	}
	return s.Robust, nil
}

// logitFigure is the CSCV splits' logit histogram with 0 marked.
func (s *Source) logitFigure() (*Figure, error) {
	sm, err := s.robustness("pbo-logits")
	if err != nil {
		return nil, err
	}
	h := sm.LogitHistogram
	if sm.PBO == nil || h == nil || len(h.Edges) != len(h.Counts)+1 || len(h.Counts) == 0 {
		why := sm.PBONote
		if why == "" {
			why = "it was not computed"
		}
		return nil, s.unavailable("pbo-logits", "has no PBO: %s", why)
	}
	bins := make([]plotter.HistogramBin, len(h.Counts))
	top := 0.0
	for i, c := range h.Counts {
		bins[i] = plotter.HistogramBin{Min: h.Edges[i], Max: h.Edges[i+1], Weight: float64(c)}
		top = math.Max(top, float64(c))
	}
	pl := newPlot()
	pl.Title.Text = fmt.Sprintf("PBO %.3f: logits of %d splits", *sm.PBO, sm.Splits)
	pl.X.Label.Text = "logit ln(w/(1-w)) of the in-sample best's out-of-sample rank"
	pl.Y.Label.Text = "splits"
	hist := &plotter.Histogram{Bins: bins, FillColor: colFP64, LineStyle: solid(missing, 0.5)}
	pl.Add(hist)
	zero := vline(0, 0, top, dashed(colBad))
	pl.Add(zero)
	pl.Legend.Add("splits", hist)
	pl.Legend.Add("0: the median out of sample", zero)
	pl.X.Min, pl.X.Max = h.Edges[0], h.Edges[len(h.Edges)-1]
	roomForLegend(pl, 2, false)
	caption := fmt.Sprintf("Session %d, %d blocks, objective %s: for each of the %d CSCV splits, where the combo best in sample ranks out of sample (logit > 0: in the better half). PBO, the share at or below 0, is %.3f: %s.",
		s.ID, sm.Blocks, sm.Objective, sm.Splits, *sm.PBO, sm.PBOVerdict)
	return newFigure("pbo-logits", pl.Title.Text, caption, panel{pl, 1}), nil
}

// isOOSFigure is the in-sample vs out-of-sample scatter with the
// degradation line.
func (s *Source) isOOSFigure() (*Figure, error) {
	sm, err := s.robustness("is-oos")
	if err != nil {
		return nil, err
	}
	if sm.PBO == nil {
		why := sm.PBONote
		if why == "" {
			why = "it was not computed"
		}
		return nil, s.unavailable("is-oos", "has no CSCV splits: %s", why)
	}
	if sm.ISOOS == nil || len(sm.ISOOS.IS) == 0 || sm.Intercept == nil || sm.Slope == nil {
		return nil, s.unavailable("is-oos", "keeps no in-sample/out-of-sample points: its robustness was saved by an older sweepbench (run the study again with --blocks %d)", sm.Blocks)
	}
	sc := sm.ISOOS
	xy := make(plotter.XYs, len(sc.IS))
	for i := range sc.IS {
		xy[i] = plotter.XY{X: sc.IS[i], Y: sc.OOS[i]}
	}
	pl := newPlot()
	pl.Title.Text = fmt.Sprintf("In sample vs out of sample (%s)", sm.Metric)
	pl.X.Label.Text = fmt.Sprintf("%s in sample (the chosen combo)", sm.Metric)
	pl.Y.Label.Text = fmt.Sprintf("%s out of sample", sm.Metric)
	pts, _ := plotter.NewScatter(xy)
	pts.GlyphStyle = draw.GlyphStyle{Color: colFP64, Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}
	pl.Add(pts)
	x0, x1 := rangeOf(sc.IS)
	line, _ := plotter.NewLine(plotter.XYs{{X: x0, Y: *sm.Intercept + *sm.Slope*x0}, {X: x1, Y: *sm.Intercept + *sm.Slope*x1}})
	line.LineStyle = solid(colBad, 1.4)
	pl.Add(line)
	label := "splits"
	if sc.Every > 1 {
		label = fmt.Sprintf("every %d-th split", sc.Every)
	}
	pl.Legend.Add(label, pts)
	r2 := math.NaN()
	if sm.R2 != nil {
		r2 = *sm.R2
	}
	pl.Legend.Add(fmt.Sprintf("OOS = %.3g %+.3g IS (R^2 %.3f)", *sm.Intercept, *sm.Slope, r2), line)
	roomForLegend(pl, 2, false)
	caption := fmt.Sprintf("Session %d: per CSCV split, the objective of the combo chosen in sample (x) and its value out of sample (y), with the least-squares degradation line over all %d splits; a negative slope means the better in sample, the worse out of sample.",
		s.ID, sm.Splits)
	if sm.ProbOOSLoss != nil {
		caption += fmt.Sprintf(" The chosen combo lost money out of sample in %.0f%% of the splits.", 100**sm.ProbOOSLoss)
	}
	return newFigure("is-oos", pl.Title.Text, caption, panel{pl, 1}), nil
}

// wfEquityFigure is the walk-forward's stitched out-of-sample equity.
func (s *Source) wfEquityFigure() (*Figure, error) {
	sm, err := s.robustness("wf-equity")
	if err != nil {
		return nil, err
	}
	if sm.WF == nil {
		return nil, s.unavailable("wf-equity", "has no walk-forward: its study ran without --wf (run it again with --blocks %d --wf rolling:8)", sm.Blocks)
	}
	if len(sm.WF.Equity) == 0 {
		why := sm.WF.EquityNote
		if why == "" {
			why = "it was not computed"
		}
		return nil, s.unavailable("wf-equity", "has no stitched equity: %s", why)
	}
	xy := make(plotter.XYs, len(sm.WF.Equity))
	for i, p := range sm.WF.Equity {
		xy[i] = plotter.XY{X: float64(p.Time.Unix()), Y: p.Equity}
	}
	pl := newPlot()
	pl.Title.Text = fmt.Sprintf("Walk-forward %s: stitched out-of-sample equity", sm.WF.Spec)
	pl.X.Label.Text = "time (UTC)"
	pl.Y.Label.Text = "equity (growth of 1)"
	timeAxis(pl)
	l, _ := plotter.NewLine(xy)
	l.LineStyle = solid(colFP64, 1.3)
	pl.Add(l)
	pl.Legend.Add(fmt.Sprintf("stitched, %d folds: %+.2f%%", len(sm.WF.Folds), 100*sm.WF.TotalReturn), l)
	pl.Add(hline(1, xy[0].X, xy[len(xy)-1].X, dashed(colOther)))
	pl.X.Min, pl.X.Max = xy[0].X, xy[len(xy)-1].X
	roomForLegend(pl, 1, false)
	caption := fmt.Sprintf("Session %d: each fold's combo, chosen in sample by %s, over its out-of-sample block, the blocks joined end to end (%d folds; return %+.2f%%, Sharpe %.2f).",
		s.ID, sm.Objective, len(sm.WF.Folds), 100*sm.WF.TotalReturn, sm.WF.Sharpe)
	return newFigure("wf-equity", pl.Title.Text, caption, panel{pl, 1}), nil
}

// BenchFigure is the bench ladder: each rung's combos per second on a log
// axis, the rungs skipped or failed left out (their rows name why). rows
// are bench.RunLadder's, in ladder order. Errors: no rung ran.
func BenchFigure(rows []bench.RungResult) (*Figure, error) {
	var names []string
	var vals plotter.Values
	for _, r := range rows {
		if r.Skipped != "" || r.Err != "" || !(r.CombosPerS > 0) {
			continue
		}
		label := fmt.Sprintf("%s %s", r.ID, r.Precision)
		if r.Extrapolated {
			label += "*"
		}
		names = append(names, label)
		vals = append(vals, r.CombosPerS)
	}
	if len(vals) == 0 {
		return nil, &UnavailableError{Figure: "bench", Why: "has no rung that ran"}
	}
	pl := newPlot()
	pl.Title.Text = "Bench ladder: combos per second"
	pl.Y.Label.Text = "combos/s (log scale)"
	lo, hi := rangeOf(vals)
	pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	pl.Y.Min, pl.Y.Max = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	// Bars from the axis' bottom (a log axis has no 0).
	bars := make(rects, len(vals))
	for i, v := range vals {
		bars[i] = rect{float64(i) - 0.35, float64(i) + 0.35, pl.Y.Min, v, colFP64}
	}
	pl.Add(bars)
	pl.NominalX(names...)
	pl.X.Min, pl.X.Max = -0.6, float64(len(vals))-0.4
	return newFigure("bench", pl.Title.Text, "Each method of the ladder computing the same sweep (sweepbench bench); * timed on a sample and extrapolated.", panel{pl, 1}), nil
}
