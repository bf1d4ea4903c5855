package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"

	"sweepbench/engine"
	"sweepbench/engine/text"
)

// Request names one figure of a session and its choices.
type Request struct {
	// Name is the figure (Figures lists them).
	Name string
	// Metric is the heatmap's metric (a SPEC name, engine.MetricNames);
	// "" = the study's objective's metric.
	Metric string
	// Of is the heatmap's run: "fp64", "fp32" or "diff" (fp32 - fp64);
	// "" = fp64 (the only run when there is one).
	Of string
	// Combo is the equity chart's combo and, when set, restricts the
	// crossover chart to that combo's listed flips; nil = the selected
	// combo (the best by the objective) and every listed flip.
	Combo *engine.Combo
	// Index is, for a strategy grid (whose combos have no lengths), the
	// combo Combo names for hull: its index in the grid (Grid.Label
	// names it); nil = as Combo nil.
	Index *int
	// Flip is the crossover chart's flip: its rank among the listed flips
	// (the parity report's worst first), 1-based; 0 = 1.
	Flip int
	// Window is the crossover chart's half-width in bars; 0 = 40.
	Window int
	// Axes are, for a strategy grid's heatmaps, the two parameters along
	// the rows and the columns (e.g. "length", "exit"), the others reduced
	// in each cell; nil = the grid's first two.
	Axes []string
}

// FigureInfo names one figure and what it shows.
type FigureInfo struct {
	Name, About string
}

// Figures lists every figure in the report's order.
var Figures = []FigureInfo{
	{"heatmap", "the grid heatmap of a metric (--metric) in fp64, fp32 or their difference (--of), quantile colours, selected and plateau-best combos marked, constrained-out cells grey"},
	{"parity-dn", "parity: the trade-count difference dn = trades32 - trades64 per combo"},
	{"parity-dpnl", "parity: the total-return difference dPnL (fp32 - fp64, percentage points) per combo"},
	{"flip-margins", "parity: the flips' margins |h3-h|/close (log scale) against the borderline tolerance"},
	{"indicator-error", "parity: the max relative error of each fp32 indicator series per length"},
	{"crossover", "a flip (--flip, --combo): close, h and h3 in fp64 and fp32 around the bar (a strategy: its signal, the lines its state machine compares and their levels), the positions below"},
	{"equity", "a combo's equity in fp64 and fp32 (--combo; default the selected one) with buy-and-hold, trade markers and the drawdown"},
	{"pbo-logits", "robustness: the histogram of the CSCV splits' logits (PBO: the share at or below 0)"},
	{"is-oos", "robustness: in-sample vs out-of-sample objective of the chosen combo per split, with the degradation line"},
	{"wf-equity", "robustness: the walk-forward's stitched out-of-sample equity"},
}

// NoBenchLadder says why no session has a bench figure: `sweepbench
// bench` saves nothing in the sessions database (BenchFigure draws its
// rows where a caller holds them).
const NoBenchLadder = "`sweepbench bench` saves none with a session, and its --json output cannot be plotted from a session"

// FigureNames is the names of Figures, comma-separated (for help and errors).
func FigureNames() string {
	names := make([]string, len(Figures))
	for i, f := range Figures {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// UnknownFigureError is a figure name that Figures does not list.
type UnknownFigureError struct{ Name string }

func (e *UnknownFigureError) Error() string {
	return fmt.Sprintf("unknown figure %q: want one of %s", e.Name, FigureNames())
}

// UnavailableError is a figure the session cannot have (robustness
// without --blocks, parity with one precision) or a choice it does not
// hold (a metric, a combo, a flip), with the reason and what to do.
type UnavailableError struct {
	Figure string
	ID     int64
	Why    string
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("figure %s: session %d %s", e.Figure, e.ID, e.Why)
}

func (s *Source) unavailable(fig, format string, args ...any) error {
	return &UnavailableError{Figure: fig, ID: s.ID, Why: fmt.Sprintf(format, args...)}
}

// comboExample is `--combo NAME=V,...` of strategy grid g's first combo
// (for a message).
func comboExample(g engine.Grid) string {
	var ex []string
	for _, ax := range g.Strategy.Axes() {
		if len(ax.Values) > 0 {
			ex = append(ex, ax.Name+"="+ax.Values[0])
		}
	}
	return strings.Join(ex, ",")
}

// Make draws the figure r names from s. Errors: *UnknownFigureError,
// *UnavailableError, the store's or the dataset's (charts of one combo).
func Make(ctx context.Context, s *Source, r Request) (*Figure, error) {
	if g := s.Report.Grid; g.Strategy != nil && r.Combo != nil && (r.Name == "crossover" || r.Name == "equity") {
		return nil, s.unavailable(r.Name, "is a %s study (%s): its combos have no hma and hma3 lengths, so --combo %d:%d names none: name one by its parameters (--combo %s) or leave --combo out (the equity chart draws the selected combo, the crossover chart the flip --flip K lists)",
			g.Family(), g.Text(), r.Combo.HMA, r.Combo.HMA3, comboExample(g))
	}
	switch r.Name {
	case "heatmap":
		return s.heatmapFigure(ctx, r)
	case "parity-dn", "parity-dpnl":
		return s.parityHeatFigure(ctx, r)
	case "flip-margins":
		return s.flipMarginFigure()
	case "indicator-error":
		return s.indicatorErrorFigure()
	case "crossover":
		return s.crossoverFigure(ctx, r)
	case "equity":
		return s.equityFigure(ctx, r)
	case "pbo-logits":
		return s.logitFigure()
	case "is-oos":
		return s.isOOSFigure()
	case "wf-equity":
		return s.wfEquityFigure()
	case "bench":
		return nil, s.unavailable("bench", "has no bench ladder: %s", NoBenchLadder)
	}
	return nil, &UnknownFigureError{r.Name}
}

// metricOf is r's metric, checked.
func (s *Source) metricOf(r Request) (string, error) {
	m := r.Metric
	if m == "" {
		m = s.Objective().Name()
	}
	if !slices.Contains(engine.MetricNames, m) {
		return "", &UnavailableError{Figure: "heatmap", ID: s.ID, Why: fmt.Sprintf("has no metric %q: want one of %s", m, strings.Join(engine.MetricNames, ", "))}
	}
	return m, nil
}

// heatmapFigure is the grid heatmap of r's metric in r.Of.
func (s *Source) heatmapFigure(ctx context.Context, r Request) (*Figure, error) {
	metric, err := s.metricOf(r)
	if err != nil {
		return nil, err
	}
	of := r.Of
	if of == "" {
		of = "fp64"
		if s.Run(engine.FP64) == nil && len(s.Report.Runs) > 0 {
			of = s.Report.Runs[0].Precision.String()
		}
	}
	summ := func(p engine.Precision) (*engine.Heatmap, error) {
		run := s.Run(p)
		if run == nil || run.Summary == nil {
			return nil, s.unavailable("heatmap", "has no %s run (its precisions: %s)", p, s.precisions())
		}
		return run.Summary.Heatmap(metric), nil
	}
	if s.Report.Grid.Strategy != nil {
		return s.strategyHeatmapFigure(ctx, metric, of, r.Axes)
	}
	var hm, other *engine.Heatmap
	switch of {
	case "fp64":
		hm, err = summ(engine.FP64)
	case "fp32":
		hm, err = summ(engine.FP32)
	case "diff":
		if hm, err = summ(engine.FP64); err == nil {
			other, err = summ(engine.FP32)
		}
	default:
		return nil, s.unavailable("heatmap", "has no run %q: --of wants fp64, fp32 or diff", of)
	}
	if err != nil {
		return nil, err
	}
	h := newHeat(s.Report.Grid, hm.BlockRows, hm.BlockCols)
	for row := 0; row < hm.Rows; row++ {
		for col := 0; col < hm.Cols; col++ {
			v := hm.Cell(row, col).Mean
			if other != nil {
				v = other.Cell(row, col).Mean - v
			}
			h.val[row*h.cols+col] = v
		}
	}
	s.greyConstrained(h)
	colour, key, words := heatScale(h, of)
	what := metric + " " + of
	if of == "diff" {
		what = metric + ", fp32 - fp64"
	}
	title := fmt.Sprintf("%s over the grid", what)
	caption := fmt.Sprintf("Session %d, %s by HMA (rows) and HMA3 (columns) length; %s.", s.ID, what, words)
	if !hm.Full() {
		caption += fmt.Sprintf(" Each cell is a block of %d x %d combos, drawn by its mean.", hm.BlockRows, hm.BlockCols)
	}
	marks := s.marks()
	if len(marks) > 0 {
		caption += " Marked: the selected combo (the best by the objective) and the plateau best (robustness)."
	}
	return gridFigure("heatmap", title, caption, heatPlot(h, title, colour, marks), key, h), nil
}

// heatScale is the colours, the key and the caption's words of a
// metric heatmap of run of: a difference ("diff", fp32 - fp64) on a
// diverging scale centred on 0 (divScale), a run's values by quantile.
func heatScale(h *heat, of string) (func(float64) colorT, *plot.Plot, string) {
	if of == "diff" {
		d := newDivScale(h.val, false)
		return d.Colour, divKey(d, func(v float64) string {
			if v == 0 {
				return "0"
			}
			return fmt.Sprintf("%+.3g", v)
		}), d.Words()
	}
	sc := QuantileScale(h.val, Levels)
	colour := func(v float64) colorT { return sequential[sc.Level(v)*len(sequential)/sc.Levels()] }
	return colour, quantileKey(sc, g3), "colours by quantile (each colour holds an eighth of the cells, the key gives the edges)"
}

// strategyHeatmapFigure is heatmapFigure for a strategy grid: the metric
// over the grid's first two parameters, each cell the best value over the
// other parameters (and over its block, beyond Options.Cells values an
// axis), read from the run's per-combo results; of "diff" draws per cell
// the largest |fp32 - fp64| of its combos, signed.
func (s *Source) strategyHeatmapFigure(ctx context.Context, metric, of string, axes []string) (*Figure, error) {
	g := s.Report.Grid
	h, word, err := s.strategyHeat(ctx, metric, of, axes)
	if err != nil {
		return nil, err
	}
	colour, key, words := heatScale(h, of)
	what := metric + " " + of
	if of == "diff" {
		what = metric + ", fp32 - fp64"
	}
	title := fmt.Sprintf("%s over the grid", what)
	if h.rest != nil {
		title = fmt.Sprintf("%s, %s%s", what, word, h.over())
	}
	caption := fmt.Sprintf("Session %d, %s %s (%s): %s by %s (rows) and %s (columns)", s.ID, g.Family(), g.Text(), text.Thousands(g.Len())+" combos", what, h.ax[0].label, h.ax[1].label)
	if h.rest != nil {
		caption += fmt.Sprintf(", each cell the %s%s", word, h.over())
	}
	caption += "; " + words + "."
	if h.br > 1 || h.bc > 1 {
		caption += fmt.Sprintf(" Each cell is a block of %d x %d values, drawn by its %s.", h.br, h.bc, word)
	}
	if g.Strategy.FastBelowSlow() {
		caption += " White: no combo (--fast-below-slow drops those whose fast length is not below the slow)."
	}
	marks := s.marks()
	caption += markCaption(h, marks, word)
	return gridFigure("heatmap", title, caption, heatPlot(h, title, colour, marks), key, h), nil
}

// markCaption is a strategy heatmap's caption's words for its marks (""
// for none): which combos are marked, and that each is drawn at its own
// values of the two shown parameters, by Strategy.Coords. When the cells
// reduce other parameters (h.rest) by word ("best", "largest |value|"),
// the cell under a mark need not hold the marked combo's own value, so it
// says so and gives each marked combo's values of the reduced parameters.
func markCaption(h *heat, marks []mark, word string) string {
	var what, rest []string
	for _, m := range marks {
		if _, _, ok := h.at(m.index); !ok {
			continue
		}
		switch m.label {
		case "selected":
			what = append(what, "the selected combo (x, the best by the objective)")
		case "plateau best":
			what = append(what, "the plateau best (o, robustness)")
		default:
			what = append(what, "the "+m.label+" ("+m.sign+")")
		}
		if h.rest != nil {
			var vs []engine.ParamValue
			for _, p := range h.g.Point(m.index) {
				if slices.Contains(h.rest, p.Name) {
					vs = append(vs, p)
				}
			}
			name := m.label
			if name == "selected" {
				name = "selected combo"
			}
			rest = append(rest, "the "+name+" has "+engine.PointLabel(vs))
		}
	}
	if len(what) == 0 {
		return ""
	}
	shown := h.ax[0].label
	if h.axi[1] >= 0 {
		shown = fmt.Sprintf("%s (row) and %s (column)", h.ax[0].label, h.ax[1].label)
	}
	c := fmt.Sprintf(" Marked: %s, each at its own %s.", joinAnd(what), shown)
	if h.rest != nil {
		c += fmt.Sprintf(" A cell shows the %s%s, which need not be the marked combo's own value: %s.", word, h.over(), strings.Join(rest, "; "))
	}
	return c
}

// strategyHeat is the heatmap of metric in run of ("fp64", "fp32",
// "diff") over strategy grid s.Report.Grid along axes (heatAxes: nil =
// its first two parameters), with its constrained-out
// cells, and the word for how a cell reduces its combos ("best",
// "largest", "largest |fp32 - fp64|").
func (s *Source) strategyHeat(ctx context.Context, metric, of string, axes []string) (*heat, string, error) {
	g := s.Report.Grid
	ax, err := heatAxes(g, axes)
	if err != nil {
		return nil, "", s.unavailable("heatmap", "cannot draw those axes: %v", err)
	}
	h := newStrategyHeat(g, s.opt.Cells, ax)
	p := engine.FP64
	switch of {
	case "fp64", "diff":
	case "fp32":
		p = engine.FP32
	default:
		return nil, "", s.unavailable("heatmap", "has no run %q: --of wants fp64, fp32 or diff", of)
	}
	for _, q := range []engine.Precision{p, engine.FP32} {
		if s.Run(q) == nil {
			return nil, "", s.unavailable("heatmap", "has no %s run (its precisions: %s)", q, s.precisions())
		}
		if of != "diff" {
			break
		}
	}
	sense := engine.MetricSense(metric)
	word := "best"
	if sense == engine.EitherSide {
		word = "largest"
	}
	better := func(v, old float64) bool {
		switch {
		case math.IsNaN(v):
			return false
		case math.IsNaN(old):
			return true
		case sense == engine.LowerIsBetter:
			return v < old
		}
		return v > old
	}
	if of == "diff" {
		word = "largest |fp32 - fp64|"
		n := g.Len()
		if n > maxDiffCombos {
			return nil, "", s.unavailable("heatmap", "has %s combos: its fp32 - fp64 heatmap pairs the runs combo by combo, for at most %s (draw --of fp64 and --of fp32 apart)", text.Thousands(n), text.Thousands(maxDiffCombos))
		}
		v64 := make([]float64, n)
		for i := range v64 {
			v64[i] = math.NaN()
		}
		err := s.eachResult(ctx, "heatmap", engine.FP64, func(rs []engine.ComboResult) error {
			for i := range rs {
				if j := rs[i].Index; j >= 0 && j < n {
					v64[j], _ = rs[i].Metrics.Value(metric)
				}
			}
			return nil
		})
		if err != nil {
			return nil, "", err
		}
		err = s.eachResult(ctx, "heatmap", engine.FP32, func(rs []engine.ComboResult) error {
			for i := range rs {
				k, ok := h.cellOf(rs[i].Index)
				if !ok {
					continue
				}
				v, _ := rs[i].Metrics.Value(metric)
				d := v - v64[rs[i].Index]
				if old := h.val[k]; !math.IsNaN(d) && (math.IsNaN(old) || math.Abs(d) > math.Abs(old)) {
					h.val[k] = d
				}
			}
			return nil
		})
		if err != nil {
			return nil, "", err
		}
	} else {
		err := s.eachResult(ctx, "heatmap", p, func(rs []engine.ComboResult) error {
			for i := range rs {
				if k, ok := h.cellOf(rs[i].Index); ok {
					if v, _ := rs[i].Metrics.Value(metric); better(v, h.val[k]) {
						h.val[k] = v
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, "", err
		}
	}
	if err := s.greyStrategy(ctx, h); err != nil {
		return nil, "", err
	}
	return h, word, nil
}

// maxDiffCombos bounds the strategy grids whose fp32 - fp64 heatmap pairs
// the two runs' values combo by combo: 8 bytes a combo, 128 MiB at most.
const maxDiffCombos = 1 << 24

// greyStrategy marks h's cells where no combo meets the objective's
// constraints, from the fp64 run's results (else the first run's): a cell
// is grey when it holds combos and none of them is selectable.
func (s *Source) greyStrategy(ctx context.Context, h *heat) error {
	o := s.Objective()
	if !o.Constrained() {
		return nil
	}
	p := engine.FP64
	if s.Run(p) == nil {
		if len(s.Report.Runs) == 0 {
			return nil
		}
		p = s.Report.Runs[0].Precision
	}
	seen, ok := make([]bool, len(h.val)), make([]bool, len(h.val))
	err := s.eachResult(ctx, "heatmap", p, func(rs []engine.ComboResult) error {
		for i := range rs {
			if k, in := h.cellOf(rs[i].Index); in {
				seen[k] = true
				ok[k] = ok[k] || o.Selectable(&rs[i])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	h.grey = make([]bool, len(h.val))
	for k := range h.grey {
		h.grey[k] = seen[k] && !ok[k]
	}
	return nil
}

func (s *Source) precisions() string {
	var ps []string
	for _, run := range s.Report.Runs {
		ps = append(ps, run.Precision.String())
	}
	if len(ps) == 0 {
		return "none saved"
	}
	return strings.Join(ps, ", ")
}

// greyConstrained marks h's cells where no combo meets the objective's
// constraints (min trades, max drawdown), from the fp64 run's summary
// (else the first run's): exact per combo at full resolution; a block is
// grey when no combo in it meets each constraint on its own (its most
// trades below the minimum, or its least drawdown above the maximum).
func (s *Source) greyConstrained(h *heat) {
	o := s.Objective()
	if !o.Constrained() {
		return
	}
	run := s.Run(engine.FP64)
	if run == nil && len(s.Report.Runs) > 0 {
		run = s.Report.Runs[0]
	}
	if run == nil || run.Summary == nil {
		return
	}
	trades, dd := run.Summary.Heatmap("total_trades"), run.Summary.Heatmap("max_drawdown")
	h.grey = make([]bool, len(h.val))
	for r := 0; r < h.rows; r++ {
		for c := 0; c < h.cols; c++ {
			t, d := trades.Cell(r, c), dd.Cell(r, c)
			if t.N == 0 {
				continue
			}
			h.grey[r*h.cols+c] = t.Max < float64(o.MinTrades) || (o.MaxDrawdown > 0 && d.Min > o.MaxDrawdown)
		}
	}
}

// marks are the combos a heatmap marks: the selected one and the plateau
// best (when the session has a robustness summary).
func (s *Source) marks() []mark {
	var ms []mark
	if c, ok := s.Selected(); ok {
		ms = append(ms, mark{label: "selected", sign: "x", combo: c.Combo, index: c.Index, glyph: crossGlyph})
	}
	if sm := s.Robust; sm != nil && sm.PlateauK > 0 {
		ms = append(ms, mark{label: "plateau best", sign: "o", combo: engine.Combo{HMA: sm.PlateauBest.HMA, HMA3: sm.PlateauBest.HMA3}, index: sm.PlateauBest.Index, glyph: ringGlyph})
	}
	return ms
}

// parityHeatFigure is dn or dPnL per combo from the parity report's rows:
// a block of combos (a grid beyond Options.Cells) shows its largest |value|.
func (s *Source) parityHeatFigure(ctx context.Context, r Request) (*Figure, error) {
	name := r.Name
	p, err := s.Parity(ctx)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, s.unavailable(name, "has no parity report: it needs both an fp64 and an fp32 run that finished (its precisions: %s)", s.precisions())
	}
	g := s.Report.Grid
	n3 := max(g.HMA3.Len(), 1)
	var h *heat
	if g.Strategy != nil {
		ax, err := heatAxes(g, r.Axes)
		if err != nil {
			return nil, s.unavailable(name, "cannot draw those axes: %v", err)
		}
		h = newStrategyHeat(g, s.opt.Cells, ax)
	} else {
		h = newHeat(g, ceilDiv(g.HMA.Len(), s.opt.Cells), ceilDiv(g.HMA3.Len(), s.opt.Cells))
	}
	for i := range p.Combos {
		c := &p.Combos[i]
		v := float64(c.Dn)
		if name == "parity-dpnl" {
			v = c.DPnLpp
		}
		k := c.Index/n3/h.br*h.cols + c.Index%n3/h.bc
		if g.Strategy != nil {
			var ok bool
			if k, ok = h.cellOf(c.Index); !ok {
				continue
			}
		}
		if old := h.val[k]; old != old || abs(v) > abs(old) {
			h.val[k] = v
		}
	}
	d := newDivScale(h.val, name == "parity-dn")
	colour := d.Colour
	title, unit, format := "dn = trades fp32 - trades fp64", "trades", func(v float64) string { return fmt.Sprintf("%+.3g", v) }
	if name == "parity-dpnl" {
		title, unit = "dPnL = return fp32 - return fp64 (pp)", "percentage points"
	} else {
		format = func(v float64) string { return fmt.Sprintf("%+d", int(v)) }
	}
	caption := fmt.Sprintf("Session %d, per combo: %s (%s); %s. Verdict %s; max |dn| %d, max |dPnL| %.4g pp.",
		s.ID, title, unit, d.Words(), strings.ToUpper(string(p.Verdict)), p.MaxAbsDn, p.MaxAbsDPnLpp)
	if g.Strategy != nil {
		caption = fmt.Sprintf("Session %d, %s %s, per combo: %s (%s) by %s (rows) and %s (columns)", s.ID, g.Family(), g.Text(), title, unit, h.ax[0].label, h.ax[1].label)
		if h.rest != nil {
			caption += ", each cell the largest |value|" + h.over()
			title += ", largest |value|" + h.over()
		}
		caption += fmt.Sprintf("; %s. Verdict %s; max |dn| %d, max |dPnL| %.4g pp.", d.Words(), strings.ToUpper(string(p.Verdict)), p.MaxAbsDn, p.MaxAbsDPnLpp)
		if h.br > 1 || h.bc > 1 {
			caption += fmt.Sprintf(" Each cell is a block of %d x %d values, drawn by its largest |value|.", h.br, h.bc)
		}
		caption += markCaption(h, s.marks(), "largest |value|")
	} else if h.br > 1 || h.bc > 1 {
		caption += fmt.Sprintf(" Each cell is a block of %d x %d combos, drawn by its largest |value|.", h.br, h.bc)
	}
	return gridFigure(name, title, caption, heatPlot(h, title, colour, s.marks()), divKey(d, format), h), nil
}
