package engine

import (
	"math"
	"unsafe"
)

// A run's summary is what a front end shows of its results without holding
// them: per SPEC metric the best combos (top lists) and the grid's heatmap,
// full resolution up to a cap of cells and reduced by blocks beyond it.
// RunStudy builds it from the chunks as they stream to the sinks
// (StudyOptions.Summary: the keeper that keeps a discarding run's best
// feeds it, keep.go); the sessions store builds the same from a saved run's
// batches (Summariser). Its memory depends on SummaryOptions, never on the
// grid: at most K results per list and MaxRows x MaxCols cells per metric
// (Summary.Bytes). Whatever it does not hold, a front end reads from the
// store a page at a time (sessions.RunReader).

// DefaultHeatmapCells is the default cap of a heatmap's cells along each
// axis. A terminal heatmap shows at most a couple of hundred cells across;
// 256 x 256 cells of the 24 metrics take 50.3 MB a run reduced by blocks
// (max, min, sum, count: 32 bytes a cell and metric), 12.6 MB at full
// resolution (one value). A cap of 512 would take four times that.
const DefaultHeatmapCells = 256

// SummaryOptions bound a run's summary (the zero value: the defaults).
type SummaryOptions struct {
	// K is the combos kept per top list; 0 = DefaultKeep.
	K int
	// MaxRows and MaxCols cap a heatmap's cells along the HMA lengths
	// (rows) and the HMA3 lengths (columns); 0 = DefaultHeatmapCells.
	MaxRows, MaxCols int
}

func (o SummaryOptions) withDefaults() SummaryOptions {
	if o.K <= 0 {
		o.K = DefaultKeep
	}
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultHeatmapCells
	}
	if o.MaxCols <= 0 {
		o.MaxCols = DefaultHeatmapCells
	}
	return o
}

// Sense says which side of a metric is better.
type Sense int8

const (
	HigherIsBetter Sense = iota // returns, ratios, win rate, VaR and CVaR (less negative), omega
	LowerIsBetter               // max_drawdown
	EitherSide                  // the counts (total_trades, long_bars, short_bars, flat_bars): more is not better, nor less
)

// MetricSense is the better side of metric name (SPEC "Metrics per
// combo"): what ParseObjective ranks by (a count, which has no better
// side, is maximised there). An unknown name is HigherIsBetter.
func MetricSense(name string) Sense {
	switch {
	case name == "max_drawdown", name == "max_drawdown_bars":
		return LowerIsBetter
	case name == "avg_trade_bars", name == "exposure":
		return EitherSide
	case IsCount(name):
		return EitherSide
	}
	return HigherIsBetter
}

// IsFraction reports whether metric name is a fraction (0.05 = 5%): the
// returns, drawdown, win rate, VaR and CVaR of Part 1, and of SPEC Part
// 2's the trade returns (expectancy, avg_win, avg_loss, best_trade,
// worst_trade) and exposure. The front ends show these as percentages;
// the others are ratios (sharpe, profit_factor, sqn, ...), counts, or
// bars (avg_trade_bars, max_drawdown_bars).
func IsFraction(name string) bool {
	switch name {
	case "total_return", "cagr", "max_drawdown", "win_rate", "var_95", "cvar_95",
		"expectancy", "avg_win", "avg_loss", "best_trade", "worst_trade", "exposure":
		return true
	}
	return false
}

// NotComputedText is how the front ends show a metric that was not
// computed (NotComputed): a GPU lane's trade metrics, a run saved before
// SPEC Part 2.
const NotComputedText = "n/a"

// NotComputed reports whether v, the value of metric name, stands for
// "not computed": NaN in one of SPEC Part 2's metrics (profit_factor to
// max_drawdown_bars), which are never NaN when computed (profit_factor is
// 0 with neither wins nor losses, +Inf with no loss; sqn 0 below 2
// trades). A NaN of Part 1 (a Sharpe of an empty series) is a value, and
// is shown as "nan".
func NotComputed(name string, v float64) bool {
	if !math.IsNaN(v) {
		return false
	}
	i, ok := metricIndex[name]
	return ok && i >= part1Metrics
}

// part1Metrics is how many of MetricNames are SPEC Part 1's (total_return
// to flat_bars), the rest Part 2's.
const part1Metrics = 14

// Summary is one run's results in bounded memory (see SummaryOptions).
type Summary struct {
	Precision Precision
	Grid      Grid
	Count     int // the combos summarised (those of the run that were computed)
	K         int // the most combos a top list holds
	// Objective is the study's (the zero value: Sharpe, unconstrained);
	// Best its top list, constraints applied, best first (TopBy): as many
	// as the study keeps (StudyOptions.Keep, else DefaultKeep), K for a
	// Summariser.
	Objective Objective
	Best      []ComboResult
	// Lists holds per metric of MetricNames, in order, its top K on its
	// better side, and for a metric whose better side is a choice
	// (EitherSide) the top K on either side, maximised first. Each is
	// unconstrained and ranked as TopBy ranks (NaN last, ties to the lower
	// grid index).
	Lists []TopList
	// Heatmaps holds per metric of MetricNames, in order, its grid.
	Heatmaps []*Heatmap
}

// TopList is the best K combos of a run by one metric in one direction.
type TopList struct {
	Metric   string
	Minimise bool          // lowest first
	Combos   []ComboResult // best first: TopBy(run, Objective{Metric, Minimise}, K)
}

// Top returns the top list of metric in direction minimise; ok is false
// when the summary keeps none (an unknown metric, or the side of a metric
// that is not better: the highest max_drawdown).
func (s *Summary) Top(metric string, minimise bool) (combos []ComboResult, ok bool) {
	for i := range s.Lists {
		if l := &s.Lists[i]; l.Metric == metric && l.Minimise == minimise {
			return l.Combos, true
		}
	}
	return nil, false
}

// Heatmap returns the heatmap of metric, or nil for an unknown name.
func (s *Summary) Heatmap(metric string) *Heatmap {
	i, ok := metricIndex[metric]
	if !ok || i >= len(s.Heatmaps) {
		return nil
	}
	return s.Heatmaps[i]
}

// Bytes is the memory the summary holds, in bytes: its results and its
// cells (not the small fixed parts).
func (s *Summary) Bytes() int64 {
	per := int64(unsafe.Sizeof(ComboResult{}))
	b := per * int64(cap(s.Best))
	for _, l := range s.Lists {
		b += per * int64(cap(l.Combos))
	}
	if len(s.Heatmaps) > 0 {
		b += s.Heatmaps[0].cells.bytes() // one store for every metric
	}
	return b
}

// Heatmap is one metric over a run's grid: rows are the HMA lengths,
// columns the HMA3 lengths (Grid.Index). When the grid has at most
// MaxRows x MaxCols combos along each axis every cell is one combo (Full);
// beyond, a cell is a block of BlockRows x BlockCols combos (the last row
// and column of cells hold what is left: fewer), and holds the block's
// max, min and mean.
type Heatmap struct {
	Metric               string
	Rows, Cols           int // cells: ceil(HMA.Len()/BlockRows) x ceil(HMA3.Len()/BlockCols)
	BlockRows, BlockCols int // combos per cell along HMA and along HMA3
	cells                *heatCells
	m                    int // the metric's place in MetricNames
}

// heatCells holds the cells of every metric of a summary, cell-major (a
// combo's 14 values go to one place, not to 14 arrays apart): element
// [cell*NumMetrics + metric].
type heatCells struct {
	rows, cols, blockRows, blockCols int
	gridRows, gridCols               int
	strategy                         Strategy  // a strategy grid's: rows and columns are its first two axes (Coords)
	val                              []float64 // at full resolution: the value (NaN: none)
	acc                              []heatAcc // reduced by blocks
}

// heatAcc is a block's reduction of one metric over its values that are
// not NaN; with n = 0 (none) it holds max -Inf, min +Inf and sum -0, so
// that adding a value needs no test for the first.
type heatAcc struct {
	max, min, sum float64
	n             uint32
}

// newHeatCells are the empty cells of g's heatmaps capped at maxRows x
// maxCols (both >= 1).
//
// A strategy grid's heatmap is over its first two axes (a grid of one
// axis: one column): rows the first axis' values, columns the second's; a
// grid of more axes reduces the combos that share them (its other axes)
// in each cell, as blocks are (never Full).
func newHeatCells(g Grid, maxRows, maxCols int) *heatCells {
	R, C := g.HMA.Len(), g.HMA3.Len()
	deeper := false
	if g.Strategy != nil {
		axes := g.Strategy.Axes()
		R, C = 1, 1
		if len(axes) > 0 {
			R = max(len(axes[0].Values), 1)
		}
		if len(axes) > 1 {
			C = max(len(axes[1].Values), 1)
		}
		deeper = len(axes) > 2
	}
	h := &heatCells{gridRows: R, gridCols: max(C, 1), strategy: g.Strategy}
	h.blockRows, h.blockCols = ceilDiv(R, maxRows), ceilDiv(C, maxCols)
	h.rows, h.cols = ceilDiv(R, h.blockRows), ceilDiv(C, h.blockCols)
	n := h.rows * h.cols * NumMetrics
	if h.blockRows == 1 && h.blockCols == 1 && !deeper {
		h.val = make([]float64, n)
		for i := range h.val {
			h.val[i] = math.NaN()
		}
	} else {
		h.acc = make([]heatAcc, n)
		empty := heatAcc{max: math.Inf(-1), min: math.Inf(1), sum: math.Copysign(0, -1)}
		for i := range h.acc {
			h.acc[i] = empty
		}
	}
	return h
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return 1
	}
	return (a + b - 1) / b
}

// pos is the grid position (row, column) of combo index: (HMA index,
// HMA3 index), or a strategy grid's first two axis indices.
func (h *heatCells) pos(index int) (r, c int) {
	if h.strategy == nil {
		return index / h.gridCols, index % h.gridCols
	}
	co := h.strategy.Coords(index)
	if len(co) > 0 {
		r = co[0]
	}
	if len(co) > 1 {
		c = co[1]
	}
	return min(max(r, 0), h.gridRows-1), min(max(c, 0), h.gridCols-1)
}

// add puts the values vs (MetricNames order) of the combo at grid
// position (r, c) in its cell.
func (h *heatCells) add(r, c int, vs *[NumMetrics]float64) {
	base := (r/h.blockRows*h.cols + c/h.blockCols) * NumMetrics
	if h.val != nil {
		for m, v := range vs {
			if v == v { // not NaN
				h.val[base+m] = v
			}
		}
		return
	}
	acc := h.acc[base : base+NumMetrics]
	for m, v := range vs {
		if v != v { // NaN
			continue
		}
		// An empty accumulator is (-Inf, +Inf, -0, 0) (newHeatCells):
		// its first value v gives (v, v, v, 1), -0 + v being v for
		// every v, -0 included. max and min are the builtins' for
		// values that are not NaN (+0 above -0), a branch each that
		// is rarely taken.
		a := &acc[m]
		if v > a.max || v == a.max && math.Signbit(a.max) {
			a.max = v
		}
		if v < a.min || v == a.min && !math.Signbit(a.min) {
			a.min = v
		}
		a.sum += v
		a.n++
	}
}

func (h *heatCells) bytes() int64 {
	return 8*int64(cap(h.val)) + int64(unsafe.Sizeof(heatAcc{}))*int64(cap(h.acc))
}

// Full reports whether every cell is one combo (never for a strategy
// grid of more than two axes, whose cells reduce the others).
func (h *Heatmap) Full() bool { return h.BlockRows == 1 && h.BlockCols == 1 && h.cells.val != nil }

// CellOf is the cell of the grid's combo index.
func (h *Heatmap) CellOf(index int) (row, col int) {
	r, c := h.cells.pos(index)
	return r / h.BlockRows, c / h.BlockCols
}

// Span is the part of the grid cell (row, col) covers: HMA rows [r0, r1)
// by HMA3 columns [c0, c1), grid positions (Grid.Index(r, c) is a combo;
// for a strategy grid, positions along its first two axes: combos
// Strategy.IndexOf with those coordinates, any along its other axes).
func (h *Heatmap) Span(row, col int) (r0, r1, c0, c1 int) {
	r0, c0 = row*h.BlockRows, col*h.BlockCols
	return r0, min(r0+h.BlockRows, h.cells.gridRows), c0, min(c0+h.BlockCols, h.cells.gridCols)
}

// Cell is what a heatmap holds of one cell.
type Cell struct {
	Max, Min, Mean float64 // over the cell's values that are not NaN; NaN when it has none
	N              int     // how many: the combos computed whose value is not NaN
}

// Cell returns cell (row, col), 0 <= row < Rows, 0 <= col < Cols. The mean
// is the sum in the order the combos arrived (chunks of several lanes
// arrive in any order: it may differ by an ulp between two runs) divided by
// N; a cell holding both +Inf and -Inf has a NaN mean.
func (h *Heatmap) Cell(row, col int) Cell {
	i := (row*h.Cols+col)*NumMetrics + h.m
	if g := h.cells; g.val != nil {
		v := g.val[i]
		if math.IsNaN(v) {
			return Cell{Max: v, Min: v, Mean: v}
		}
		return Cell{Max: v, Min: v, Mean: v, N: 1}
	}
	a := h.cells.acc[i]
	if a.n == 0 {
		nan := math.NaN()
		return Cell{Max: nan, Min: nan, Mean: nan}
	}
	return Cell{Max: a.max, Min: a.min, Mean: a.sum / float64(a.n), N: int(a.n)}
}

// summariser builds a Summary from results offered one by one (a
// keeper's, under its lock).
type summariser struct {
	s    *Summary
	tops []*Top // one per list of s.Lists
	// Per metric (MetricNames place), its list on the higher side and
	// its list on the lower side (nil: none) with their thresholds
	// (Top.thr, on the lower side of the negated value; +Inf for a list
	// it does not have): a row's pass reads two fixed arrays, with one
	// comparison per list unless the value ranks above the list's k-th
	// best.
	hi, lo       [NumMetrics]*Top
	hiThr, loThr [NumMetrics]float64
	cells        *heatCells
}

func newSummariser(g Grid, p Precision, o Objective, opt SummaryOptions) *summariser {
	opt = opt.withDefaults()
	b := &summariser{s: &Summary{Precision: p, Grid: g, K: opt.K, Objective: o},
		cells: newHeatCells(g, opt.MaxRows, opt.MaxCols)}
	for m, name := range MetricNames {
		sides := []bool{MetricSense(name) == LowerIsBetter}
		if MetricSense(name) == EitherSide {
			sides = []bool{false, true}
		}
		b.hiThr[m], b.loThr[m] = math.Inf(1), math.Inf(1)
		for _, minimise := range sides {
			t := NewTop(Objective{Metric: name, Minimise: minimise}, opt.K)
			b.s.Lists = append(b.s.Lists, TopList{Metric: name, Minimise: minimise})
			b.tops = append(b.tops, t)
			if minimise {
				b.lo[m], b.loThr[m] = t, t.thr
			} else {
				b.hi[m], b.hiThr[m] = t, t.thr
			}
		}
		c := b.cells
		b.s.Heatmaps = append(b.s.Heatmaps, &Heatmap{Metric: name, Rows: c.rows, Cols: c.cols, BlockRows: c.blockRows, BlockCols: c.blockCols, cells: c, m: m})
	}
	return b
}

// add summarises r: its 24 values read once, offered to each list (none
// has a constraint, so Objective.Selectable is TotalTrades >= 0 for all)
// and put in their cells. A list costs a row one comparison with its
// k-th best unless the row ranks above it (Top.offer): no allocation, no
// call. A NaN passes every comparison (the heap ranks it, last), a
// side without a list too: offer skips that.
func (b *summariser) add(r *ComboResult) {
	b.s.Count++
	var vs [NumMetrics]float64
	r.Metrics.Values(&vs)
	if r.TotalTrades >= 0 {
		for m, v := range vs {
			if !(v < b.hiThr[m]) {
				if t := b.hi[m]; t != nil {
					t.offer(r, v)
					b.hiThr[m] = t.thr
				}
			}
			if !(-v < b.loThr[m]) {
				if t := b.lo[m]; t != nil {
					t.offer(r, -v)
					b.loThr[m] = t.thr
				}
			}
		}
	}
	row, col := b.cells.pos(r.Index)
	b.cells.add(row, col, &vs)
}

// summary is the finished Summary, the study's best (best, by its
// objective) its Best.
func (b *summariser) summary(best *Top) *Summary {
	for i, t := range b.tops {
		b.s.Lists[i].Combos = t.Sorted()
	}
	if best != nil {
		b.s.Best = best.Sorted()
	}
	return b.s
}

// Summariser builds a run's Summary, and the bounded selection a kept run
// holds, from its results offered in chunks in any order: what RunStudy
// does with the chunks of a study that asks for summaries (the same
// keeper), for results read back from a store a batch at a time. Add may
// be called from several goroutines.
type Summariser struct {
	k *keeper
}

// NewSummariser summarises a run of precision p over grid g, its Best
// ranked by o, bounded by opt. also lists combos whose results the kept
// run holds too (the fp64 run's best, in the fp32 run: the side-by-side
// table), as a discarding study's fp32 run does.
func NewSummariser(g Grid, p Precision, o Objective, opt SummaryOptions, also []int) *Summariser {
	opt = opt.withDefaults()
	k := &keeper{best: NewTop(o, opt.K), sum: newSummariser(g, p, o, opt)}
	if len(also) > 0 {
		k.also = make(map[int]bool, len(also))
		for _, i := range also {
			k.also[i] = true
		}
	}
	return &Summariser{k: k}
}

// Add summarises rs (each combo once over all calls, indices of the grid).
func (s *Summariser) Add(rs []ComboResult) { s.k.add(rs) }

// Keep makes run a kept run (Run.Kept) of what was added: Results its best
// by the objective and the combos of also, in grid order; Computed the
// count; the trade counts RunNotes reads; Summary the summary. run's Grid
// and Precision should be those of NewSummariser.
func (s *Summariser) Keep(run *Run) {
	s.k.keep(run)
	run.Summary = s.k.summary()
}

// Counts is the parity report without its row per combo (Combos, the one
// part that grows with the grid): the verdict, its reasons, the totals
// and maxima, the worst flips (at most MaxFlipsListed) and the error of
// each indicator series (one per distinct length). A front end showing a
// large study holds this, and pages the per-combo rows from the store.
func (p *Parity) Counts() *Parity {
	if p == nil {
		return nil
	}
	c := *p
	c.Combos = nil
	return &c
}
