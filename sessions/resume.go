package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
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
// those, then the parity report over every combo, and returns the report
// of the whole session as Open does.
//
// st is the session's study built again (Rebuild: its Spec, its dataset
// loaded again). Resume refuses with *DatasetChangedError when the loaded
// bars are not the ones saved (SHA-256, count, first and last time), with
// ErrComplete when there is nothing to do, and with ErrRunning when a live
// process is writing the session. It is engine.RunStudy with the saved
// results as StudyOptions.Prior: the same lanes (the fp64 one always the
// direct formulation, on the fallback backend where st's has no fp64),
// the same parity. On cancellation the combos computed so far are saved
// and the session is cancelled (resumable).
func (s *Store) Resume(ctx context.Context, id int64, st *engine.Study, opt ResumeOptions) (*engine.Report, []LaneResume, error) {
	ss, err := s.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if ss.Status == engine.StatusComplete {
		return nil, nil, fmt.Errorf("session %d is %w", id, ErrComplete)
	}
	if err := s.checkNotRunning(ss, opt.Force, "resume it"); err != nil {
		return nil, nil, err
	}
	if err := s.verify(ctx, id); err != nil {
		return nil, nil, err
	}
	if ss.gridErr != nil {
		return nil, nil, ss.gridErr
	}
	if err := sameStudy(ss, st); err != nil {
		return nil, nil, err
	}
	// The saved results, read before the session is claimed.
	prior := map[engine.Precision]*engine.Run{}
	var (
		lanes []LaneResume
		keep  []engine.Precision
	)
	for _, p := range ss.Precisions {
		ln := LaneResume{Precision: p}
		if rs := ss.Run(p); rs != nil {
			run, err := s.readRun(ctx, ss, rs)
			if err != nil {
				return nil, nil, err
			}
			if len(run.Results) == ss.Grid.Len() {
				// Every combo is saved (the process died before it
				// recorded the run complete): nothing to compute.
				run.Status, run.Err = engine.StatusComplete, nil
			}
			// The store holds the time spent so far; the writer adds
			// this process's own.
			run.Prepare, run.Elapsed = 0, 0
			prior[p] = run
			ln.Saved, ln.Complete = len(run.Results), run.Complete()
			if rs.Status == engine.StatusComplete {
				keep = append(keep, p)
			}
		}
		lanes = append(lanes, ln)
	}
	w, note, err := s.claim(ctx, ss, st)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range keep {
		w.keep(p) // recorded complete: its saved state stays as it is
	}
	for p, run := range prior {
		w.savedBefore(p, run.Results)
	}
	rs := *st
	rs.Note = note // the session's own note, not the rebuilt study's
	rep, runErr := engine.RunStudy(ctx, &rs, engine.StudyOptions{
		Progress: opt.Progress,
		Sink:     w.Save,
		Prior:    prior,
	})
	for i := range lanes {
		lanes[i].Computed = w.added(lanes[i].Precision)
	}
	if err := w.Finish(rep, runErr); err != nil && runErr == nil {
		runErr = err
	}
	if err := w.Err(); err != nil && runErr == nil {
		runErr = err // the last batches could not be saved
	}
	out, err := s.Open(context.WithoutCancel(ctx), id) // a cancelled resume still reports
	if err != nil {
		return nil, lanes, errors.Join(runErr, err)
	}
	return out, lanes, runErr
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
	if err := sameBars(ss, &st.Dataset.Info); err != nil {
		return err
	}
	tol := st.Tolerance
	if tol <= 0 {
		tol = engine.DefaultBorderline
	}
	var diffs []string
	switch {
	case sameGrid(st.Grid, ss.Grid):
	case st.Grid.Strategy == nil && ss.Grid.Strategy == nil:
		diffs = append(diffs, fmt.Sprintf("grid %s x %s != %s x %s", st.Grid.HMA, st.Grid.HMA3, ss.Grid.HMA, ss.Grid.HMA3))
	default:
		diffs = append(diffs, fmt.Sprintf("grid %s != %s", GridName(st.Grid), GridName(ss.Grid)))
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

// sameBars checks that b describes the bars session ss was computed on.
func sameBars(ss *Session, b *data.Info) error {
	a := &ss.Dataset
	switch {
	case a.SHA256 != b.SHA256:
		return &DatasetChangedError{ss.ID, ss.Spec.Data, fmt.Sprintf("sha256 %s -> %s", short(a.SHA256), short(b.SHA256))}
	case a.Bars != b.Bars || !a.First.Equal(b.First) || !a.Last.Equal(b.Last):
		return &DatasetChangedError{ss.ID, ss.Spec.Data, fmt.Sprintf("%d bars %s .. %s -> %d bars %s .. %s",
			a.Bars, a.First.Format(time.DateTime), a.Last.Format(time.DateTime), b.Bars, b.First.Format(time.DateTime), b.Last.Format(time.DateTime))}
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
// was read in, so that two resumes cannot both take it. It returns the
// Writer and the session's note from now on (with "resumed on" when the
// backend changed).
func (s *Store) claim(ctx context.Context, ss *Session, st *engine.Study) (*Writer, string, error) {
	now := fmtTime(time.Now())
	note := ss.Note
	if b := st.Backend.Name(); b != ss.Backend {
		note = engine.JoinNote(note, "resumed on "+b)
	}
	fail := func(err error) error { return s.wrap(fmt.Sprintf("resume session %d", ss.ID), err) }
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, "", fail(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE studies SET status = 'running', error = '', finished = NULL, updated = ?,
		host = ?, pid = ?, pid_start = ?, note = ? WHERE id = ? AND pid = ? AND host = ? AND status IN ('running', 'interrupted', 'cancelled', 'failed')`,
		now, s.self.Host, s.self.PID, s.self.Start, note, ss.ID, ss.PID, ss.Host)
	if err != nil {
		return nil, "", fail(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, "", fmt.Errorf("session %d changed while it was being resumed (another resume?): try again", ss.ID)
	}
	// The note as resume rewrote it (verified before: Resume).
	if err := s.stampRecord(ctx, tx, ss.ID, "note"); err != nil {
		return nil, "", fail(err)
	}
	if err := tx.Commit(); err != nil {
		return nil, "", fail(err)
	}
	return newWriter(s, ss.ID, ss.Grid, st.Backend.Name(), ss.WMA), note, nil
}

// added is how many combos of precision p Save accepted.
func (w *Writer) added(p engine.Precision) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.received[p]
}
