package engine

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"sweepbench/engine/data"
)

// fakeBackend is a Backend whose kernel writes Metrics{TotalReturn: index,
// Sharpe: index} for each combo (so every result says which combo it is),
// unless compute overrides it. It records which combos it computed.
type fakeBackend struct {
	lanes, chunk int
	prepare      func(ctx context.Context, job *Job) error
	compute      func(ctx context.Context, lane, first int, out []Metrics) error
	closePanic   bool

	mu       sync.Mutex
	computed []int
	closed   atomic.Bool
}

func (f *fakeBackend) Name() string               { return "fake" }
func (f *fakeBackend) Available() error           { return nil }
func (f *fakeBackend) Devices() ([]Device, error) { return []Device{{Name: "fake device"}}, nil }
func (f *fakeBackend) Prepare(ctx context.Context, job *Job) (Kernel, error) {
	if f.prepare != nil {
		if err := f.prepare(ctx, job); err != nil {
			return nil, err
		}
	}
	return &fakeKernel{f}, nil
}

type fakeKernel struct{ b *fakeBackend }

func (k *fakeKernel) Lanes() int     { return k.b.lanes }
func (k *fakeKernel) ChunkSize() int { return k.b.chunk }
func (k *fakeKernel) Device() string { return "fake device" }
func (k *fakeKernel) Close() error {
	k.b.closed.Store(true)
	if k.b.closePanic {
		panic("driver crashed while releasing memory")
	}
	return nil
}

func (k *fakeKernel) Compute(ctx context.Context, lane, first int, out []Metrics) error {
	if k.b.compute != nil {
		if err := k.b.compute(ctx, lane, first, out); err != nil {
			return err
		}
	} else {
		fillIndex(first, out)
	}
	k.b.mu.Lock()
	for i := range out {
		k.b.computed = append(k.b.computed, first+i)
	}
	k.b.mu.Unlock()
	return nil
}

func fillIndex(first int, out []Metrics) {
	for i := range out {
		out[i] = Metrics{TotalReturn: float64(first + i), Sharpe: float64(first + i)}
	}
}

// sweepJob is a 10 x 10 grid (100 combos) over bars long enough for it.
// Its HMA3 step (3) holds no twins (Grid.Distinct), so the kernel is asked
// for the grid's own combos and the fake's metrics name them.
func sweepJob() *Job {
	rng := rand.New(rand.NewPCG(71, 72))
	return &Job{
		Bars:   closeBars(randomWalk(rng, 100, 100, 0.01)),
		Grid:   Grid{HMA: Range{2, 11, 1}, HMA3: Range{6, 33, 3}},
		Params: Params{Fee: DefaultFee, BarsPerYear: 525600},
	}
}

// checkResults: strictly increasing indices, each result the one the fake
// computed for its index, on the right combo.
func checkResults(t *testing.T, job *Job, res []ComboResult) {
	t.Helper()
	for i, r := range res {
		if i > 0 && r.Index <= res[i-1].Index {
			t.Fatalf("Results not in index order: %d after %d", r.Index, res[i-1].Index)
		}
		if r.TotalReturn != float64(r.Index) || r.Combo != job.Grid.At(r.Index) {
			t.Fatalf("Results[%d] = %+v: metrics or combo not those of index %d (%+v)", i, r, r.Index, job.Grid.At(r.Index))
		}
	}
}

func indices(res []ComboResult) []int {
	out := make([]int, len(res))
	for i, r := range res {
		out[i] = r.Index
	}
	return out
}

func TestSweepComplete(t *testing.T) {
	job := sweepJob()
	b := &fakeBackend{lanes: 3, chunk: 7}
	run, err := Sweep(context.Background(), b, job, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != StatusComplete || !run.Complete() || run.Err != nil || len(run.Results) != 100 {
		t.Fatalf("status %s err %v, %d results, want complete with 100", run.Status, run.Err, len(run.Results))
	}
	checkResults(t, job, run.Results)
	if run.Backend != "fake" || run.Device != "fake device" || run.Precision != FP64 || run.WMA != Direct {
		t.Errorf("run labels %q %q %v %v", run.Backend, run.Device, run.Precision, run.WMA)
	}
	if !b.closed.Load() {
		t.Error("kernel not closed")
	}
	if got := run.Lookup(42); got == nil || got.Index != 42 {
		t.Errorf("Lookup(42) = %+v", got)
	}
	if top := TopBySharpe(run, 3); len(top) != 3 || top[0].Index != 99 || top[2].Index != 97 {
		t.Errorf("TopBySharpe = %v, want 99, 98, 97", indices(top))
	}
}

// TestSweepCancelMidRun: combos 0..11 compute at once, every later chunk
// blocks until the context is cancelled (as a well-behaved kernel returns
// ctx.Err()). Cancelling once 12 combos are saved must return Status
// cancelled, context.Canceled, and exactly combos 0..11 in index order.
func TestSweepCancelMidRun(t *testing.T) {
	job := sweepJob()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &fakeBackend{lanes: 2, chunk: 3, compute: func(ctx context.Context, lane, first int, out []Metrics) error {
		if first >= 12 {
			<-ctx.Done()
			return ctx.Err()
		}
		fillIndex(first, out)
		return nil
	}}
	saved := 0
	run, err := Sweep(ctx, b, job, SweepOptions{Sink: func(rs []ComboResult) error {
		if saved += len(rs); saved == 12 {
			cancel()
		}
		return nil
	}})
	if !errors.Is(err, context.Canceled) || run == nil || run.Status != StatusCancelled || !errors.Is(run.Err, context.Canceled) {
		t.Fatalf("err %v, run %+v: want context.Canceled and Status cancelled", err, run)
	}
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(indices(run.Results), want) {
		t.Errorf("Results %v, want %v", indices(run.Results), want)
	}
	checkResults(t, job, run.Results)
	if !b.closed.Load() {
		t.Error("kernel not closed after cancellation")
	}
}

// TestSweepCancelSlowBackend: a kernel that ignores the context and takes
// its time; whatever it completed before the lanes noticed is kept, in
// index order, and nothing else.
func TestSweepCancelSlowBackend(t *testing.T) {
	job := sweepJob()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &fakeBackend{lanes: 4, chunk: 2, compute: func(ctx context.Context, lane, first int, out []Metrics) error {
		time.Sleep(time.Millisecond)
		fillIndex(first, out)
		return nil
	}}
	saved := 0
	run, err := Sweep(ctx, b, job, SweepOptions{Sink: func(rs []ComboResult) error {
		if saved += len(rs); saved >= 20 {
			cancel()
		}
		return nil
	}})
	if !errors.Is(err, context.Canceled) || run.Status != StatusCancelled {
		t.Fatalf("err %v status %s, want cancelled", err, run.Status)
	}
	checkResults(t, job, run.Results)
	b.mu.Lock()
	computed := slices.Sorted(slices.Values(b.computed))
	b.mu.Unlock()
	if !slices.Equal(indices(run.Results), computed) {
		t.Errorf("Results %v, but the kernel completed %v", indices(run.Results), computed)
	}
	if len(run.Results) < 20 || len(run.Results) >= 100 {
		t.Errorf("%d results: want at least the 20 saved before cancelling and not all 100", len(run.Results))
	}
}

// TestSweepPanicBecomesError: a panic in Compute or in Prepare is returned
// as an error wrapping ErrPanic with Status failed; the test process
// survives.
func TestSweepPanicBecomesError(t *testing.T) {
	job := sweepJob()
	b := &fakeBackend{lanes: 1, chunk: 4, compute: func(ctx context.Context, lane, first int, out []Metrics) error {
		if first <= 42 && 42 < first+len(out) {
			var m map[string]int
			m["boom"]++ // a nil-map write: a real runtime panic
		}
		fillIndex(first, out)
		return nil
	}}
	run, err := Sweep(context.Background(), b, job, SweepOptions{})
	if !errors.Is(err, ErrPanic) || run.Status != StatusFailed || !errors.Is(run.Err, ErrPanic) {
		t.Fatalf("err %v status %s, want ErrPanic and failed", err, run.Status)
	}
	if !strings.Contains(err.Error(), "combos 40..43") {
		t.Errorf("error %q does not name the combo range 40..43", err)
	}
	if want := 40; len(run.Results) != want { // one lane: chunks 0..39 completed first
		t.Errorf("%d results, want %d", len(run.Results), want)
	}
	checkResults(t, job, run.Results)

	bp := &fakeBackend{lanes: 1, chunk: 4, prepare: func(context.Context, *Job) error { panic("no device") }}
	run, err = Sweep(context.Background(), bp, job, SweepOptions{})
	if !errors.Is(err, ErrPanic) || run == nil || run.Status != StatusFailed || !strings.Contains(err.Error(), "prepare") {
		t.Errorf("Prepare panic: err %v run %+v, want ErrPanic naming prepare, Status failed", err, run)
	}
}

// TestSweepClosePanic: Kernel.Close is a backend method too (it releases
// device memory); Sweep documents that "a panic inside a backend becomes
// an error", so a panic there must not escape Sweep.
func TestSweepClosePanic(t *testing.T) {
	job := sweepJob()
	b := &fakeBackend{lanes: 1, chunk: 10, closePanic: true}
	var (
		run *Run
		err error
	)
	escaped := func() (p any) {
		defer func() { p = recover() }()
		run, err = Sweep(context.Background(), b, job, SweepOptions{})
		return nil
	}()
	if escaped != nil {
		t.Errorf("BUG: a panic in Kernel.Close escaped Sweep (%v): want an error wrapping ErrPanic; "+
			"sweep.go calls k.Close() in a plain defer, outside protect", escaped)
		return
	}
	if !errors.Is(err, ErrPanic) {
		t.Errorf("Close panic: err %v (run %+v), want ErrPanic", err, run)
	}
}

// TestSweepBackendError: a kernel error fails the run with the error
// wrapped, naming the backend and the combo range; what completed before is
// kept.
func TestSweepBackendError(t *testing.T) {
	job := sweepJob()
	errLost := errors.New("device lost")
	b := &fakeBackend{lanes: 1, chunk: 4, compute: func(ctx context.Context, lane, first int, out []Metrics) error {
		if first == 4 {
			return errLost
		}
		fillIndex(first, out)
		return nil
	}}
	run, err := Sweep(context.Background(), b, job, SweepOptions{})
	if !errors.Is(err, errLost) || run.Status != StatusFailed || !errors.Is(run.Err, errLost) {
		t.Fatalf("err %v status %s, want device lost and failed", err, run.Status)
	}
	if !strings.Contains(err.Error(), "fake: combos 4..7") {
		t.Errorf("error %q does not name the backend and combos 4..7", err)
	}
	if want := []int{0, 1, 2, 3}; !slices.Equal(indices(run.Results), want) {
		t.Errorf("Results %v, want %v", indices(run.Results), want)
	}

	// A Prepare error fails the run before anything is computed.
	bp := &fakeBackend{lanes: 1, chunk: 4, prepare: func(context.Context, *Job) error { return errLost }}
	run, err = Sweep(context.Background(), bp, job, SweepOptions{})
	if !errors.Is(err, errLost) || run.Status != StatusFailed || len(run.Results) != 0 {
		t.Errorf("Prepare error: err %v status %s results %d", err, run.Status, len(run.Results))
	}

	// A Sink error stops the sweep and is returned.
	errDisk := errors.New("disk full")
	run, err = Sweep(context.Background(), &fakeBackend{lanes: 2, chunk: 5}, job, SweepOptions{Sink: func([]ComboResult) error { return errDisk }})
	if !errors.Is(err, errDisk) || run.Status != StatusFailed {
		t.Errorf("Sink error: err %v status %s", err, run.Status)
	}
}

// TestSweepSkipResumes: with Skip reporting every third combo as done, the
// kernel computes exactly the others, Results hold exactly those, and the
// final progress counts all 100 as done.
func TestSweepSkipResumes(t *testing.T) {
	job := sweepJob()
	done := func(i int) bool { return i%3 == 0 }
	b := &fakeBackend{lanes: 2, chunk: 8}
	prog := make(chan Progress, 1000)
	run, err := Sweep(context.Background(), b, job, SweepOptions{Skip: done, Progress: prog, Every: time.Nanosecond})
	if err != nil || run.Status != StatusComplete {
		t.Fatalf("err %v status %s", err, run.Status)
	}
	var want []int
	for i := range 100 {
		if !done(i) {
			want = append(want, i)
		}
	}
	b.mu.Lock()
	computed := slices.Sorted(slices.Values(b.computed))
	b.mu.Unlock()
	if !slices.Equal(computed, want) {
		t.Errorf("kernel computed %v, want %v", computed, want)
	}
	if !slices.Equal(indices(run.Results), want) {
		t.Errorf("Results %v, want %v", indices(run.Results), want)
	}
	checkResults(t, job, run.Results)
	close(prog)
	var last Progress
	for p := range prog {
		last = p
	}
	if last.Phase != "done" || last.Done != 100 || last.Total != 100 {
		t.Errorf("last progress %+v, want done 100/100", last)
	}
}

// TestSweepOneChunkPerLane: a grid of one chunk per lane (the GPU layout,
// where results are written in place) gives the same results as chunks
// of any size, complete, with combos skipped (resume), and when one lane
// fails (only the other lane's combos, in order, marked failed).
func TestSweepOneChunkPerLane(t *testing.T) {
	job := sweepJob()
	run, err := Sweep(context.Background(), &fakeBackend{lanes: 2, chunk: 50}, job, SweepOptions{})
	if err != nil || len(run.Results) != 100 {
		t.Fatalf("err %v, %d results", err, len(run.Results))
	}
	checkResults(t, job, run.Results)

	skip := func(i int) bool { return i%7 == 0 || (i >= 40 && i < 60) }
	run, err = Sweep(context.Background(), &fakeBackend{lanes: 2, chunk: 50}, job, SweepOptions{Skip: skip})
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for i := range 100 {
		if !skip(i) {
			want = append(want, i)
		}
	}
	if !slices.Equal(indices(run.Results), want) {
		t.Fatalf("Results %v, want %v", indices(run.Results), want)
	}
	checkResults(t, job, run.Results)

	lane0 := make(chan struct{})
	b := &fakeBackend{lanes: 2, chunk: 50, compute: func(ctx context.Context, lane, first int, out []Metrics) error {
		if lane != first/50 {
			t.Errorf("lane %d got combos from %d: one chunk per lane is assigned statically", lane, first)
		}
		if first >= 50 {
			<-lane0 // fail once lane 0 has its results
			return errors.New("kernel fault")
		}
		fillIndex(first, out)
		close(lane0)
		return nil
	}}
	run, err = Sweep(context.Background(), b, job, SweepOptions{})
	if err == nil || run.Status != StatusFailed {
		t.Fatalf("err %v status %s, want failed", err, run.Status)
	}
	if got := indices(run.Results); len(got) != 50 || got[0] != 0 || got[49] != 49 {
		t.Fatalf("partial results %v, want combos 0..49", got)
	}
	checkResults(t, job, run.Results)
}

// TestSweepProgress: events start with "prepare", end with "done", carry
// the grid's total, and Done never goes back; Best is the best Sharpe so
// far (here the highest index seen). One lane, so the order is the order of
// completion.
func TestSweepProgress(t *testing.T) {
	job := sweepJob()
	prog := make(chan Progress, 1000)
	_, err := Sweep(context.Background(), &fakeBackend{lanes: 1, chunk: 3}, job, SweepOptions{Progress: prog, Every: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	close(prog)
	var evs []Progress
	for p := range prog {
		evs = append(evs, p)
	}
	if len(evs) < 3 || evs[0].Phase != "prepare" || evs[len(evs)-1].Phase != "done" {
		t.Fatalf("%d events, first %+v last %+v", len(evs), evs[0], evs[len(evs)-1])
	}
	for i, p := range evs {
		if p.Total != 100 || p.Backend != "fake" {
			t.Errorf("event %d: Total %d backend %q", i, p.Total, p.Backend)
		}
		if i > 0 && p.Done < evs[i-1].Done {
			t.Errorf("event %d: Done %d after %d", i, p.Done, evs[i-1].Done)
		}
		if p.Phase == "compute" && (p.Best == nil || p.Best.Index != p.Done-1) {
			t.Errorf("event %d: Best %+v, want index %d (the highest Sharpe so far)", i, p.Best, p.Done-1)
		}
	}
	if last := evs[len(evs)-1]; last.Done != 100 || last.Best == nil || last.Best.Index != 99 {
		t.Errorf("last event %+v", last)
	}
}

// TestSweepProgressMonotonicManyLanes: with several lanes finishing chunks
// at once and no throttling, Done must still never go back: a progress bar
// that steps backwards is wrong.
func TestSweepProgressMonotonicManyLanes(t *testing.T) {
	job := sweepJob()
	job.Grid = Grid{HMA: Range{2, 41, 1}, HMA3: Range{6, 55, 1}} // 2000 combos
	job.Bars = closeBars(randomWalk(rand.New(rand.NewPCG(1, 1)), 200, 100, 0.01))
	for attempt := range 20 {
		prog := make(chan Progress, 10000)
		_, err := Sweep(context.Background(), &fakeBackend{lanes: 4, chunk: 1}, job, SweepOptions{Progress: prog, Every: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		close(prog)
		prev := -1
		for p := range prog {
			if p.Done < prev {
				t.Errorf("BUG: attempt %d: progress Done went back from %d to %d; want non-decreasing Done "+
					"(sweep.go takes d := done.Add(...) before mu.Lock, so a lane preempted in between sends a stale, smaller Done after a newer one)",
					attempt, prev, p.Done)
				return
			}
			prev = p.Done
		}
	}
}

// TestSweepHugeGridStreams: a 10^7-combo grid streamed to a Sink with
// Discard must not allocate per-combo storage up front (10^7 ComboResults
// would be ~1.4 GB). Cancelled after a few chunks, the sweep must have
// allocated a tiny fraction of that.
func TestSweepHugeGridStreams(t *testing.T) {
	g := Grid{HMA: Range{2, 10001, 1}, HMA3: Range{6, 1005, 1}}
	if g.Len() != 10_000_000 {
		t.Fatalf("grid has %d combos", g.Len())
	}
	n := BarsNeeded(Combo{HMA: 10001, HMA3: 1005})
	job := &Job{Bars: closeBars(randomWalk(rand.New(rand.NewPCG(1, 2)), n, 100, 0.01)), Grid: g,
		Params: Params{Fee: DefaultFee, BarsPerYear: 525600}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chunks := 0
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	run, err := Sweep(ctx, &fakeBackend{lanes: 2, chunk: 1024}, job, SweepOptions{Discard: true, Sink: func(rs []ComboResult) error {
		if chunks++; chunks == 8 {
			cancel()
		}
		return nil
	}})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, context.Canceled) || run.Status != StatusCancelled {
		t.Fatalf("err %v status %s", err, run.Status)
	}
	if len(run.Results) != 0 {
		t.Errorf("Discard: %d results kept", len(run.Results))
	}
	full := uint64(g.Len()) * uint64(unsafe.Sizeof(ComboResult{}))
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d KB during the sweep; storing every result would take %d MB", alloc>>10, full>>20)
	if alloc > full/100 {
		t.Errorf("allocated %d bytes for a cancelled streamed sweep: more than 1%% of storing all %d results (%d bytes)", alloc, g.Len(), full)
	}
}

// precisionAware returns a fake backend that remembers the precision of the
// job it prepared (RunStudy runs fp64, then fp32, on the same backend).
func precisionAware(compute func(prec Precision, ctx context.Context, first int, out []Metrics) error) *fakeBackend {
	var prec atomic.Int32
	return &fakeBackend{lanes: 1, chunk: 5,
		prepare: func(_ context.Context, job *Job) error { prec.Store(int32(job.Precision)); return nil },
		compute: func(ctx context.Context, _, first int, out []Metrics) error {
			return compute(Precision(prec.Load()), ctx, first, out)
		}}
}

func fakeStudy(b Backend) *Study {
	job := sweepJob()
	return &Study{Dataset: &data.Dataset{Bars: *job.Bars, Info: data.Info{Name: "synthetic", Bars: job.Bars.Len()}},
		Grid: job.Grid, Params: job.Params, Precisions: []Precision{FP64, FP32}, Backend: b}
}

// cancelledStudy runs the fake study and cancels it when the lane of
// precision prec reaches combo at; the error must be context.Canceled.
func cancelledStudy(t *testing.T, prec Precision, at int) *Report {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := precisionAware(func(p Precision, ctx context.Context, first int, out []Metrics) error {
		if p == prec && first >= at {
			cancel()
			return ctx.Err()
		}
		fillIndex(first, out)
		return nil
	})
	rep, err := RunStudy(ctx, fakeStudy(b), StudyOptions{})
	if !errors.Is(err, context.Canceled) || rep == nil {
		t.Fatalf("err %v rep %v", err, rep)
	}
	return rep
}

// TestRunStudyCancelled: cancelled during the fp32 run, the report keeps
// the complete fp64 run, the partial fp32 run, and a parity report over the
// combos both have, marked incomplete; the error is context.Canceled.
func TestRunStudyCancelled(t *testing.T) {
	rep := cancelledStudy(t, FP32, 30)
	r64, r32 := rep.Run(FP64), rep.Run(FP32)
	if r64 == nil || r32 == nil || r64.Status != StatusComplete || r32.Status != StatusCancelled || len(r32.Results) != 30 || rep.Complete() {
		t.Fatalf("runs %+v %+v", r64, r32)
	}
	if p := rep.Parity; p == nil || !p.Incomplete || p.CombosCompared != 30 || rep.ParityOf != "fp32 vs fp64" {
		t.Errorf("parity %+v of %q: want incomplete over 30 combos", p, rep.ParityOf)
	}
}

// TestRunStudyStopsAfterFailure: a failed fp64 run is kept and returned
// with its error; fp32 is not started and there is no parity report.
func TestRunStudyStopsAfterFailure(t *testing.T) {
	errLost := errors.New("device lost")
	started := map[Precision]bool{}
	var mu sync.Mutex
	b := precisionAware(func(prec Precision, ctx context.Context, first int, out []Metrics) error {
		mu.Lock()
		started[prec] = true
		mu.Unlock()
		if first >= 10 {
			return errLost
		}
		fillIndex(first, out)
		return nil
	})
	rep, err := RunStudy(context.Background(), fakeStudy(b), StudyOptions{})
	if !errors.Is(err, errLost) || len(rep.Runs) != 1 || rep.Runs[0].Status != StatusFailed || rep.Parity != nil || started[FP32] {
		t.Errorf("err %v, %d runs, parity %v, fp32 started %v: want the failed fp64 run only", err, len(rep.Runs), rep.Parity, started[FP32])
	}
}

// TestRunStudyRoutesPerPrecision: the study's Sink sees every combo
// computed once per precision, tagged; the combos of a prior run (resume)
// are not computed again, join the run, and the parity covers them all.
func TestRunStudyRoutesPerPrecision(t *testing.T) {
	// The prior fp32 run: combos 0..49, as a first process saved them.
	first, err := RunStudy(context.Background(), fakeStudy(&fakeBackend{lanes: 2, chunk: 7}), StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prior := *first.Run(FP32)
	prior.Results = prior.Results[:50]
	prior.Status = StatusCancelled
	seen := map[Precision][]int{}
	rep, err := RunStudy(context.Background(), fakeStudy(&fakeBackend{lanes: 2, chunk: 7}), StudyOptions{
		Sink: func(p Precision, rs []ComboResult) error {
			for _, r := range rs {
				seen[p] = append(seen[p], r.Index)
			}
			return nil
		},
		Prior: map[Precision]*Run{FP32: &prior},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(seen[FP64])); len(got) != 100 || got[0] != 0 || got[99] != 99 {
		t.Errorf("fp64 sink saw %d combos", len(got))
	}
	if got := slices.Sorted(slices.Values(seen[FP32])); len(got) != 50 || got[0] != 50 {
		t.Errorf("fp32 sink saw %v, want 50..99 (0..49 prior)", got)
	}
	r32 := rep.Run(FP32)
	if len(r32.Results) != 100 || !r32.Complete() || rep.Parity == nil || rep.Parity.CombosCompared != 100 {
		t.Fatalf("fp32 results %d (%s), parity %+v", len(r32.Results), r32.Status, rep.Parity)
	}
	for i, r := range r32.Results {
		if r.Index != i || r.Metrics != first.Run(FP32).Results[i].Metrics {
			t.Fatalf("merged fp32 result %d: index %d, metrics %+v, want %+v", i, r.Index, r.Metrics, first.Run(FP32).Results[i].Metrics)
		}
	}
	// A complete prior run is taken as it is: nothing computed.
	seen = map[Precision][]int{}
	full := *first.Run(FP64)
	_, err = RunStudy(context.Background(), fakeStudy(&fakeBackend{lanes: 2, chunk: 7}), StudyOptions{
		Sink: func(p Precision, rs []ComboResult) error {
			seen[p] = append(seen[p], len(rs))
			return nil
		},
		Prior: map[Precision]*Run{FP64: &full},
	})
	if err != nil || len(seen[FP64]) != 0 || len(seen[FP32]) == 0 {
		t.Errorf("err %v; sink saw fp64 chunks %v (want none), fp32 %v", err, seen[FP64], seen[FP32])
	}
}

// TestSweepResumeRate: the progress rate of a resumed sweep counts the
// combos computed now, not those loaded from the store: 90 of 100 skipped,
// the rest computed slowly, so the rate is ~10 per elapsed time, not ~100.
func TestSweepResumeRate(t *testing.T) {
	job := sweepJob()
	b := &fakeBackend{lanes: 1, chunk: 5, compute: func(ctx context.Context, lane, first int, out []Metrics) error {
		time.Sleep(20 * time.Millisecond)
		fillIndex(first, out)
		return nil
	}}
	prog := make(chan Progress, 1000)
	run, err := Sweep(context.Background(), b, job, SweepOptions{Skip: func(i int) bool { return i >= 10 }, Progress: prog, Every: time.Nanosecond})
	if err != nil || len(run.Results) != 10 {
		t.Fatalf("err %v, %d results", err, len(run.Results))
	}
	close(prog)
	var last Progress
	for p := range prog {
		last = p
	}
	if last.Done != 100 {
		t.Fatalf("last progress done %d, want 100 (computed and skipped)", last.Done)
	}
	if got := last.Rate * last.Elapsed.Seconds(); got < 9 || got > 15 {
		t.Errorf("rate %.1f combos/s over %v counts %.1f combos, want the 10 computed", last.Rate, last.Elapsed, got)
	}
}

// TestFewTradesNote: the lower median of the trade counts, and the
// report's note when it is below fewTrades (the fake backend's combos
// make no trades at all).
func TestFewTradesNote(t *testing.T) {
	run := &Run{Results: []ComboResult{{Metrics: Metrics{TotalTrades: 5}}, {Metrics: Metrics{TotalTrades: 1}},
		{Metrics: Metrics{TotalTrades: 100}}, {Metrics: Metrics{TotalTrades: 40}}}}
	if got := medianTradesBelow(run, fewTrades); got != 5 {
		t.Errorf("median of 5, 1, 100, 40 = %d, want 5 (the lower median)", got)
	}
	if got := medianTradesBelow(run, 4); got != 4 {
		t.Errorf("median of 5, 1, 100, 40 below 4 = %d, want 4 (not below)", got)
	}
	if got := medianTradesBelow(&Run{}, fewTrades); got != -1 {
		t.Errorf("median of no results = %d, want -1", got)
	}
	rep, err := RunStudy(context.Background(), fakeStudy(precisionAware(func(_ Precision, _ context.Context, first int, out []Metrics) error {
		fillIndex(first, out)
		return nil
	})), StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Note, "the median combo made 0 trades") {
		t.Errorf("note %q", rep.Note)
	}
}

// TestTopBySharpeMatchesStableSort: the heap selection gives the first k of
// a stable sort by Sharpe (descending, NaN last, ties by grid order), on
// results with many ties and NaNs, for k below, at and above their count.
func TestTopBySharpeMatchesStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 500} {
		run := &Run{}
		for i := 0; i < n; i++ {
			s := float64(rng.IntN(20)) / 4 // ties
			if rng.IntN(6) == 0 {
				s = math.NaN()
			}
			run.Results = append(run.Results, ComboResult{Index: i, Metrics: Metrics{Sharpe: s}})
		}
		want := append([]ComboResult(nil), run.Results...)
		sort.SliceStable(want, func(i, j int) bool {
			a, b := want[i].Sharpe, want[j].Sharpe
			if math.IsNaN(b) {
				return !math.IsNaN(a)
			}
			return a > b
		})
		for _, k := range []int{0, 1, 3, 10, n, n + 5} {
			got := TopBySharpe(run, k)
			w := want[:min(k, n)]
			if len(got) != len(w) {
				t.Fatalf("n %d k %d: %d results, want %d", n, k, len(got), len(w))
			}
			for i := range w {
				if got[i].Index != w[i].Index {
					t.Fatalf("n %d k %d: rank %d is combo %d (sharpe %v), want %d (sharpe %v)", n, k, i, got[i].Index, got[i].Sharpe, w[i].Index, w[i].Sharpe)
				}
			}
		}
	}
}
