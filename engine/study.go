package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"sweepbench/engine/data"
	"sweepbench/engine/text"
)

// Study is one user request made ready to run: a dataset, a grid, the
// sweep parameters, the precisions to run and the backend, run by RunStudy
// as one sweep per precision (fp64 first) followed by the parity report
// when both ran. It is built from a Spec by Spec.Study (the CLI, the TUI,
// resume: one way); RunStudy is the only code that runs it.
type Study struct {
	// Spec is the description the study was built from (saved with a
	// session; resume builds the study again from it).
	Spec       Spec
	Note       string // what is known before it runs (what auto picked, a fee that looks like a percentage)
	Dataset    *data.Dataset
	Grid       Grid
	Params     Params
	Precisions []Precision // e.g. {FP64, FP32}
	WMA        Formulation // applies to fp32; fp64 is always Direct
	Backend    Backend
	// Fallback runs the lanes Backend cannot (PrecisionSupport): the fp64
	// reference lane of an fp32-only GPU. nil: such a lane is an error.
	Fallback  Backend
	Tolerance float64 // borderline margin; 0 = DefaultBorderline
	// Objective orders the report's top lists and the combos a kept run
	// keeps (the zero value: Sharpe, unconstrained).
	Objective Objective
	// Blocks, when > 0, asks the reference lane (fp64, else the first)
	// for per-block statistics over that many contiguous blocks of bar
	// returns (BlockBounds): Report.Blocks, the robustness statistics'
	// input. Not on a resumed study (its saved combos have none).
	Blocks int
	// wholeCombos is the untiled study's computed combos (its distinct
	// grid) in a tile's study (runTiled), 0 otherwise: Job.StudyCombos.
	wholeCombos int
}

// computedCombos is how many combos the study computes (its distinct
// grid), the untiled study's when s is one tile of it.
func (s *Study) computedCombos() int {
	if s.wholeCombos > 0 {
		return s.wholeCombos
	}
	return s.Grid.Distinct().Len()
}

// StudyOptions route a study's events.
type StudyOptions struct {
	// Progress receives each lane's events without blocking (see SweepOptions).
	Progress chan<- Progress
	// Sink receives each completed chunk of a run, tagged with its precision.
	Sink func(Precision, []ComboResult) error
	// Prior holds, per precision, results computed earlier (a resumed
	// session): their combos are not computed again, they join the run
	// of their precision in the report, and the parity report covers
	// them. A prior run that is complete is not run at all.
	Prior map[Precision]*Run
	// Discard keeps no run's full results in the report, so that memory
	// does not grow with the grid: results go to Sink as they come, and
	// each run keeps (Run.Kept) its best Keep combos by Sharpe (0:
	// DefaultKeep) and, in the fp32 run, the fp64 run's best, for the
	// side-by-side table; Run.Computed counts them all. The parity report
	// is built from each combo's trade count and total return, kept
	// compactly (12 bytes a combo a lane). Ignored on a resumed study
	// (Prior), whose saved results are in memory already.
	Discard bool
	Keep    int
	// AfterBlocks, when set, is called once the run that emits the
	// per-block statistics (Study.Blocks) has completed, with a report
	// that holds that run and Report.Blocks (and not yet the other runs
	// or the parity report). Untiled, it runs on a goroutine of its own
	// while the other lane and the parity report go on; tiled, after the
	// last tile. RunStudy returns only after it has returned. It is how
	// the robustness statistics (engine/robust) run beside the rest of a
	// study: the run path (sessions.RunStudy) sets it, no front end.
	// Not called when the statistics are incomplete.
	AfterBlocks func(rep *Report)
	// Summary, when set, has each run build its Summary (Run.Summary: the
	// top lists and heatmaps of every metric, in memory bounded by these
	// options, not by the grid) from its chunks as they stream to Sink,
	// whether or not the run keeps its results (Discard). A resumed
	// study's prior results are summarised with the new ones.
	Summary *SummaryOptions
	// NoParityRows leaves the parity report's per-combo rows out
	// (Parity.Combos nil; its figures, verdict, worst combos and flips
	// are the same), so that it does not grow with the grid: for a front
	// end that prints or writes only those (the table, Parquet's
	// metadata) and saves no session (the sessions store keeps the
	// rows). A study run in tiles keeps them (its tiles' reports are
	// joined row by row).
	NoParityRows bool
	// Results, with Discard, is where the lanes' results slices come
	// from (SweepOptions.Results): a sink that is the last to hold the
	// chunks recycles them. nil: each is made.
	Results func(n int) []ComboResult
}

// Report is what a study produced: the dataset, the parameters, each run and
// the parity report (nil unless an fp64 and an fp32 run both produced results).
type Report struct {
	Dataset data.Info
	Params  Params
	Grid    Grid
	WMA     Formulation
	Backend string
	// Note is what the report says beside the numbers: the study's own
	// note (what auto picked), a lane run on the fallback, too few trades
	// to annualise. Saved with a session and printed by show.
	Note    string
	Created time.Time
	Runs    []*Run
	// Requested are the precisions the study asked for, in order; one
	// without a run in Runs never started (the study stopped before it).
	Requested []Precision
	Parity    *Parity
	ParityOf  string // "fp32 vs fp64"
	// Blocks are the per-block statistics of BlocksOf's run, every combo
	// of the grid (Study.Blocks); nil when not asked for or not complete.
	Blocks   *BlockStats
	BlocksOf Precision
	// Objective orders the top lists of the report's table (the zero
	// value: Sharpe, unconstrained).
	Objective Objective
	// BuyHold is the study's bars' buy-and-hold return (BuyHoldReturn, a
	// fraction): the benchmark the front ends print beside the combos;
	// NaN when not known (a session saved before it was recorded).
	BuyHold float64
	// Robustness is the study's robustness summary as JSON (engine/robust's
	// Summary, set by the run path that computed it, sessions.RunStudy; a
	// saved session keeps it): the JSON report carries it under "robustness" and a Parquet file
	// in its metadata. Empty when none was computed.
	Robustness json.RawMessage
}

// Complete reports whether every requested run started and completed.
func (r *Report) Complete() bool {
	for _, run := range r.Runs {
		if !run.Complete() {
			return false
		}
	}
	return len(r.Runs) > 0 && len(r.NotStarted()) == 0
}

// NotStarted lists the requested precisions that have no run: the study
// stopped (a cancel, an error) before their lanes began.
func (r *Report) NotStarted() []Precision {
	var out []Precision
	for _, p := range r.Requested {
		if r.Run(p) == nil {
			out = append(out, p)
		}
	}
	return out
}

// Run returns the run of precision p, or nil.
func (r *Report) Run(p Precision) *Run {
	for _, run := range r.Runs {
		if run.Precision == p {
			return run
		}
	}
	return nil
}

// Validate checks the study before anything runs, with errors naming the
// parameter.
func (s *Study) Validate() error {
	if s.Dataset == nil {
		return &FieldError{Field: FieldData, Err: errors.New("no dataset loaded")}
	}
	if s.Backend == nil {
		return &FieldError{Field: FieldBackend, Err: errors.New("none selected")}
	}
	if len(s.Precisions) == 0 {
		return &FieldError{Field: FieldPrecision, Err: errors.New("nothing to run")}
	}
	if err := s.Grid.Validate(0); err != nil {
		return err
	}
	if err := s.Grid.Validate(s.Dataset.Bars.Len()); err != nil {
		name := s.Dataset.Info.Name
		if tf := s.Dataset.Info.Timeframe; tf != "" {
			name += fmt.Sprintf(" resampled to %s (%s bars from %s)", tf, text.Thousands(s.Dataset.Bars.Len()), text.Thousands(s.Dataset.Info.SourceBars))
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := s.Grid.CheckParams(s.Params, s.WMA); err != nil {
		return err
	}
	if b := &s.Dataset.Bars; s.Params.Fill == FillNextOpen && len(b.Open) != b.Len() {
		return &FieldError{Field: FieldFill, Value: s.Params.Fill.String(), Err: fmt.Errorf("%s has no open prices (closes only), and next-open enters at the next bar's open: use close with these bars", s.Dataset.Info.Name)}
	}
	return s.Params.Validate()
}

// job is the study's job in precision p. The fp64 reference is always the
// direct sum (SPEC "WMA formulations"); the formulation applies to fp32.
func (s *Study) job(p Precision, cache *IndicatorCache) *Job {
	form := s.WMA
	if p == FP64 {
		form = Direct
	}
	return &Job{Bars: &s.Dataset.Bars, Grid: s.Grid, Params: s.Params, Precision: p, WMA: form, Cache: cache, StudyCombos: s.wholeCombos}
}

// RunStudy runs every precision of s in order, then the parity report when
// an fp64 and an fp32 run exist. It is the only code that runs a study: a
// new one, and a resumed one (opt.Prior: the saved results, which are not
// computed again and which the parity report covers like the rest). On
// cancellation or a backend failure the report holds what completed (runs
// marked cancelled/failed) and the error is returned with it; a later
// precision is not started after a failure.
//
// The fp64 lane is always the direct formulation (SPEC "WMA
// formulations"), whatever s.WMA says and whichever backend runs it. A study
// whose memory forecast (ForecastMemory) exceeds what the system has
// available is refused with *MemoryError before anything is allocated.
//
// A study whose indicator series exceed the series budget runs in tiles
// (SeriesBudgetEnv, runTiled): the report is the same, combo for combo.
func RunStudy(ctx context.Context, s *Study, opt StudyOptions) (*Report, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	discard := opt.Discard && len(opt.Prior) == 0
	if err := checkMemory(s, discard); err != nil {
		return nil, err
	}
	tiles, budget, err := s.tiles(discard)
	if err != nil {
		return nil, err
	}
	if len(tiles) > 1 {
		return runTiled(ctx, s, opt, tiles, budget)
	}
	return runStudy(ctx, s, opt, false)
}

// runStudy is RunStudy's work on one tile (the whole grid, or one tile of
// it when inTile: then the report's note leaves out what runTiled says of
// the whole grid).
func runStudy(ctx context.Context, s *Study, opt StudyOptions, inTile bool) (*Report, error) {
	st := newStudyRun(s, opt)
	defer st.after.Wait()
	if err := st.blockBounds(); err != nil {
		return nil, err
	}
	for _, p := range s.Precisions {
		if !st.lane(ctx, p) {
			break
		}
	}
	if !inTile {
		st.rep.Note = JoinNote(st.rep.Note, st.rep.RunNotes())
	}
	st.parityReport(ctx)
	return st.rep, st.runErr
}

// studyRun is the state runStudy's phases share: the report being built,
// the lanes' common cache and what a lane tells the next.
type studyRun struct {
	s         *Study
	opt       StudyOptions
	rep       *Report
	cache     *IndicatorCache
	runErr    error
	discard   bool
	keepN     int
	after     sync.WaitGroup // AfterBlocks
	keepAlso  map[int]bool   // the fp64 run's best, kept in the fp32 run too
	bothLanes bool
	bounds    []int     // the per-block statistics' block edges; nil when not asked for
	blockLane Precision // the lane that emits them
}

// newStudyRun starts s's report and settles what every lane needs.
func newStudyRun(s *Study, opt StudyOptions) *studyRun {
	st := &studyRun{s: s, opt: opt, rep: newReport(s), cache: &IndicatorCache{}}
	st.discard = opt.Discard && len(opt.Prior) == 0
	st.keepN = opt.Keep
	if st.keepN <= 0 {
		st.keepN = DefaultKeep
	}
	st.bothLanes = slices.Contains(s.Precisions, FP64) && slices.Contains(s.Precisions, FP32)
	st.blockLane = s.Precisions[0]
	if slices.Contains(s.Precisions, FP64) {
		st.blockLane = FP64
	}
	return st
}

// blockBounds computes the block edges when the study asks for per-block
// statistics (not on a resumed study).
func (st *studyRun) blockBounds() error {
	s := st.s
	if s.Blocks > 0 && len(st.opt.Prior) == 0 {
		var err error
		if st.bounds, err = BlockBounds(s.Dataset.Bars.Len(), s.Blocks); err != nil {
			return err
		}
	}
	return nil
}

// lane runs the study's precision p (or takes its complete prior run) and
// adds it to the report; false when the study stops there.
func (st *studyRun) lane(ctx context.Context, p Precision) bool {
	s := st.s
	prior := st.opt.Prior[p]
	if prior != nil && prior.Complete() && len(prior.Results) == s.Grid.Len() {
		st.reusePrior(p, prior)
		return true
	}
	be, err := s.backendFor(p)
	if err != nil {
		st.runErr = err
		return false
	}
	so, kp := st.sweepOptions(p, prior)
	job := s.job(p, st.cache)
	var bs *BlockStats
	if st.bounds != nil && p == st.blockLane {
		bs = NewBlockStats(s.Grid.Len(), st.bounds)
		job.Blocks, so.Blocks = st.bounds, bs
	}
	run, err := Sweep(ctx, be, job, so)
	st.addRun(p, run, bs, kp, prior)
	st.startAfterBlocks(p, run)
	if err != nil {
		st.runErr = err
		return false
	}
	return true
}

// reusePrior adds a complete prior run of p to the report as it is (with
// its summary when the study asks for one).
func (st *studyRun) reusePrior(p Precision, prior *Run) {
	s, opt := st.s, st.opt
	if opt.Summary != nil {
		kp := &keeper{best: NewTop(s.Objective, st.keepN), sum: newSummariser(s.Grid, p, s.Objective, *opt.Summary)}
		kp.add(prior.Results)
		r := *prior
		r.Summary = kp.summary()
		prior = &r
	}
	st.rep.Runs = append(st.rep.Runs, prior)
}

// sweepOptions are lane p's SweepOptions: its sink, the keeper that keeps
// what a discarding or summarising run keeps (nil otherwise), and the
// combos a resumed lane skips.
func (st *studyRun) sweepOptions(p Precision, prior *Run) (SweepOptions, *keeper) {
	s, opt, discard := st.s, st.opt, st.discard
	so := SweepOptions{Progress: opt.Progress}
	if opt.Sink != nil {
		so.Sink = func(rs []ComboResult) error { return opt.Sink(p, rs) }
	}
	var kp *keeper
	if discard || opt.Summary != nil {
		kp = &keeper{best: NewTop(s.Objective, st.keepN), also: st.keepAlso}
		if discard && (st.bothLanes || (st.bounds != nil && p == st.blockLane)) {
			kp.out = newOutcomes(s.Grid.Len())
		}
		if discard && st.bounds != nil && p == st.blockLane {
			kp.out.dd = make([]float64, s.Grid.Len()) // the robustness constraints' max drawdown
		}
		if opt.Summary != nil {
			kp.sum = newSummariser(s.Grid, p, s.Objective, *opt.Summary)
			if prior != nil {
				kp.add(prior.Results)
			}
		}
		next := so.Sink
		// The keeper copies what it keeps: with no other sink, the
		// lane's results slice can be reused chunk after chunk.
		so.SinkCopies = next == nil
		so.Results = opt.Results
		so.Discard, so.Sink = discard, func(rs []ComboResult) error {
			kp.add(rs)
			if next != nil {
				return next(rs)
			}
			return nil
		}
	}
	if prior != nil {
		done := priorSet(prior, s.Grid.Len())
		so.Skip = done.has
	}
	return so, kp
}

// addRun adds lane p's run to the report: its block statistics when it
// completed, what it keeps, its summary and its prior results.
func (st *studyRun) addRun(p Precision, run *Run, bs *BlockStats, kp *keeper, prior *Run) {
	s, rep := st.s, st.rep
	if bs != nil && run != nil && run.Complete() {
		rep.Blocks, rep.BlocksOf = bs, p
	}
	if run != nil && kp != nil && st.discard {
		kp.keep(run)
		if p == FP64 {
			st.keepAlso = map[int]bool{}
			for _, r := range TopBy(run, s.Objective, st.keepN) {
				st.keepAlso[r.Index] = true
			}
		}
	}
	if run != nil {
		if kp != nil {
			run.Summary = kp.summary()
		}
		if prior != nil {
			// Prepare and Elapsed stay this process's own.
			run.Results = mergeResults(prior.Results, run.Results)
		}
		rep.Runs = append(rep.Runs, run)
	}
}

// startAfterBlocks calls opt.AfterBlocks on a goroutine of its own once
// lane p has emitted the report's per-block statistics.
func (st *studyRun) startAfterBlocks(p Precision, run *Run) {
	rep, opt := st.rep, st.opt
	if opt.AfterBlocks != nil && rep.Blocks != nil && rep.BlocksOf == p {
		snap := *rep
		snap.Runs = []*Run{run}
		st.after.Add(1)
		go func() {
			defer st.after.Done()
			opt.AfterBlocks(&snap)
		}()
	}
}

// sendParity sends a parity progress event of test without blocking.
func (st *studyRun) sendParity(test *Run, done int) {
	if st.opt.Progress != nil {
		select {
		case st.opt.Progress <- Progress{Backend: test.Backend, Precision: FP32, Done: done, Total: test.Grid.Len(),
			Elapsed: test.Elapsed, Phase: PhaseParity}:
		default:
		}
	}
}

// parityReport compares the fp32 run with the fp64 run when both have
// results (on a fresh context when the study was cancelled).
func (st *studyRun) parityReport(ctx context.Context) {
	rep := st.rep
	ref, test := rep.Run(FP64), rep.Run(FP32)
	if ref == nil || test == nil || ref.Count() <= 0 || test.Count() <= 0 {
		return
	}
	// The comparison (traces of the flipped combos) takes a moment
	// on large grids: say so rather than go quiet.
	st.sendParity(test, 0)
	pctx := ctx
	if ctx.Err() != nil {
		// Cancelled: still explain what completed, on a fresh context.
		pctx = context.Background()
	}
	progress := func(done int) { st.sendParity(test, done) }
	par, note, err := st.s.parity(pctx, st.cache, ref, test, progress, !st.opt.NoParityRows)
	if err != nil && st.runErr == nil {
		st.runErr = fmt.Errorf("parity: %w", err)
	}
	rep.Parity, rep.ParityOf = par, "fp32 vs fp64"
	rep.Note = JoinNote(rep.Note, note)
}

// ParityEnv, set to "cpu", makes RunStudy build the parity report on the
// CPU even when a ParityDevice ran both lanes, and set to "device", on the
// device even for a small grid (to time or check one path against the
// other; the reports are the same).
const ParityEnv = "SWEEPBENCH_PARITY"

// DeviceParityMinCombos: below this many combos RunStudy builds the parity
// report on the CPU even when the lanes ran on a ParityDevice. The device
// pass gives each combo one thread that walks every bar, so a small grid
// leaves the GPU idle and waits on one thread's latency (80 combos x
// 150,000 bars: ~0.1 s on an H200), while the CPU's cores, given the
// device's series, take milliseconds.
const DeviceParityMinCombos = 4096

// parity builds the study's parity report: on the device when one
// ParityDevice backend ran both lanes and both are complete
// (CompareOnDevice), else on the CPU from the lanes' series (taken from the
// device when it computes them: SeriesDevice). A device pass that fails
// falls back to the CPU, whose report is the same, and says so in note.
//
// progress, when set, is told how many combos the CPU pass has compared
// (ParityInput.Progress); the device pass reports none. rows false leaves
// the per-combo rows out (StudyOptions.NoParityRows).
func (s *Study) parity(ctx context.Context, cache *IndicatorCache, ref, test *Run, progress func(done int), rows bool) (par *Parity, note string, err error) {
	b64, err64 := s.backendFor(FP64)
	bT, errT := s.backendFor(test.Precision)
	dev, ok := b64.(ParityDevice)
	small := s.computedCombos() < DeviceParityMinCombos && os.Getenv(ParityEnv) != "device"
	if ok && s.Grid.Strategy == nil && err64 == nil && errT == nil && b64 == bT && ref.Complete() && test.Complete() && !small && os.Getenv(ParityEnv) != "cpu" {
		par, err := compareOnDevice(ctx, dev, s.job(FP64, cache), ref, test, s.Tolerance, rows)
		if err == nil || ctx.Err() != nil {
			return par, "", err
		}
		note = fmt.Sprintf("parity on %s failed (%v): computed on the CPU", b64.Name(), err)
	}
	if sdev, ok := b64.(StrategyParityDevice); ok && s.Grid.Strategy != nil && s.runsPairs() && err64 == nil && errT == nil && b64 == bT &&
		ref.Complete() && test.Complete() && !small && os.Getenv(ParityEnv) != "cpu" {
		par, err := CompareStrategyOnDevice(ctx, sdev, s.job(FP64, cache), ref, test, s.Tolerance)
		if err == nil && !rows {
			par.Combos = nil // folded into the figures already (Parity.build without keep)
		}
		if err == nil || ctx.Err() != nil {
			return par, "", err
		}
		if !errors.Is(err, ErrNoStrategyParity) {
			note = fmt.Sprintf("parity on %s failed (%v): computed on the CPU", b64.Name(), err)
		}
	}
	s.deviceSeries(ctx, cache)
	par, err = compareRuns(ctx, s.job(FP64, cache), ref, test, s.Tolerance, progress, rows)
	return par, note, err
}

// deviceSeries puts in cache the indicator series of each lane whose
// backend computes them on its device (SeriesDevice), so that the parity
// report does not compute them again on the CPU. A device that fails here
// only costs that: the report computes the series itself.
func (s *Study) deviceSeries(ctx context.Context, cache *IndicatorCache) {
	if s.Grid.Strategy != nil {
		return // a strategy grid's parity reads its own series cache
	}
	for _, p := range []Precision{FP64, FP32} {
		be, err := s.backendFor(p)
		dev, ok := be.(SeriesDevice)
		if err != nil || !ok {
			continue
		}
		job := s.job(p, cache)
		_, _ = cache.Load(SeriesKey{Precision: p, WMA: job.WMA}, func() (any, error) {
			if p == FP64 {
				return dev.Indicators64(ctx, job)
			}
			return dev.Indicators32(ctx, job)
		})
	}
}

// indexSet is a set of grid indices.
type indexSet []uint64

func (b indexSet) has(i int) bool { return i >= 0 && i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

// priorSet is the set of combos run holds results for.
func priorSet(run *Run, n int) indexSet {
	b := make(indexSet, (n+63)/64)
	for i := range run.Results {
		if ix := run.Results[i].Index; ix >= 0 && ix < n {
			b[ix/64] |= 1 << (ix % 64)
		}
	}
	return b
}

// mergeResults joins two result lists, each in grid order and disjoint,
// into one in grid order.
func mergeResults(a, b []ComboResult) []ComboResult {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]ComboResult, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i].Index <= b[j].Index {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// RunNotes is what the report's results call for a note on: the median
// combo of the first run made fewer than 30 trades, so its annualised
// ratios are noise. RunStudy adds it to the report's note; a report read
// back from the sessions store derives it again from the saved results.
func (r *Report) RunNotes() string {
	if len(r.Runs) == 0 {
		return ""
	}
	if n := medianTradesBelow(r.Runs[0], fewTrades); n >= 0 && n < fewTrades {
		return fmt.Sprintf("the median combo made %d trades: Sharpe, Sortino and CAGR annualised from so few are noise (more bars, or shorter lengths)", n)
	}
	return ""
}

// FallbackNote says which lanes of s run on its fallback backend (the
// fp64 lane of an fp32-only GPU); "" when none does. Part of the note
// Spec.Study gives a study, known before it runs.
func (s *Study) FallbackNote() string {
	note := ""
	if why := s.referenceOnly(); why != "" && s.Backend != nil && s.Fallback != nil && s.Backend != s.Fallback {
		what, with, _ := strings.Cut(why, " with ") // "zscore with stops": a zscore kernel with stops
		if with != "" {
			with = " with " + with
		}
		return fmt.Sprintf("%s has no %s kernel%s yet: every lane runs on %s", s.Backend.Name(), what, with, s.Fallback.Name())
	}
	for _, p := range s.Precisions {
		if be, err := s.backendFor(p); err == nil && be != s.Backend {
			note = JoinNote(note, fmt.Sprintf("%s has no %s: the %s lane runs on %s", s.Backend.Name(), p, p, be.Name()))
		}
	}
	return note
}

// fewTrades: below this median trade count per combo a report warns that
// its annualised ratios rest on too few trades to mean much.
const fewTrades = 30

// medianTradesBelow is the lower median of the run's trade counts when it
// is below limit, else limit; -1 when the run has no results. One pass of
// counting, no sort: a GPU run has a million combos. A kept run
// (StudyOptions.Discard) counted them as they streamed by.
func medianTradesBelow(run *Run, limit int) int {
	counts := run.tradeHist
	if counts == nil {
		counts = make([]int, limit+1)
		for i := range run.Results {
			counts[min(max(run.Results[i].TotalTrades, 0), limit)]++
		}
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return -1
	}
	rank, seen := (n-1)/2, 0 // the lower median is the value at rank (n-1)/2
	for t, c := range counts[:min(limit, len(counts))] {
		if seen += c; seen > rank {
			return t
		}
	}
	return limit
}

// backendFor picks the backend of a precision lane: the study's, or its
// fallback when the study's cannot compute that precision.
func (s *Study) backendFor(p Precision) (Backend, error) {
	if why := s.referenceOnly(); why != "" && s.Fallback != nil && s.Backend != s.Fallback && s.Backend.Name() != "reference" {
		// Only the CPU reference computes a strategy family, an execution
		// option beyond slippage, or the trade metrics, until the GPU
		// kernels for SPEC Part 2 exist. (A study without a fallback runs
		// on the backend it was given: Spec.Study always sets the
		// reference as the fallback of a GPU backend.)
		return s.Fallback, nil
	}
	ps, ok := s.Backend.(PrecisionSupport)
	if !ok {
		return s.Backend, nil
	}
	err := ps.Supports(p)
	if err == nil {
		return s.Backend, nil
	}
	if s.Fallback == nil {
		return nil, &FieldError{Field: FieldBackend, Value: s.Backend.Name(), Err: err}
	}
	return s.Fallback, nil
}

// runsPairs reports whether s's backend runs its strategy grid as pairs
// of series (PairStrategy, PairRunner): a crossover without stops, and no
// per-block statistics (the GPU's block pass reads hull's series).
func (s *Study) runsPairs() bool {
	ps, ok := s.Grid.Strategy.(PairStrategy)
	pr, ok2 := s.Backend.(PairRunner)
	return ok && ok2 && pr.RunsPairs() && ps.PairsOK(s.Params) && s.Blocks == 0
}

// pairsWithout is what keeps a strategy grid that a GPU backend runs from
// pairs (PairRunner) on the reference, as the fallback note's words
// (" with stops"): "" when the backend takes no pairs at all, or the
// family has no GPU form.
func (s *Study) pairsWithout() string {
	ps, ok := s.Grid.Strategy.(PairStrategy)
	pr, ok2 := s.Backend.(PairRunner)
	if !ok || !ok2 || !pr.RunsPairs() {
		return ""
	}
	switch {
	case s.Params.Fill == FillNextOpen:
		return " with fill next-open"
	case s.Blocks > 0:
		return " with --blocks"
	case ps.FastBelowSlow():
		return " with --fast-below-slow"
	case !ps.PairsOK(s.Params):
		return " with stops"
	}
	return ""
}

// referenceOnly is what of s only the CPU reference computes today (SPEC
// Part 2): a strategy family other than hull (its name) or fill
// next-open; "" when a GPU lane can compute all of s. Slippage, the
// risk-free rate and every metric (TradeMetrics included) are not among
// them: the GPU kernels take engine.Keep and the rate per bar, and keep
// the trade accumulators (kernels.Raw).
func (s *Study) referenceOnly() string {
	switch {
	case s.Grid.Strategy != nil && !s.runsPairs():
		return s.Grid.Family() + s.pairsWithout()
	case s.Params.Fill == FillNextOpen:
		return "fill next-open"
	}
	return ""
}

// OnReference reports whether every lane of s runs on the CPU reference:
// its backend is the reference, or s asks what only the reference
// computes (a strategy family, fill next-open, a risk-free rate, a trade
// metric's objective) and its fallback is the reference.
func (s *Study) OnReference() bool {
	if s.Backend != nil && s.Backend.Name() == "reference" {
		return true
	}
	return s.referenceOnly() != "" && s.Fallback != nil && s.Fallback.Name() == "reference"
}

// JoinNote joins two notes with "; ", skipping empty ones.
func JoinNote(a, b string) string {
	if b == "" {
		return a
	}
	if a == "" {
		return b
	}
	return a + "; " + b
}

// TopBySharpe returns up to k results of run sorted by Sharpe, descending
// (NaN last), ties by grid order: TopBy with the zero Objective.
func TopBySharpe(run *Run, k int) []ComboResult { return TopBy(run, Objective{}, k) }

// Lookup returns the result of combo index in run, or nil (binary search:
// Results are in grid order).
func (r *Run) Lookup(index int) *ComboResult {
	i := sort.Search(len(r.Results), func(i int) bool { return r.Results[i].Index >= index })
	if i < len(r.Results) && r.Results[i].Index == index {
		return &r.Results[i]
	}
	return nil
}

// newReport starts s's report: its dataset, parameters, grid, note and
// the precisions it asked for, no run yet.
func newReport(s *Study) *Report {
	return &Report{Dataset: s.Dataset.Info, Params: s.Params, Grid: s.Grid, WMA: s.WMA, Note: s.Note,
		Backend: s.Backend.Name(), Created: time.Now().UTC(), Requested: append([]Precision(nil), s.Precisions...), Objective: s.Objective,
		BuyHold: BuyHoldReturn(&s.Dataset.Bars)}
}
