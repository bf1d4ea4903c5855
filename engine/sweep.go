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
	if err := job.Validate(); err != nil {
		return nil, err
	}
	if opt.Every <= 0 {
		opt.Every = 50 * time.Millisecond
	}
	start := time.Now()
	run := &Run{Backend: b.Name(), Precision: job.Precision, WMA: job.WMA, Grid: job.Grid}
	total := job.Grid.Len()
	am := newAliasMap(job.Grid, mergeAliases && !opt.everyCombo)
	kjob := job
	if !am.same {
		j := *job
		j.Grid = am.comp
		kjob = &j
	}
	ktotal := am.comp.Len() // the combos the kernel computes
	if (job.Blocks != nil) != (opt.Blocks != nil) || (opt.Blocks != nil && (opt.Blocks.Combos != total || opt.Blocks.Blocks != len(job.Blocks)-1)) {
		return nil, fmt.Errorf("internal error: the job's %d block edges and the sweep's block statistics do not match", len(job.Blocks))
	}
	send := func(p Progress) {
		if opt.Progress == nil {
			return
		}
		select {
		case opt.Progress <- p:
		default:
		}
	}
	if err := ctx.Err(); err != nil {
		// Cancelled before it began: no kernel load (a first CUDA start
		// JIT-compiles its PTX for seconds) for a study already stopped.
		run.Status, run.Err = StatusCancelled, cancelCause(ctx)
		return run, err
	}
	send(Progress{Backend: b.Name(), Precision: job.Precision, Total: total, Phase: PhasePrepare})

	var k Kernel
	err := protect(func() error {
		var err error
		k, err = b.Prepare(ctx, kjob)
		return err
	})
	if err != nil {
		run.Elapsed = time.Since(start)
		if ctx.Err() != nil {
			run.Status, run.Err = StatusCancelled, cancelCause(ctx)
			return run, ctx.Err()
		}
		run.Status, run.Err = StatusFailed, fmt.Errorf("%s: prepare: %w", b.Name(), err)
		return run, run.Err
	}
	defer func() {
		if err := protect(k.Close); err != nil && run.Err == nil && run.Status == StatusComplete {
			// Results are complete; a failed release is reported, not hidden.
			run.Status, run.Err = StatusFailed, fmt.Errorf("%s: close: %w", b.Name(), err)
			retErr = run.Err
		}
	}()
	run.Device = k.Device()
	var bk BlockKernel
	if job.Blocks != nil {
		var ok bool
		if bk, ok = k.(BlockKernel); !ok {
			run.Status, run.Err = StatusFailed, fmt.Errorf("%s: %w", b.Name(), ErrNoBlocks)
			return run, run.Err
		}
	}
	run.Prepare = time.Since(start)
	computeStart := time.Now()

	chunk := max(k.ChunkSize(), 1)
	lanes := max(k.Lanes(), 1)
	// A grid of one chunk per lane (the GPU case: a few hundred thousand
	// combos at most) is assigned statically, lane i taking chunk i (the
	// Kernel contract: a GPU lane prepares only its share), and the lanes
	// write their results straight into the run's slice: no 14 MB copy per
	// 100,000 combos on one core at the end. Larger grids are handed out
	// chunk by chunk into per-chunk slices (nothing the size of the grid is
	// allocated up front). Chunks are of the kernel's (distinct) combos.
	static := ktotal <= lanes*chunk
	var all []ComboResult
	if !opt.Discard && static {
		all = make([]ComboResult, total)
	}
	var (
		next     atomic.Int64
		done     atomic.Int64 // computed or skipped (resume): the progress fraction
		skipped  atomic.Int64 // skipped: not part of the rate
		mu       sync.Mutex
		chunks   [][]ComboResult
		best     *ComboResult
		firstErr error
		lastSent time.Time
		maxSent  int
	)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	var wg sync.WaitGroup
	for lane := 0; lane < lanes; lane++ {
		wg.Add(1)
		go func(lane int) {
			defer wg.Done()
			buf := make([]Metrics, chunk)
			claim := func() int { return int(next.Add(int64(chunk))) - chunk }
			if static {
				claimed := false
				claim = func() int {
					if claimed {
						return ktotal
					}
					claimed = true
					return lane * chunk
				}
			}
			for cctx.Err() == nil {
				lo := claim()
				if lo >= ktotal {
					return
				}
				hi := min(lo+chunk, ktotal)
				// Split the chunk around combos already done (resume): a
				// kernel combo is done when every combo it stands for is.
				for a := lo; a < hi; {
					for a < hi && am.skipped(a, opt.Skip) {
						ulo, uhi := am.users(a)
						a++
						done.Add(int64(uhi - ulo))
						skipped.Add(int64(uhi - ulo))
					}
					z := a
					for z < hi && !am.skipped(z, opt.Skip) {
						z++
					}
					if a == z {
						continue
					}
					ulo, _ := am.users(a)
					_, uhi := am.users(z - 1)
					out := buf[:z-a]
					err := protect(func() error {
						if bk == nil {
							return k.Compute(cctx, lane, a, out)
						}
						bs := NewBlockStats(z-a, job.Blocks)
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
					if err != nil {
						if cctx.Err() == nil {
							fail(fmt.Errorf("%s: combos %d..%d: %w", b.Name(), ulo, uhi-1, err))
						}
						return
					}
					// The grid's combos of the chunk but those done before.
					nskip := 0
					if opt.Skip != nil && !am.same {
						for u := ulo; u < uhi; u++ {
							if opt.Skip(u) {
								nskip++
							}
						}
					}
					var res []ComboResult
					if all != nil && nskip == 0 {
						res = all[ulo:uhi]
					} else {
						res = make([]ComboResult, uhi-ulo-nskip)
					}
					am.fill(res, out, a, ulo, nskip > 0, opt.Skip)
					if opt.Sink != nil {
						mu.Lock()
						t0 := time.Now()
						err := opt.Sink(res)
						run.Saving += time.Since(t0)
						mu.Unlock()
						if err != nil {
							fail(fmt.Errorf("saving results: %w", err))
							return
						}
					}
					mu.Lock()
					skipped.Add(int64(nskip))
					d := int(done.Add(int64(uhi - ulo)))
					if !opt.Discard {
						chunks = append(chunks, res)
					}
					for i := range res {
						if best == nil || res[i].Sharpe > best.Sharpe {
							c := res[i]
							best = &c
						}
					}
					if now := time.Now(); d > maxSent && (now.Sub(lastSent) >= opt.Every || d == total) {
						lastSent, maxSent = now, d
						send(progressAt(b.Name(), job.Precision, d, int(skipped.Load()), total, start, computeStart, best))
					}
					mu.Unlock()
					a = z
				}
			}
		}(lane)
	}
	wg.Wait()

	sort.Slice(chunks, func(i, j int) bool { return chunks[i][0].Index < chunks[j][0].Index })
	run.Results = joinChunks(chunks, all)
	run.Elapsed = time.Since(start)
	if it, ok := k.(IndicatorTimer); ok {
		run.Indicators = it.IndicatorTime()
	}
	p := progressAt(b.Name(), job.Precision, int(done.Load()), int(skipped.Load()), total, start, computeStart, best)
	p.Phase = PhaseDone
	send(p)
	switch {
	case firstErr != nil:
		run.Status, run.Err = StatusFailed, firstErr
		return run, firstErr
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
