package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sweepbench/engine"
)

// ErrComplete is returned (wrapped) when resuming a session that has
// nothing left to compute.
var ErrComplete = errors.New("complete: nothing to resume")

// DatasetChangedError refuses to resume a session whose dataset is no
// longer the one it was computed on.
type DatasetChangedError struct {
	ID   int64
	Data string // the --data of the session
	What string // what differs, e.g. "sha256 ab12... -> cd34..."
}

func (e *DatasetChangedError) Error() string {
	return fmt.Sprintf("session %d: the dataset %s changed since the session was saved (%s): resuming would mix results of two datasets; run it again as a new session instead",
		e.ID, e.Data, e.What)
}

// ResumeOptions route the events of a resumed study.
type ResumeOptions struct {
	// Progress receives each lane's events without blocking (see
	// engine.SweepOptions); the skipped combos count as done.
	Progress chan<- engine.Progress
	// Force takes over a study marked running by another host.
	Force bool
}

// LaneResume says what resuming did for one precision.
type LaneResume struct {
	Precision engine.Precision
	Saved     int  // combos found saved
	Computed  int  // combos computed now
	Complete  bool // the run was already complete: not run at all
}

// Resume computes the combos of session id that are not saved, and only
// those, then the parity report over the complete runs, and returns the
// report of the whole session as Open does.
//
// st is the session's study rebuilt by the caller: the dataset loaded
// again through Session.Origin and the parameters from Session (the store
// cannot load data itself). Resume refuses with *DatasetChangedError when
// the loaded bars are not the ones saved (SHA-256, count, first and last
// time), with ErrComplete when there is nothing to do, and with ErrRunning
// when a live process is writing the session. On cancellation the combos
// computed so far are saved and the session is cancelled (resumable).
//
// Each missing precision runs through engine.Sweep with Skip set to the
// saved combos (what engine.StudyOptions.Skip does inside RunStudy), with
// one indicator cache shared by the lanes and the parity report; RunStudy
// itself is not used because its parity would cover only the combos
// computed now.
func (s *Store) Resume(ctx context.Context, id int64, st *engine.Study, opt ResumeOptions) (*engine.Report, []LaneResume, error) {
	ss, err := s.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if ss.Status == engine.StatusComplete {
		return nil, nil, fmt.Errorf("session %d is %w (sweepbench sessions show %d)", id, ErrComplete, id)
	}
	if err := s.checkNotRunning(ss, opt.Force, "resume it"); err != nil {
		return nil, nil, err
	}
	if err := sameStudy(ss, st); err != nil {
		return nil, nil, err
	}
	w, err := s.claim(ctx, ss, st)
	if err != nil {
		return nil, nil, err
	}

	cache := &engine.IndicatorCache{}
	job := func(p engine.Precision) *engine.Job {
		return &engine.Job{Bars: &st.Dataset.Bars, Grid: st.Grid, Params: st.Params, Precision: p, WMA: st.WMA, Cache: cache}
	}
	var (
		lanes  []LaneResume
		runs   []*engine.Run
		runErr error
	)
	for _, p := range ss.Precisions {
		ln := LaneResume{Precision: p}
		rs := ss.Run(p)
		if rs != nil && rs.Status == engine.StatusComplete {
			ln.Saved, ln.Complete = rs.Done, true
			lanes = append(lanes, ln)
			continue
		}
		var done bitset
		if rs != nil {
			if done, err = s.savedIndices(ctx, rs.ID, st.Grid.Len()); err != nil {
				runErr = err
				break
			}
		}
		ln.Saved = done.count()
		run, err := engine.Sweep(ctx, st.Backend, job(p), engine.SweepOptions{
			Progress: opt.Progress,
			Sink:     func(rs []engine.ComboResult) error { return w.Save(p, rs) },
			Skip:     done.has,
			Discard:  true, // read back from the store, whole, below
		})
		if run != nil {
			ln.Computed = w.added(p)
			runs = append(runs, run)
		}
		lanes = append(lanes, ln)
		if err != nil {
			runErr = err
			break
		}
	}
	if err := w.Flush(); err != nil && runErr == nil {
		runErr = err
	}

	// The parity report over the complete runs, from the store.
	var par *engine.Parity
	if runErr == nil && hasPrecision(ss.Precisions, engine.FP64) && hasPrecision(ss.Precisions, engine.FP32) {
		par, err = s.studyParity(ctx, id, job(engine.FP64), st.Tolerance)
		if err != nil {
			runErr = fmt.Errorf("parity: %w", err)
		}
	}
	if err := w.finish(runs, par, "fp32 vs fp64", runErr); err != nil && runErr == nil {
		runErr = err
	}
	rep, err := s.Open(context.WithoutCancel(ctx), id) // a cancelled resume still reports
	if err != nil {
		return nil, lanes, errors.Join(runErr, err)
	}
	return rep, lanes, runErr
}

func hasPrecision(ps []engine.Precision, p engine.Precision) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// sameStudy checks that st is the study ss saved: the same bars and the
// same sweep.
func sameStudy(ss *Session, st *engine.Study) error {
	a, b := &ss.Dataset, &st.Dataset.Info
	switch {
	case a.SHA256 != b.SHA256:
		return &DatasetChangedError{ss.ID, ss.Origin.Data, fmt.Sprintf("sha256 %s -> %s", short(a.SHA256), short(b.SHA256))}
	case a.Bars != b.Bars || !a.First.Equal(b.First) || !a.Last.Equal(b.Last):
		return &DatasetChangedError{ss.ID, ss.Origin.Data, fmt.Sprintf("%d bars %s .. %s -> %d bars %s .. %s",
			a.Bars, a.First.Format(time.DateTime), a.Last.Format(time.DateTime), b.Bars, b.First.Format(time.DateTime), b.Last.Format(time.DateTime))}
	}
	tol := st.Tolerance
	if tol <= 0 {
		tol = engine.DefaultBorderline
	}
	var diffs []string
	if st.Grid != ss.Grid {
		diffs = append(diffs, fmt.Sprintf("grid %s x %s != %s x %s", st.Grid.HMA, st.Grid.HMA3, ss.Grid.HMA, ss.Grid.HMA3))
	}
	if st.Params != ss.Params {
		diffs = append(diffs, fmt.Sprintf("params %+v != %+v", st.Params, ss.Params))
	}
	if st.WMA != ss.WMA {
		diffs = append(diffs, fmt.Sprintf("wma %s != %s", st.WMA, ss.WMA))
	}
	if fmt.Sprint(st.Precisions) != fmt.Sprint(ss.Precisions) {
		diffs = append(diffs, fmt.Sprintf("precisions %v != %v", st.Precisions, ss.Precisions))
	}
	if tol != ss.Tolerance {
		diffs = append(diffs, fmt.Sprintf("borderline %g != %g", tol, ss.Tolerance))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("session %d: the study to resume is not the one saved: %v", ss.ID, diffs)
	}
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12] + "..."
	}
	return sha
}

// claim marks the study running in this process, guarded by the state it
// was read in, so that two resumes cannot both take it.
func (s *Store) claim(ctx context.Context, ss *Session, st *engine.Study) (*Writer, error) {
	now := fmtTime(time.Now())
	note := ss.Note
	if b := st.Backend.Name(); b != ss.Backend {
		note = fmt.Sprintf("%s; resumed on %s", note, b)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE studies SET status = 'running', error = '', finished = NULL, updated = ?,
		host = ?, pid = ?, pid_start = ?, note = ? WHERE id = ? AND pid = ? AND host = ? AND status IN ('running', 'interrupted', 'cancelled', 'failed')`,
		now, s.self.Host, s.self.PID, s.self.Start, note, ss.ID, ss.PID, ss.Host)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("resume session %d", ss.ID), err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, fmt.Errorf("session %d changed while it was being resumed (another resume?): try again", ss.ID)
	}
	return newWriter(s, ss.ID, ss.Grid, st.Backend.Name(), ss.WMA), nil
}

// savedIndices returns the grid indices saved for run runID.
func (s *Store) savedIndices(ctx context.Context, runID int64, n int) (bitset, error) {
	b := make(bitset, (n+63)/64)
	rows, err := s.db.QueryContext(ctx, `SELECT idx FROM results WHERE run_id = ?`, runID)
	if err != nil {
		return nil, s.wrap("read saved results", err)
	}
	defer rows.Close()
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			return nil, s.wrap("read saved results", err)
		}
		if i >= 0 && i < n {
			b[i/64] |= 1 << (i % 64)
		}
	}
	return b, s.wrap("read saved results", rows.Err())
}

// studyParity computes the fp32-vs-fp64 parity report of study id from its
// saved runs; nil when one of them has no results.
func (s *Store) studyParity(ctx context.Context, id int64, job64 *engine.Job, tol float64) (*engine.Parity, error) {
	ss, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	var runs [2]*engine.Run
	for i, p := range []engine.Precision{engine.FP64, engine.FP32} {
		rs := ss.Run(p)
		if rs == nil {
			return nil, nil
		}
		if runs[i], err = loadRun(ctx, s.db, ss, rs); err != nil {
			return nil, s.wrap(fmt.Sprintf("read session %d", id), err)
		}
		if len(runs[i].Results) == 0 {
			return nil, nil
		}
		// Read back before finishResume, a run whose combos are all saved
		// still says running.
		if len(runs[i].Results) == ss.Grid.Len() {
			runs[i].Status = engine.StatusComplete
		}
	}
	return engine.CompareRuns(ctx, job64, runs[0], runs[1], tol)
}

func (w *Writer) added(p engine.Precision) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ln := w.lanes[p]; ln != nil {
		return ln.added + len(w.pending[p])
	}
	return 0
}

// bitset is a set of grid indices.
type bitset []uint64

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		for ; w != 0; w &= w - 1 {
			n++
		}
	}
	return n
}
