package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// ComboResult is one evaluated combo: its grid index, lengths and metrics.
type ComboResult struct {
	Index int // position in the grid, HMA-major
	Combo
	Metrics
}

// Status is a run's final state.
type Status string

const (
	StatusComplete  Status = "complete"
	StatusCancelled Status = "cancelled" // stopped by the user; Results hold what completed
	StatusFailed    Status = "failed"    // a backend error; Results hold what completed
	// StatusInterrupted is never a Run's Status: a run cancelled by an
	// *Interrupted (SIGTERM, a hang-up) is StatusCancelled, and reads as
	// interrupted in reports and results files (Run.Shown), as the
	// sessions store records it.
	StatusInterrupted Status = "interrupted"
)

// Run is the outcome of one sweep in one precision on one backend.
type Run struct {
	Backend   string
	Device    string
	Precision Precision
	WMA       Formulation
	Grid      Grid
	Status    Status
	Err       error         // why it is not complete; nil when complete
	Prepare   time.Duration // shared indicators, uploads, kernel load
	Saving    time.Duration // spent in SweepOptions.Sink (the sessions store), inside Elapsed
	// Indicators is the device's own indicator time when the kernel
	// reports one (IndicatorTimer); 0 otherwise.
	Indicators time.Duration
	Elapsed    time.Duration // wall time, Prepare included
	// Results in grid-index order. When Status is not complete, only the
	// combos that completed are present (holes omitted): check Index.
	// When Kept is set, only the kept few are (StudyOptions.Discard).
	Results []ComboResult
	// Kept is set when the run's results went to the study's sink and
	// only a bounded selection stayed in Results (StudyOptions.Discard):
	// Computed then counts every combo it evaluated.
	Kept     bool
	Computed int
	// outcomes are a kept run's per-combo trade counts and total returns,
	// what the parity report needs of every combo (nil otherwise).
	outcomes *outcomes
	// tradeHist counts a kept run's combos by trade count, those with
	// fewTrades or more in the last slot (RunNotes' median).
	tradeHist []int
	// Summary is the run's results in bounded memory (top lists and
	// heatmaps per metric), built as they streamed when the study asked
	// for it (StudyOptions.Summary) or read back from a store
	// (Summariser); nil otherwise.
	Summary *Summary
}

// Complete reports whether every combo of the grid was evaluated.
func (r *Run) Complete() bool { return r.Status == StatusComplete }

// Count is how many combos the run evaluated: len(Results), or Computed
// for a run whose results were not kept (Kept).
func (r *Run) Count() int {
	if r.Kept {
		return r.Computed
	}
	return len(r.Results)
}

// CombosPerSecond is the end-to-end rate over Elapsed.
func (r *Run) CombosPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Count()) / r.Elapsed.Seconds()
}

// Progress is a sweep's state, sent at most every SweepOptions.Every.
type Progress struct {
	Backend   string
	Precision Precision
	Done      int           // combos evaluated (PhaseParity: combos compared so far)
	Total     int           // combos in the grid
	Rate      float64       // combos per second since compute started
	Elapsed   time.Duration // since the sweep started
	ETA       time.Duration // estimated time left; 0 when unknown
	Phase     Phase
	Best      *ComboResult // best Sharpe so far; nil before the first chunk
}

// Phase is where a sweep (or a study) is.
type Phase string

const (
	PhasePrepare Phase = "prepare" // uploads, shared indicators, kernel load
	PhaseCompute Phase = "compute" // combos being evaluated
	PhaseDone    Phase = "done"    // the sweep ended (complete or not)
	PhaseParity  Phase = "parity"  // RunStudy: the fp32 vs fp64 comparison runs
	// After RunStudy, in the front ends: the robustness statistics
	// (PBO, DSR, walk-forward) are computed, and the session is finished
	// in the sessions store (its last batches, its parity report).
	PhaseRobustness Phase = "robustness"
	PhaseSaving     Phase = "saving"
)

// SweepOptions configure Sweep. The zero value collects results and sends
// no progress.
type SweepOptions struct {
	// Progress receives events, never blocking: an event is dropped when the
	// channel is full. Sweep does not close it.
	Progress chan<- Progress
	// Every throttles progress events (default 50ms: <= 20 per second).
	Every time.Duration
	// Sink, when set, receives each completed chunk in completion order
	// (e.g. to write it to the sessions store). An error from Sink stops
	// the sweep and is returned.
	Sink func([]ComboResult) error
	// Discard drops results after Sink has seen them (a huge grid streamed
	// to a store); Run.Results then stays empty.
	Discard bool
	// SinkCopies says that Sink keeps nothing of the slice it is handed
	// once it returns (it copies what it keeps: a keeper): with Discard,
	// each lane then labels its chunks into one slice of its own, reused,
	// rather than allocating a chunk's results (2^19 x 216 bytes a GPU
	// chunk) every time.
	SinkCopies bool
	// Results, with Discard, is where a lane's results slices come from
	// when it does not reuse one (SinkCopies): a sink that is the last to
	// hold them hands back those it has finished with (the streamed rows
	// file's writer, output.RowWriter.Results), so that a GPU sweep does
	// not leave a chunk's results (2^19 x 216 bytes) to the collector
	// every time. Called from every lane's goroutine. nil: each is made.
	Results func(n int) []ComboResult
	// Blocks receives every combo's per-block statistics (the grid's
	// combos, over Job.Blocks) when the job asks for blocks; nil otherwise.
	Blocks *BlockStats
	// Skip, when set, reports combos already done (a resumed run); they are
	// neither computed nor counted in Run.Results. A combo done whose HMA3
	// twin (Grid.Distinct) is not is computed with it, and only the twin
	// is reported.
	Skip func(index int) bool
	// everyCombo has the kernel compute every combo, HMA3 twins included
	// (no Grid.Distinct): the bench ladder times each method on the whole
	// grid, so that its rungs and the figures recorded before stay
	// comparable.
	everyCombo bool
}

// Sweep evaluates every combo of job on backend b. Chunks of combos are
// pulled by Kernel.Lanes() goroutines; results are assembled in grid order.
// When ctx is cancelled, what completed is returned with Status cancelled
// and the error context.Canceled; a backend error returns what completed
// with Status failed and the error. A panic inside a backend becomes an error.
//
// The backend is given job on its distinct grid (Grid.Distinct): an HMA3
// range of step 1 holds twins, lengths 2p and 2p+1 whose combos are one
// backtest, and each is computed once and reported under both combos
// (labelled with their own index and lengths) before Sink, progress and
// Run.Results see it. Progress, Skip and Results speak of job.Grid's combos.
func Sweep(ctx context.Context, b Backend, job *Job, opt SweepOptions) (_ *Run, retErr error) {
	w, err := newSweep(b, job, opt)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// Cancelled before it began: no kernel load (a first CUDA start
		// JIT-compiles its PTX for seconds) for a study already stopped.
		w.run.Status, w.run.Err = StatusCancelled, cancelCause(ctx)
		return w.run, err
	}
	w.send(Progress{Backend: b.Name(), Precision: job.Precision, Total: w.total, Phase: PhasePrepare})
	if err := w.prepare(ctx); err != nil {
		return w.run, err
	}
	defer w.closeKernel(&retErr)
	if err := w.blockKernel(); err != nil {
		return w.run, err
	}
	w.planLanes()
	w.cctx, w.cancel = context.WithCancel(ctx)
	defer w.cancel()
	w.runLanes()
	return w.finish(ctx)
}

// sweep is the state one Sweep shares between its phases and its lanes.
type sweep struct {
	b    Backend
	job  *Job
	kjob *Job // job on the kernel's (distinct) grid
	opt  SweepOptions
	run  *Run

	start, computeStart time.Time
	total, ktotal       int // combos of the grid, combos the kernel computes
	am                  aliasMap

	k  Kernel
	bk BlockKernel // k, when the job asks for per-block statistics

	chunk, lanes int
	static       bool          // one chunk per lane, assigned statically
	all          []ComboResult // the run's results, written in place (static)

	cctx   context.Context // the lanes' context, cancelled by fail
	cancel context.CancelFunc

	next     atomic.Int64
	done     atomic.Int64 // computed or skipped (resume): the progress fraction
	skipped  atomic.Int64 // skipped: not part of the rate
	mu       sync.Mutex
	chunks   [][]ComboResult
	best     *ComboResult
	firstErr error
	lastSent time.Time
	maxSent  int
}

// newSweep validates job and options and maps the grid to the kernel's
// distinct combos (the clock starts here).
func newSweep(b Backend, job *Job, opt SweepOptions) (*sweep, error) {
	if err := job.Validate(); err != nil {
		return nil, err
	}
	if opt.Every <= 0 {
		opt.Every = 50 * time.Millisecond
	}
	w := &sweep{b: b, job: job, opt: opt, start: time.Now()}
	w.run = &Run{Backend: b.Name(), Precision: job.Precision, WMA: job.WMA, Grid: job.Grid}
	w.total = job.Grid.Len()
	w.am = newAliasMap(job.Grid, mergeAliases && !opt.everyCombo)
	w.kjob = job
	if !w.am.same {
		j := *job
		j.Grid = w.am.comp
		w.kjob = &j
	}
	w.ktotal = w.am.comp.Len()
	if (job.Blocks != nil) != (opt.Blocks != nil) || (opt.Blocks != nil && (opt.Blocks.Combos != w.total || opt.Blocks.Blocks != len(job.Blocks)-1)) {
		return nil, fmt.Errorf("internal error: the job's %d block edges and the sweep's block statistics do not match", len(job.Blocks))
	}
	return w, nil
}

// send delivers a progress event without blocking (dropped when full).
func (w *sweep) send(p Progress) {
	if w.opt.Progress == nil {
		return
	}
	select {
	case w.opt.Progress <- p:
	default:
	}
}

// prepare has the backend prepare its kernel, marking the run cancelled
// or failed when it cannot.
func (w *sweep) prepare(ctx context.Context) error {
	run, b := w.run, w.b
	err := protect(func() error {
		var err error
		w.k, err = b.Prepare(ctx, w.kjob)
		return err
	})
	if err != nil {
		run.Elapsed = time.Since(w.start)
		if ctx.Err() != nil {
			run.Status, run.Err = StatusCancelled, cancelCause(ctx)
			return ctx.Err()
		}
		run.Status, run.Err = StatusFailed, fmt.Errorf("%s: prepare: %w", b.Name(), err)
		return run.Err
	}
	return nil
}

// closeKernel releases the kernel; a failed release of complete results
// fails the run and becomes Sweep's error (*retErr).
func (w *sweep) closeKernel(retErr *error) {
	run := w.run
	if err := protect(w.k.Close); err != nil && run.Err == nil && run.Status == StatusComplete {
		// Results are complete; a failed release is reported, not hidden.
		run.Status, run.Err = StatusFailed, fmt.Errorf("%s: close: %w", w.b.Name(), err)
		*retErr = run.Err
	}
}

// blockKernel records the device and, when the job asks for per-block
// statistics, the kernel's BlockKernel (an error when it has none).
func (w *sweep) blockKernel() error {
	run := w.run
	run.Device = w.k.Device()
	if w.job.Blocks != nil {
		var ok bool
		if w.bk, ok = w.k.(BlockKernel); !ok {
			run.Status, run.Err = StatusFailed, fmt.Errorf("%s: %w", w.b.Name(), ErrNoBlocks)
			return run.Err
		}
	}
	return nil
}

// planLanes ends the prepare phase and sizes the lanes' chunks.
func (w *sweep) planLanes() {
	w.run.Prepare = time.Since(w.start)
	w.computeStart = time.Now()

	w.chunk = max(w.k.ChunkSize(), 1)
	w.lanes = max(w.k.Lanes(), 1)
	// A grid of one chunk per lane (the GPU case: a few hundred thousand
	// combos at most) is assigned statically, lane i taking chunk i (the
	// Kernel contract: a GPU lane prepares only its share), and the lanes
	// write their results straight into the run's slice: no 14 MB copy per
	// 100,000 combos on one core at the end. Larger grids are handed out
	// chunk by chunk into per-chunk slices (nothing the size of the grid is
	// allocated up front). Chunks are of the kernel's (distinct) combos.
	w.static = w.ktotal <= w.lanes*w.chunk
	if !w.opt.Discard && w.static {
		w.all = make([]ComboResult, w.total)
	}
}

// fail records the sweep's first error and stops the lanes.
func (w *sweep) fail(err error) {
	w.mu.Lock()
	if w.firstErr == nil {
		w.firstErr = err
	}
	w.mu.Unlock()
	w.cancel()
}

// runLanes runs the kernel's lanes, one goroutine each, to their end.
func (w *sweep) runLanes() {
	var wg sync.WaitGroup
	for lane := 0; lane < w.lanes; lane++ {
		wg.Add(1)
		go func(lane int) {
			defer wg.Done()
			w.lane(lane)
		}(lane)
	}
	wg.Wait()
}

// lane claims chunks of kernel combos and evaluates them until none is
// left, the sweep is cancelled or a chunk fails.
func (w *sweep) lane(lane int) {
	chunk, ktotal := w.chunk, w.ktotal
	buf := make([]Metrics, chunk)
	var reuse *[]ComboResult // the lane's results slice, when the sink copies (SinkCopies)
	if w.opt.Discard && w.opt.SinkCopies {
		reuse = new([]ComboResult)
	}
	claim := func() int { return int(w.next.Add(int64(chunk))) - chunk }
	if w.static {
		claimed := false
		claim = func() int {
			if claimed {
				return ktotal
			}
			claimed = true
			return lane * chunk
		}
	}
	for w.cctx.Err() == nil {
		lo := claim()
		if lo >= ktotal {
			return
		}
		if !w.laneChunk(lane, lo, min(lo+chunk, ktotal), buf, reuse) {
			return
		}
	}
}

// laneChunk evaluates kernel combos [lo, hi) on lane, split around combos
// already done (resume): a kernel combo is done when every combo it stands
// for is. It reports whether the lane goes on.
func (w *sweep) laneChunk(lane, lo, hi int, buf []Metrics, reuse *[]ComboResult) bool {
	am, skip := &w.am, w.opt.Skip
	for a := lo; a < hi; {
		for a < hi && am.skipped(a, skip) {
			ulo, uhi := am.users(a)
			a++
			w.done.Add(int64(uhi - ulo))
			w.skipped.Add(int64(uhi - ulo))
		}
		z := a
		for z < hi && !am.skipped(z, skip) {
			z++
		}
		if a == z {
			continue
		}
		ulo, _ := am.users(a)
		_, uhi := am.users(z - 1)
		out := buf[:z-a]
		if err := w.compute(lane, a, z, out); err != nil {
			if w.cctx.Err() == nil {
				w.fail(fmt.Errorf("%s: combos %d..%d: %w", w.b.Name(), ulo, uhi-1, err))
			}
			return false
		}
		if !w.hand(a, z, out, reuse) {
			return false
		}
		a = z
	}
	return true
}

// resultsPiece is how many kernel combos' results a lane labels and
// hands the sink at a time when the sink recycles them
// (SweepOptions.Results): a GPU chunk (2^18 combos, 2^19 results with
// their HMA3 twins, 113 MB) goes in pieces of 14 MB, so that what waits
// for the streamed file's writer, and what the writer holds, is a few
// pieces rather than a few chunks.
var resultsPiece = 1 << 16 // a variable: tests hand pieces of a few combos

// hand labels the metrics out of kernel combos [a, z) (hand's caller
// computed them), hands them to the sink and records them, in pieces of
// resultsPiece combos when the sink recycles the results, else at once;
// false when the sink failed (the lane stops).
func (w *sweep) hand(a, z int, out []Metrics, reuse *[]ComboResult) bool {
	piece := z - a
	if w.opt.Discard && w.opt.Results != nil && reuse == nil {
		piece = resultsPiece
	}
	for pa := a; pa < z; pa += piece {
		pz := min(pa+piece, z)
		ulo, _ := w.am.users(pa)
		_, uhi := w.am.users(pz - 1)
		res, nskip := w.label(pa, ulo, uhi, out[pa-a:pz-a], reuse)
		if !w.save(res) {
			return false
		}
		w.record(res, nskip, ulo, uhi)
	}
	return true
}

// compute evaluates kernel combos [a, z) on lane into out, with their
// per-block statistics when the job asks for them (a panic is an error).
func (w *sweep) compute(lane, a, z int, out []Metrics) error {
	k, bk, cctx, am, opt := w.k, w.bk, w.cctx, &w.am, w.opt
	return protect(func() error {
		if bk == nil {
			return k.Compute(cctx, lane, a, out)
		}
		bs := NewBlockStats(z-a, w.job.Blocks)
		if err := bk.ComputeBlocks(cctx, lane, a, out, bs); err != nil {
			return err
		}
		// Each kernel combo's statistics under every grid
		// combo it stands for (its HMA3 twin's are its own),
		// on every core once the chunk is a GPU's.
		const span = 4096
		parts := (z - a + span - 1) / span
		return Parallel(cctx, parts, min(runtime.GOMAXPROCS(0), parts), func(_, i int) {
			for r := a + i*span; r < min(a+(i+1)*span, z); r++ {
				lo, hi := am.users(r)
				for u := lo; u < hi; u++ {
					opt.Blocks.CopyCombo(u, bs, r-a)
				}
			}
		})
	})
}

// label turns the metrics of kernel combos from a on into the results of
// grid combos [ulo, uhi) but those done before (nskip of them), in place
// in the run's slice when it can, else in *reuse (grown as needed) when
// the lane reuses one (SweepOptions.SinkCopies).
func (w *sweep) label(a, ulo, uhi int, out []Metrics, reuse *[]ComboResult) (res []ComboResult, nskip int) {
	am, skip := &w.am, w.opt.Skip
	// The grid's combos of the chunk but those done before.
	if skip != nil && !am.same {
		for u := ulo; u < uhi; u++ {
			if skip(u) {
				nskip++
			}
		}
	}
	switch n := uhi - ulo - nskip; {
	case w.all != nil && nskip == 0:
		res = w.all[ulo:uhi]
	case reuse != nil:
		if cap(*reuse) < n {
			*reuse = make([]ComboResult, n)
		}
		res = (*reuse)[:n]
	case w.opt.Discard && w.opt.Results != nil:
		res = w.opt.Results(n)
	default:
		res = make([]ComboResult, uhi-ulo-nskip)
	}
	am.fill(res, out, a, ulo, nskip > 0, skip)
	return res, nskip
}

// save offers res to the best so far, then hands it to the sink (timed
// as Saving): before, since a sink that recycles the results
// (SweepOptions.Results) may hand res to another lane once it returns. A
// sink error fails the sweep and stops the lane (false).
func (w *sweep) save(res []ComboResult) bool {
	w.mu.Lock()
	for i := range res {
		if w.best == nil || res[i].Sharpe > w.best.Sharpe {
			c := res[i]
			w.best = &c
		}
	}
	if w.opt.Sink == nil {
		w.mu.Unlock()
		return true
	}
	t0 := time.Now()
	err := w.opt.Sink(res)
	w.run.Saving += time.Since(t0)
	w.mu.Unlock()
	if err != nil {
		w.fail(fmt.Errorf("saving results: %w", err))
		return false
	}
	return true
}

// record counts grid combos [ulo, uhi) done, keeps res (save offered it
// to the best) and sends a progress event when one is due.
func (w *sweep) record(res []ComboResult, nskip, ulo, uhi int) {
	w.mu.Lock()
	w.skipped.Add(int64(nskip))
	d := int(w.done.Add(int64(uhi - ulo)))
	if !w.opt.Discard {
		w.chunks = append(w.chunks, res)
	}
	if now := time.Now(); d > w.maxSent && (now.Sub(w.lastSent) >= w.opt.Every || d == w.total) {
		w.lastSent, w.maxSent = now, d
		w.send(progressAt(w.b.Name(), w.job.Precision, d, int(w.skipped.Load()), w.total, w.start, w.computeStart, w.best))
	}
	w.mu.Unlock()
}

// finish assembles the results in grid order, sends the last progress
// event and settles the run's status.
func (w *sweep) finish(ctx context.Context) (*Run, error) {
	run := w.run
	sort.Slice(w.chunks, func(i, j int) bool { return w.chunks[i][0].Index < w.chunks[j][0].Index })
	run.Results = joinChunks(w.chunks, w.all)
	run.Elapsed = time.Since(w.start)
	if it, ok := w.k.(IndicatorTimer); ok {
		run.Indicators = it.IndicatorTime()
	}
	p := progressAt(w.b.Name(), w.job.Precision, int(w.done.Load()), int(w.skipped.Load()), w.total, w.start, w.computeStart, w.best)
	p.Phase = PhaseDone
	w.send(p)
	switch {
	case w.firstErr != nil:
		run.Status, run.Err = StatusFailed, w.firstErr
		return run, w.firstErr
	case ctx.Err() != nil:
		run.Status, run.Err = StatusCancelled, cancelCause(ctx)
		return run, ctx.Err()
	}
	run.Status = StatusComplete
	return run, nil
}

func progressAt(backend string, prec Precision, done, skipped, total int, start, computeStart time.Time, best *ComboResult) Progress {
	p := Progress{Backend: backend, Precision: prec, Done: done, Total: total,
		Elapsed: time.Since(start), Phase: PhaseCompute}
	// The rate counts the combos computed now, not those a resume skipped
	// (they were loaded, not computed: counting them would inflate it).
	if s := time.Since(computeStart).Seconds(); s > 0 && done-skipped > 0 {
		p.Rate = float64(done-skipped) / s
		p.ETA = time.Duration(float64(total-done) / p.Rate * float64(time.Second))
	}
	if best != nil {
		c := *best
		p.Best = &c
	}
	return p
}

// joinChunks returns the completed chunks (sorted by index) as one slice:
// all itself when they tile it (every combo done, written in place), the
// single chunk when there is one, else a copy made on every core.
func joinChunks(chunks [][]ComboResult, all []ComboResult) []ComboResult {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	switch {
	case all != nil && n == len(all):
		return all
	case len(chunks) == 1:
		return chunks[0]
	case n == 0:
		return []ComboResult{}
	}
	out := make([]ComboResult, n)
	offs := make([]int, len(chunks))
	for i, o := 1, len(chunks[0]); i < len(chunks); i++ {
		offs[i] = o
		o += len(chunks[i])
	}
	_ = Parallel(context.Background(), len(chunks), min(runtime.GOMAXPROCS(0), len(chunks)), func(_, i int) {
		copy(out[offs[i]:], chunks[i])
	})
	return out
}

// fill labels the metrics of kernel combos [first, first+len(out)) with
// the grid's index and lengths of every combo each stands for (users),
// from grid combo ulo on, into res; with holes, the combos skip reports
// done are left out. On every core when the chunk is a GPU's hundred
// thousand combos (a single-threaded 15 MB copy would be a tenth of such a
// sweep's time); a chunk with holes (a resume) is labelled on one.
func (m *aliasMap) fill(res []ComboResult, out []Metrics, first, ulo int, holes bool, skip func(int) bool) {
	g := m.grid
	if holes {
		k := 0
		for i := range out {
			lo, hi := m.users(first + i)
			for u := lo; u < hi; u++ {
				if !skip(u) {
					res[k] = ComboResult{Index: u, Combo: g.At(u), Metrics: out[i]}
					k++
				}
			}
		}
		return
	}
	const block = 8192
	fill := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a, z := m.users(first + i)
			for u := a; u < z; u++ {
				res[u-ulo] = ComboResult{Index: u, Combo: g.At(u), Metrics: out[i]}
			}
		}
	}
	if len(out) < 2*block {
		fill(0, len(out))
		return
	}
	blocks := (len(out) + block - 1) / block
	_ = Parallel(context.Background(), blocks, min(runtime.GOMAXPROCS(0), blocks), func(_, b int) {
		fill(b*block, min((b+1)*block, len(out)))
	})
}

// IndicatorTimer is implemented by kernels that measure their indicator
// phase on the device (with device events).
type IndicatorTimer interface {
	IndicatorTime() time.Duration
}

// ErrPanic wraps a panic recovered from a backend.
var ErrPanic = errors.New("internal error")

// protect runs f, turning a panic into an error so it never reaches the user
// as a crash (the boundary where a goroutine's panic would kill the UI).
func protect(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v\n%s", ErrPanic, r, debug.Stack())
		}
	}()
	return f()
}
