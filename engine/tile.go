package engine

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sweepbench/engine/text"
)

// Tiles: a study's indicator series are built up front, one per distinct
// HMA length and one per HMA3 p (SPEC "Indicators"), each as long as the
// bars. A grid of 10^4 x 10^4 lengths over 175,000 bars needs 20,000
// series, 28 GB in fp64 and fp32: more than a machine has, although each
// combo needs only two of them. RunStudy then runs the study in tiles:
// rectangles of the grid (a band of HMA lengths by a band of HMA3 lengths)
// whose series fit the series budget, one after the other, each a study of
// its own (both lanes, then its parity report) whose series are released
// before the next tile starts. Results, the per-block statistics and the
// parity report are those of the untiled study, combo for combo (a tile's
// combos are relabelled with the grid's index); only the series of a length
// that several tiles share are computed once per tile.

// SeriesBudgetEnv names the environment variable that sets the series
// budget in bytes (a plain integer, or with a KiB/MiB/GiB suffix): the most
// indicator-series memory a tile of a study may hold, all precisions. Unset,
// the budget is half the memory the system has available once the
// per-combo results are counted (MemoryForecast.Results).
const SeriesBudgetEnv = "SWEEPBENCH_SERIES_BUDGET"

// tile is one rectangle of a study's grid: the whole grid's HMA rows
// [r0, r0+Grid.HMA.Len()) by HMA3 columns [c0, c0+Grid.HMA3.Len()), which
// are Grid's own ranges.
type tile struct {
	Grid   Grid
	r0, c0 int
}

// global is the whole grid's index of the tile's combo local.
func (t tile) global(whole Grid, local int) int {
	n3 := t.Grid.HMA3.Len()
	return whole.Index(t.r0+local/n3, t.c0+local%n3)
}

// local is the tile's index of the whole grid's combo i, or -1 when the
// tile does not hold it.
func (t tile) local(whole Grid, i int) int {
	n3 := whole.HMA3.Len()
	r, c := i/n3-t.r0, i%n3-t.c0
	if r < 0 || c < 0 || r >= t.Grid.HMA.Len() || c >= t.Grid.HMA3.Len() {
		return -1
	}
	return r*t.Grid.HMA3.Len() + c
}

// sub is the range of r's values [i, j).
func sub(r Range, i, j int) Range { return Range{Start: r.At(i), Stop: r.At(j - 1), Step: r.Step} }

// seriesBytes is the memory of one indicator series over n bars in every
// precision of ps (8 bytes a value in fp64, 4 in fp32).
func seriesBytes(n int, ps []Precision) int64 {
	var b int64
	for _, p := range ps {
		if p == FP32 {
			b += 4 * int64(n)
		} else {
			b += 8 * int64(n)
		}
	}
	return b
}

// gridSeries is how many series a study of g builds (Grid.Distinct: one
// per HMA length and one per HMA3 p), plus the bar returns.
func gridSeries(g Grid) int64 {
	if g.Strategy != nil {
		return int64(g.Strategy.Series())
	}
	d := g.Distinct()
	return int64(d.HMA.Len()+d.HMA3.Len()) + 1
}

// TileBudgetError: the series budget cannot hold even the two series of
// one combo and the bar returns.
type TileBudgetError struct {
	Budget, PerSeries int64 // bytes
}

func (e *TileBudgetError) Error() string {
	return fmt.Sprintf("the series budget %s cannot hold the 3 indicator series of one combo (%s each): raise %s, or use fewer bars",
		text.Bytes(e.Budget), text.Bytes(e.PerSeries), SeriesBudgetEnv)
}

// planTiles splits g into tiles whose series (gridSeries of the tile's
// grid, per bytes each) fit budget bytes; one tile, g itself, when g's
// fit or budget is 0 (no bound). Tiles run HMA-band by HMA-band, HMA3-band
// by HMA3-band within one, cover g once, and keep an HMA3 twin pair (2p,
// 2p+1, one series) in one tile. Errors: *TileBudgetError when the budget
// holds fewer than 3 series.
//
// A strategy grid (Grid.Strategy) is never tiled: its combos are ordered by
// the family's axes and its series are the family's (moving averages,
// z-score windows, channels, RSI), not one per HMA length and HMA3 p, so
// bands of HMA rows mean nothing to it. It runs as one tile, g itself, and
// its series cache is bounded as strategy.Sweep documents (the distinct
// series its combos read, e.g. 29 series for the default cross grid).
func planTiles(g Grid, per, budget int64) ([]tile, error) {
	if g.Strategy != nil {
		return []tile{{Grid: g}}, nil
	}
	if budget <= 0 || gridSeries(g)*per <= budget {
		return []tile{{Grid: g}}, nil
	}
	m := budget/per - 1 // series a tile may hold besides the returns
	if m < 2 {
		return nil, &TileBudgetError{Budget: budget, PerSeries: per}
	}
	d := g.Distinct()
	nR, nD, nC := int64(g.HMA.Len()), int64(d.HMA3.Len()), int64(g.HMA3.Len())
	// Bands of whole rows (every HMA3 length) when one row's series fit
	// with room for a few HMA lengths: a band's combos are consecutive in
	// the grid, so results stream in grid order (RowWriter) without a
	// reorder buffer; the HMA3 series are computed once a band. Else
	// tiles of half the budget in each dimension.
	var rows, cols int64 // per tile: HMA lengths, distinct HMA3 series
	switch half := m / 2; {
	case nD <= m-min(nR, 4):
		rows, cols = m-nD, nD
	case nR <= half:
		rows, cols = nR, m-nR
	default:
		rows, cols = half, m-half
	}
	// Columns of the grid's own HMA3 range per tile: a twin pair is one
	// series, so a step-1 range with twins takes two lengths a series.
	width := cols
	if nD < nC {
		width = 2 * cols
	}
	var out []tile
	for r0 := int64(0); r0 < nR; r0 += rows {
		r1 := min(r0+rows, nR)
		for c0 := int64(0); c0 < nC; {
			c1 := min(c0+width, nC)
			// Never between 2p and 2p+1 (one series): end the tile
			// before the pair instead.
			if c1 < nC && nD < nC && g.HMA3.At(int(c1))%2 == 1 && c1-1 > c0 {
				c1--
			}
			t := tile{Grid: Grid{HMA: sub(g.HMA, int(r0), int(r1)), HMA3: sub(g.HMA3, int(c0), int(c1))}, r0: int(r0), c0: int(c0)}
			if gridSeries(t.Grid)*per > budget {
				return nil, fmt.Errorf("internal error: tile %v of %v holds %d series, more than the budget's %d", t.Grid, g, gridSeries(t.Grid), m+1)
			}
			out = append(out, t)
			c0 = c1
		}
	}
	return out, nil
}

// seriesBudget is the series budget of a study whose per-combo results take
// results bytes: SeriesBudgetEnv when set, else half the memory available
// beyond the results (0, no bound, when the system does not say).
func seriesBudget(results int64) (int64, error) {
	if v, ok := os.LookupEnv(SeriesBudgetEnv); ok && strings.TrimSpace(v) != "" {
		b, err := parseBytes(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%q: %w", SeriesBudgetEnv, v, err)
		}
		return b, nil
	}
	have := availableMemory()
	if have <= 0 {
		return 0, nil
	}
	return max((have-results)/2, 1), nil
}

// parseBytes reads "1048576", "512KiB", "64 MiB" or "2GiB".
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for i, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if strings.HasSuffix(s, u) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u)), int64(1)<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("want a positive number of bytes, e.g. 2GiB, 512MiB or 1048576")
	}
	return n * mult, nil
}

// tiles plans s's tiles (planTiles) under its series budget.
func (s *Study) tiles(discard bool) ([]tile, int64, error) {
	budget, err := seriesBudget(resultsForecast(s, discard))
	if err != nil {
		return nil, 0, err
	}
	ts, err := planTiles(s.Grid, seriesBytes(s.Dataset.Bars.Len(), s.Precisions), budget)
	return ts, budget, err
}

// priorOfTile is the part of a resumed study's prior run that falls in t,
// relabelled with the tile's indices (nil when none does).
func priorOfTile(whole Grid, t tile, run *Run) *Run {
	var rs []ComboResult
	for _, r := range run.Results {
		if l := t.local(whole, r.Index); l >= 0 {
			r.Index = l
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b ComboResult) int { return a.Index - b.Index })
	pr := *run
	pr.Grid, pr.Results, pr.Kept, pr.outcomes, pr.tradeHist = t.Grid, rs, false, nil, nil
	pr.Status, pr.Err = StatusComplete, nil
	if len(rs) < t.Grid.Len() {
		pr.Status, pr.Err = StatusCancelled, run.Err
	}
	return &pr
}

// tiledLane is one precision's run of a tiled study, built tile by tile:
// its results, relabelled with the whole grid's index, go to a keeper as
// an untiled study's do (the best by the objective, the fp64 best's fp32
// partners, the outcomes parity and the constraints need, the count).
type tiledLane struct {
	run  *Run
	kp   *keeper
	mu   sync.Mutex
	full []ComboResult // every result, when the caller keeps them (not Discard)
}

// runTiled runs s tile by tile (planTiles), lane by lane: every tile of the
// fp64 lane, then every tile of the fp32 lane, each a study of its own
// (runStudy on the tile's grid in one precision, keeping its best combos
// only), whose results reach opt.Sink relabelled with the whole grid's
// index as they come (in grid order when the tiles are bands of whole
// rows); then the parity report tile by tile from the combos' outcomes
// (trades and total return, 12 bytes a combo a lane, as a study that
// keeps no results holds them), the series of each tile computed again.
// The runs, per-block statistics and parity reports of the tiles are
// joined into the whole grid's; progress events speak of the whole grid.
// A tile that stops (cancel, failure) stops the study: the report holds
// what completed, as RunStudy's does.
func runTiled(ctx context.Context, s *Study, opt StudyOptions, tiles []tile, budget int64) (*Report, error) {
	ts, err := newTiledStudy(s, opt, tiles, budget)
	if err != nil {
		return nil, err
	}
	ts.runLanes(ctx)
	ts.collectRuns(ctx)
	ts.publishBlocks()
	ref, test := ts.lanes[FP64], ts.lanes[FP32]
	if ref == nil || test == nil || ref.run == nil || test.run == nil || ref.kp.out == nil || test.kp.out == nil {
		return ts.rep, ts.runErr
	}
	ts.parityReport(ctx, ref, test)
	return ts.rep, ts.runErr
}

// tiledStudy is the state runTiled's phases share.
type tiledStudy struct {
	s            *Study
	opt          StudyOptions
	tiles        []tile
	whole        Grid
	total        int
	discard      bool
	keepN        int
	rep          *Report
	both         bool        // an fp64 and an fp32 lane
	blockLane    Precision   // the lane that emits the per-block statistics
	blocks       *BlockStats // the whole grid's, when asked for
	lanes        map[Precision]*tiledLane
	alsoIdx      map[int]bool // the fp64 lane's best
	runErr       error
	blocksFilled bool // every tile's per-block statistics present
}

// newTiledStudy starts the whole grid's report (its note says why it is
// tiled) and its per-block statistics when the study asks for them.
func newTiledStudy(s *Study, opt StudyOptions, tiles []tile, budget int64) (*tiledStudy, error) {
	ts := &tiledStudy{s: s, opt: opt, tiles: tiles, whole: s.Grid, total: s.Grid.Len()}
	ts.discard = opt.Discard && len(opt.Prior) == 0
	ts.keepN = opt.Keep
	if ts.keepN <= 0 {
		ts.keepN = DefaultKeep
	}
	ts.rep = newReport(s)
	per := seriesBytes(s.Dataset.Bars.Len(), s.Precisions)
	ts.rep.Note = JoinNote(ts.rep.Note, fmt.Sprintf("run in %d tiles of the grid: its indicator series take %s, more than the series budget of %s (%s)",
		len(tiles), text.Bytes(gridSeries(ts.whole)*per), text.Bytes(budget), SeriesBudgetEnv))
	ts.both = slices.Contains(s.Precisions, FP64) && slices.Contains(s.Precisions, FP32)
	ts.blockLane = s.Precisions[0]
	if slices.Contains(s.Precisions, FP64) {
		ts.blockLane = FP64
	}
	if s.Blocks > 0 && len(opt.Prior) == 0 {
		bounds, err := BlockBounds(s.Dataset.Bars.Len(), s.Blocks)
		if err != nil {
			return nil, err
		}
		ts.blocks = NewBlockStats(ts.total, bounds)
	}
	ts.lanes = map[Precision]*tiledLane{}
	ts.blocksFilled = true
	return ts, nil
}

// send delivers a progress event without blocking (dropped when full).
func (ts *tiledStudy) send(ev Progress) {
	if ts.opt.Progress != nil {
		select {
		case ts.opt.Progress <- ev:
		default:
		}
	}
}

// runLanes runs each precision's lane over every tile in turn, stopping
// the study at the first tile that fails.
func (ts *tiledStudy) runLanes(ctx context.Context) {
	for _, p := range ts.s.Precisions {
		l := ts.newLane(p)
		done := 0 // combos of the lane's finished tiles
		for _, t := range ts.tiles {
			n, err := ts.runTile(ctx, l, p, t, done)
			done += n
			if err != nil {
				ts.runErr = err
				if l.run != nil {
					ts.lanes[p] = l
				}
				return
			}
		}
		ts.lanes[p] = l
		if p == FP64 {
			ts.alsoIdx = map[int]bool{}
			for _, r := range l.kp.best.h {
				ts.alsoIdx[r.Index] = true
			}
		}
	}
}

// newLane starts lane p's keeper: its outcomes and summary, fed first
// with the lane's prior results (a resumed study).
func (ts *tiledStudy) newLane(p Precision) *tiledLane {
	s, opt, total := ts.s, ts.opt, ts.total
	l := &tiledLane{kp: &keeper{best: NewTop(s.Objective, ts.keepN), also: ts.alsoIdx}}
	if ts.both || (ts.blocks != nil && p == ts.blockLane) {
		l.kp.out = newOutcomes(total)
		if ts.blocks != nil && p == ts.blockLane {
			l.kp.out.dd = make([]float64, total)
		}
		if pr := opt.Prior[p]; pr != nil {
			for i := range pr.Results {
				l.kp.out.set(&pr.Results[i])
			}
		}
	}
	if opt.Summary != nil {
		l.kp.sum = newSummariser(ts.whole, p, s.Objective, *opt.Summary)
		if pr := opt.Prior[p]; pr != nil {
			for i := range pr.Results {
				l.kp.sum.add(&pr.Results[i])
			}
		}
	}
	return l
}

// runTile runs lane p's study of tile t (before: the lane's combos of the
// tiles before it) and merges it into the lane; it returns the tile's
// combos evaluated and the tile's error.
func (ts *tiledStudy) runTile(ctx context.Context, l *tiledLane, p Precision, t tile, before int) (int, error) {
	sub := *ts.s
	sub.Grid, sub.Note, sub.Precisions, sub.wholeCombos = t.Grid, "", []Precision{p}, ts.s.computedCombos()
	if p != ts.blockLane || ts.blocks == nil {
		sub.Blocks = 0
	}
	to := ts.tileOptions(l, p, t)
	stop := ts.forwardProgress(&to, t, before)
	trep, err := runStudy(ctx, &sub, to, true)
	stop()
	// The tile's series are garbage now: collect them before the
	// next tile allocates its own, so that the heap holds one
	// tile's series at a time rather than growing to twice that
	// before the collector runs (GOGC).
	runtime.GC()
	n := 0
	if trep != nil {
		n = ts.mergeTile(l, p, t, trep)
	}
	return n, err
}

// tileOptions are the options of lane p's study of tile t: its prior
// results, and a sink that relabels the tile's results with the whole
// grid's index for the lane's keeper and opt.Sink.
func (ts *tiledStudy) tileOptions(l *tiledLane, p Precision, t tile) StudyOptions {
	whole, discard, opt := ts.whole, ts.discard, ts.opt
	to := StudyOptions{Discard: true, Keep: ts.keepN}
	if pr := opt.Prior[p]; pr != nil {
		if tp := priorOfTile(whole, t, pr); tp != nil {
			to.Prior = map[Precision]*Run{p: tp}
		}
	}
	to.Sink = func(_ Precision, rs []ComboResult) error {
		g := slices.Clone(rs)
		for i := range g {
			g[i].Index = t.global(whole, g[i].Index)
		}
		l.kp.add(g)
		if !discard {
			l.mu.Lock()
			l.full = append(l.full, g...)
			l.mu.Unlock()
		}
		if opt.Sink == nil {
			return nil
		}
		// A tile narrower than the grid holds several runs of
		// consecutive combos: one chunk each, as Sweep's are.
		for len(g) > 0 {
			k := 1
			for k < len(g) && g[k].Index == g[k-1].Index+1 {
				k++
			}
			if err := opt.Sink(p, g[:k:k]); err != nil {
				return err
			}
			g = g[k:]
		}
		return nil
	}
	return to
}

// forwardProgress routes the tile study's progress (to.Progress) to the
// study's, as events of the whole grid, on a goroutine of its own; the
// returned func closes the tile's channel and waits for the forwarder.
func (ts *tiledStudy) forwardProgress(to *StudyOptions, t tile, before int) (stop func()) {
	if ts.opt.Progress == nil {
		return func() {}
	}
	whole, total := ts.whole, ts.total
	var fwd sync.WaitGroup
	ch := make(chan Progress, 64)
	to.Progress = ch
	fwd.Add(1)
	go func(before int) {
		defer fwd.Done()
		for ev := range ch {
			ev.Done += before
			ev.Total = total
			if ev.Phase == PhaseDone && ev.Done < total {
				ev.Phase = PhaseCompute // the lane goes on in the next tile
			}
			if ev.Rate > 0 {
				ev.ETA = time.Duration(float64(total-ev.Done) / ev.Rate * float64(time.Second))
			}
			if ev.Best != nil {
				b := *ev.Best
				b.Index = t.global(whole, b.Index)
				ev.Best = &b
			}
			ts.send(ev)
		}
	}(before)
	return func() {
		close(ch)
		fwd.Wait()
	}
}

// mergeTile joins tile t's report into lane p and the whole grid's: its
// run's times and state, its per-block statistics, its note. It returns
// the tile's combos evaluated.
func (ts *tiledStudy) mergeTile(l *tiledLane, p Precision, t tile, trep *Report) int {
	n := 0
	if tr := trep.Run(p); tr != nil {
		mergeTileRun(l, tr, ts.whole)
		n = tr.Count()
	}
	if ts.blocks != nil && p == ts.blockLane {
		if trep.Blocks == nil {
			ts.blocksFilled = false
		} else {
			for c := 0; c < t.Grid.Len(); c++ {
				ts.blocks.CopyCombo(t.global(ts.whole, c), trep.Blocks, c)
			}
		}
	}
	if trep.Note != "" && !strings.Contains(ts.rep.Note, trep.Note) {
		ts.rep.Note = JoinNote(ts.rep.Note, trep.Note)
	}
	return n
}

// collectRuns adds each lane's run of the whole grid to the report, with
// its summary and its results (kept few, or all in grid order), marking
// a run that missed combos failed or cancelled.
func (ts *tiledStudy) collectRuns(ctx context.Context) {
	rep := ts.rep
	for _, p := range ts.s.Precisions {
		l := ts.lanes[p]
		if l == nil || l.run == nil {
			continue
		}
		run := l.run
		run.Summary = l.kp.summary()
		if ts.discard {
			l.kp.keep(run)
		} else {
			full := l.full
			slices.SortFunc(full, func(a, b ComboResult) int { return a.Index - b.Index })
			if pr := ts.opt.Prior[p]; pr != nil {
				full = mergeResults(pr.Results, full)
			}
			run.Results = full
		}
		if run.Count() < ts.total && run.Status == StatusComplete {
			run.Status, run.Err = StatusFailed, ts.runErr
			if ctx.Err() != nil {
				run.Status = StatusCancelled
			}
		}
		rep.Runs = append(rep.Runs, run)
	}
	rep.Note = JoinNote(rep.Note, rep.RunNotes())
}

// publishBlocks puts the whole grid's per-block statistics in the report
// when every tile produced its own, and calls opt.AfterBlocks.
func (ts *tiledStudy) publishBlocks() {
	rep := ts.rep
	if ts.blocks != nil && ts.blocksFilled && ts.runErr == nil {
		rep.Blocks, rep.BlocksOf = ts.blocks, ts.blockLane
		if ts.opt.AfterBlocks != nil {
			snap := *rep
			snap.Runs = []*Run{rep.Run(ts.blockLane)}
			ts.opt.AfterBlocks(&snap)
		}
	}
}

// parityReport compares the fp32 lane with the fp64 lane tile by tile
// (on a fresh context when the study was cancelled) and joins the tiles'
// reports into the whole grid's.
func (ts *tiledStudy) parityReport(ctx context.Context, ref, test *tiledLane) {
	rep := ts.rep
	pctx := ctx
	if ctx.Err() != nil {
		pctx = context.Background() // still explain what completed
	}
	var parts []*Parity
	compared := 0
	for _, t := range ts.tiles {
		par, note, ok, err := ts.tileParity(pctx, ref, test, t, compared)
		if err != nil {
			if ts.runErr == nil {
				ts.runErr = fmt.Errorf("parity: %w", err)
			}
			break
		}
		if !ok {
			continue
		}
		parts = append(parts, par)
		compared += par.CombosCompared
		if note != "" && !strings.Contains(rep.Note, note) {
			rep.Note = JoinNote(rep.Note, note)
		}
	}
	if len(parts) > 0 {
		incomplete := !ref.run.Complete() || !test.run.Complete() || len(parts) < len(ts.tiles)
		rep.Parity, rep.ParityOf = mergeParity(parts, incomplete), "fp32 vs fp64"
	}
}

// tileParity is tile t's parity report, its combos and flips relabelled
// with the whole grid's index (compared: the combos of the tiles before);
// ok is false when either lane has no combo in t.
func (ts *tiledStudy) tileParity(pctx context.Context, ref, test *tiledLane, t tile, compared int) (par *Parity, note string, ok bool, err error) {
	whole, total := ts.whole, ts.total
	sub := *ts.s
	sub.Grid, sub.wholeCombos = t.Grid, ts.s.computedCombos()
	tref, ttest := tileOutcomes(ref, whole, t), tileOutcomes(test, whole, t)
	if tref.Count() == 0 || ttest.Count() == 0 {
		return nil, "", false, nil
	}
	ts.send(Progress{Backend: test.run.Backend, Precision: FP32, Done: compared, Total: total, Elapsed: test.run.Elapsed, Phase: PhaseParity})
	runtime.GC() // the previous tile's series (see runTile)
	before := compared
	par, note, err = sub.parity(pctx, &IndicatorCache{}, tref, ttest, func(done int) {
		ts.send(Progress{Backend: test.run.Backend, Precision: FP32, Done: before + done, Total: total, Elapsed: test.run.Elapsed, Phase: PhaseParity})
	}, true) // mergeParity joins the tiles' rows
	if err != nil {
		return nil, "", false, err
	}
	for k := range par.Combos {
		par.Combos[k].Index = t.global(whole, par.Combos[k].Index)
	}
	for k := range par.Flips {
		par.Flips[k].Index = t.global(whole, par.Flips[k].Index)
	}
	return par, note, true, nil
}

// tileOutcomes is lane l's run restricted to tile t, as a kept run of the
// tile's grid whose outcomes are the lane's (the parity report's input).
func tileOutcomes(l *tiledLane, whole Grid, t tile) *Run {
	n := t.Grid.Len()
	o := newOutcomes(n)
	count := 0
	for c := 0; c < n; c++ {
		g := t.global(whole, c)
		if !l.kp.out.has.has(g) {
			continue
		}
		o.trades[c], o.ret[c] = l.kp.out.trades[g], l.kp.out.ret[g]
		o.has[c/64] |= 1 << (c % 64)
		count++
	}
	r := *l.run
	r.Grid, r.Results, r.Kept, r.Computed, r.outcomes, r.tradeHist = t.Grid, nil, true, count, o, nil
	if count == n {
		r.Status, r.Err = StatusComplete, nil
	} else if r.Status == StatusComplete {
		r.Status = StatusCancelled
	}
	return &r
}

// mergeTileRun adds tile tr's times and state to lane l's run of the
// whole grid (its results reached l's keeper through the sink).
func mergeTileRun(l *tiledLane, tr *Run, whole Grid) {
	if l.run == nil {
		r := *tr
		r.Grid, r.Results, r.Kept, r.Computed, r.outcomes, r.tradeHist = whole, nil, false, 0, nil, nil
		r.Prepare, r.Saving, r.Indicators, r.Elapsed = 0, 0, 0, 0
		l.run = &r
	}
	run := l.run
	run.Prepare += tr.Prepare
	run.Saving += tr.Saving
	run.Indicators += tr.Indicators
	run.Elapsed += tr.Elapsed
	if !tr.Complete() && run.Status == StatusComplete {
		run.Status, run.Err = tr.Status, tr.Err
	}
}

// mergeParity joins the parity reports of a study's tiles (each combo and
// flip already relabelled with the whole grid's index) into the whole
// grid's: the per-combo rows in grid order, every series' error once (a
// length several tiles share has one series), and the totals, worst flips
// and verdict recomputed over them as Compare does (Parity.finish). Each
// tile's worst flips are the worst of its combos (worse orders a tile's
// combos as the grid does), so the worst of theirs are the grid's.
func mergeParity(parts []*Parity, incomplete bool) *Parity {
	p := &Parity{Tolerance: parts[0].Tolerance, Incomplete: incomplete, Device: parts[0].Device}
	n := 0
	for _, q := range parts {
		n += len(q.Combos)
	}
	p.Combos = make([]ComboParity, 0, n)
	var flips []Flip
	var errs []SeriesError
	seen := map[SeriesError]bool{}
	for _, q := range parts {
		p.Incomplete = p.Incomplete || q.Incomplete
		// A strategy family with memory is judged as such (Parity.memory:
		// its sensitive combos pass), whichever part says so.
		p.memory = p.memory || q.memory
		p.Combos = append(p.Combos, q.Combos...)
		flips = append(flips, q.Flips...)
		for _, e := range q.IndicatorErrors {
			key := SeriesError{Series: e.Series, Length: e.Length}
			if !seen[key] {
				seen[key] = true
				errs = append(errs, e)
			}
		}
	}
	slices.SortFunc(p.Combos, func(a, b ComboParity) int { return a.Index - b.Index })
	// Compare's order before it sorts by error: HMA series, then HMA3,
	// each in grid order (ascending lengths).
	slices.SortFunc(errs, func(a, b SeriesError) int {
		if a.Series != b.Series {
			return strings.Compare(a.Series, b.Series) // "h" < "h3"
		}
		return a.Length - b.Length
	})
	p.CombosCompared = len(p.Combos)
	p.setIndicatorErrors(errs)
	p.finish(flips)
	return p
}
