package sessions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sweepbench/engine"
)

// Batching of results: a batch is committed when it holds BatchRows combos
// or is BatchAge old, whichever comes first, so a crash loses at most one
// batch and at most BatchAge of work.
const (
	DefaultBatchRows = 512
	DefaultBatchAge  = 250 * time.Millisecond
)

// Writer saves one study while it runs: each chunk of results through
// Save (or the Sink it builds for engine.StudyOptions), then the final
// state through Finish. Safe for concurrent use.
type Writer struct {
	s    *Store
	id   int64
	grid engine.Grid

	backend string
	wma     engine.Formulation

	// BatchRows and BatchAge may be changed before the first Save.
	BatchRows int
	BatchAge  time.Duration

	mu       sync.Mutex
	kept     map[engine.Precision]bool // runs Finish leaves as saved (a resume's complete lanes)
	lanes    map[engine.Precision]*lane
	pending  map[engine.Precision][]engine.ComboResult
	npending int
	last     time.Time
	err      error // the first save error: later saves are refused with it
}

// lane is the writer's state of one run.
type lane struct {
	runID        int64
	started      time.Time     // when this process saw the lane's first chunk
	priorElapsed time.Duration // saved by earlier processes (resume)
	priorPrepare time.Duration
	best         float64 // NaN until a Sharpe is seen
	bestIdx      int
	added        int
}

func newWriter(s *Store, id int64, g engine.Grid, backend string, wma engine.Formulation) *Writer {
	return &Writer{s: s, id: id, grid: g, backend: backend, wma: wma,
		BatchRows: DefaultBatchRows, BatchAge: DefaultBatchAge,
		lanes: map[engine.Precision]*lane{}, pending: map[engine.Precision][]engine.ComboResult{}, last: time.Now()}
}

// keep leaves the saved run of precision p as it is at Finish: a resume
// passes a lane that was complete already (its device and time stay).
func (w *Writer) keep(p engine.Precision) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kept == nil {
		w.kept = map[engine.Precision]bool{}
	}
	w.kept[p] = true
}

// ID is the session id of the study being written.
func (w *Writer) ID() int64 { return w.id }

// Store is the store the writer writes to.
func (w *Writer) Store() *Store { return w.s }

// Begin records a study about to run (its Spec, dataset, the process
// running it, status running) and returns the Writer that saves it. st
// must be built by engine.Spec.Study (RunStudy validates it again); its
// Note (what is known before the run) is saved with it, and a file in
// Spec.Data is saved as an absolute path so that resume and diff work
// from another directory.
func (s *Store) Begin(ctx context.Context, st *engine.Study) (*Writer, error) {
	if st == nil || st.Dataset == nil || st.Backend == nil || len(st.Precisions) == 0 {
		return nil, errors.New("sessions: Begin needs a study with a dataset, a backend and a precision")
	}
	o, note := st.Spec, st.Note
	if o.Data == "" {
		o.Data = st.Dataset.Info.Name
	}
	if !strings.HasPrefix(o.Data, "embedded:") {
		if abs, err := filepath.Abs(o.Data); err == nil {
			o.Data = abs
		}
	}
	tol := st.Tolerance
	if tol <= 0 {
		tol = engine.DefaultBorderline
	}
	precs := make([]string, len(st.Precisions))
	for i, p := range st.Precisions {
		precs[i] = p.String()
	}
	now := fmtTime(time.Now())
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.wrap("record the study", err)
	}
	defer tx.Rollback()
	dsID, err := upsertDataset(ctx, tx, st)
	if err != nil {
		return nil, s.wrap("record the dataset", err)
	}
	g, p := st.Grid, st.Params
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO studies (created, updated, dataset_id, data_spec, tz, time_column, lean_asset, timeframe, head,
		hma_start, hma_stop, hma_step, hma3_start, hma3_stop, hma3_step, fee, mode, source, bars_per_year,
		precisions, wma, tolerance, backend, note, status, host, pid, pid_start)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?) RETURNING id`,
		now, now, dsID, o.Data, o.TZ, o.TimeColumn, o.LEANAsset, o.Timeframe, o.Head,
		g.HMA.Start, g.HMA.Stop, g.HMA.Step, g.HMA3.Start, g.HMA3.Stop, g.HMA3.Step,
		p.Fee, p.Mode.String(), p.Source.String(), p.BarsPerYear,
		strings.Join(precs, ","), st.WMA.String(), tol, st.Backend.Name(), note,
		s.self.Host, s.self.PID, s.self.Start).Scan(&id)
	if err != nil {
		return nil, s.wrap("record the study", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, s.wrap("record the study", err)
	}
	return newWriter(s, id, st.Grid, st.Backend.Name(), st.WMA), nil
}

func upsertDataset(ctx context.Context, tx *sql.Tx, st *engine.Study) (int64, error) {
	d := &st.Dataset.Info
	var id int64
	droppedAt, err := json.Marshal(append([]string{}, d.DroppedAt...))
	if err != nil {
		return 0, err
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO datasets (name, path, sha256, layout, timeframe, bars, source_bars,
		first_time, last_time, median_spacing_ns, gaps, largest_gap_ns, dropped_nan, min_price, max_price,
		files, price_scale, times, time_zone, convention, dropped_at, calendar, calendar_why)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (sha256, name, timeframe, bars, first_time, last_time) DO UPDATE SET path = excluded.path
		RETURNING id`,
		d.Name, d.Path, d.SHA256, d.Layout, d.Timeframe, d.Bars, d.SourceBars, fmtTime(d.First), fmtTime(d.Last),
		int64(d.MedianSpacing), d.Gaps, int64(d.LargestGap), d.DroppedNaN, nullable(d.MinPrice), nullable(d.MaxPrice),
		d.Files, d.PriceScale, d.Times, d.TimeZone, d.Convention, string(droppedAt), d.Calendar, d.CalendarWhy).Scan(&id)
	return id, err
}

// Save buffers a chunk of results of precision p and commits the buffer
// as one transaction when it is full or old enough. After a failed commit
// every later Save returns the same error (a *DBError).
func (w *Writer) Save(p engine.Precision, rs []engine.ComboResult) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, ok := w.lanes[p]; !ok {
		w.lanes[p] = &lane{started: time.Now(), best: math.NaN()}
	}
	w.pending[p] = append(w.pending[p], rs...)
	w.npending += len(rs)
	if w.npending >= w.BatchRows || time.Since(w.last) >= w.BatchAge {
		return w.flushLocked()
	}
	return nil
}

// Sink returns an engine.StudyOptions.Sink that saves every chunk and
// never stops the sweep: the first save error goes to onErr (once), and
// the sweep carries on unsaved, so the run being computed is never lost to
// a broken database.
func (w *Writer) Sink(onErr func(error)) func(engine.Precision, []engine.ComboResult) error {
	var once sync.Once
	return func(p engine.Precision, rs []engine.ComboResult) error {
		if err := w.Save(p, rs); err != nil && onErr != nil {
			once.Do(func() { onErr(err) })
		}
		return nil
	}
}

// Flush commits the buffered results now.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return w.flushLocked()
}

// Err is the first save error, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// insertBlock rows go in one INSERT statement: the per-statement cost of
// the driver, not SQLite, dominates single-row inserts.
const insertBlock = 64

// insertResults is the INSERT of n result rows.
func insertResults(n int) string {
	row := "(?, ?, ?, ?" + strings.Repeat(", ?", len(engine.MetricNames)) + ")"
	return `INSERT OR REPLACE INTO results (run_id, idx, hma, hma3, ` + strings.Join(engine.MetricNames, ", ") + `) VALUES ` +
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

var insertResultsBlock = insertResults(insertBlock)

// resultArgs appends the values of one row of results.
func resultArgs(args []any, runID int64, r *engine.ComboResult) []any {
	args = append(args, runID, r.Index, r.HMA, r.HMA3)
	for _, name := range engine.MetricNames {
		v, _ := r.Value(name)
		args = append(args, nullable(v))
	}
	return args
}

func (w *Writer) flushLocked() error {
	if w.npending == 0 {
		return nil
	}
	ctx := context.Background() // a cancelled sweep still saves what it computed
	now := time.Now()
	tx, err := w.s.db.BeginTx(ctx, nil)
	if err != nil {
		return w.failLocked(err)
	}
	defer tx.Rollback()
	var block *sql.Stmt // prepared on first use
	args := make([]any, 0, insertBlock*(4+len(engine.MetricNames)))
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		rows := w.pending[p]
		if len(rows) == 0 {
			continue
		}
		ln, err := w.laneLocked(ctx, tx, p, now)
		if err != nil {
			return w.failLocked(err)
		}
		for lo := 0; lo < len(rows); lo += insertBlock {
			hi := min(lo+insertBlock, len(rows))
			args = args[:0]
			for i := lo; i < hi; i++ {
				args = resultArgs(args, ln.runID, &rows[i])
			}
			if hi-lo == insertBlock {
				if block == nil {
					if block, err = tx.PrepareContext(ctx, insertResultsBlock); err != nil {
						return w.failLocked(err)
					}
					defer block.Close()
				}
				_, err = block.ExecContext(ctx, args...)
			} else {
				_, err = tx.ExecContext(ctx, insertResults(hi-lo), args...)
			}
			if err != nil {
				return w.failLocked(err)
			}
		}
		for i := range rows {
			r := &rows[i]
			if s := r.Sharpe; !math.IsNaN(s) && (math.IsNaN(ln.best) || s > ln.best || s == ln.best && r.Index < ln.bestIdx) {
				ln.best, ln.bestIdx = s, r.Index
			}
		}
		ln.added += len(rows)
		_, err = tx.ExecContext(ctx, `UPDATE runs SET done = done + ?, elapsed_ns = ?, best_sharpe = ?, best_index = ?, updated = ? WHERE id = ?`,
			len(rows), int64(ln.priorElapsed+now.Sub(ln.started)), nullable(ln.best), bestIndex(ln), fmtTime(now), ln.runID)
		if err != nil {
			return w.failLocked(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE studies SET updated = ? WHERE id = ?`, fmtTime(now), w.id); err != nil {
		return w.failLocked(err)
	}
	if err := tx.Commit(); err != nil {
		return w.failLocked(err)
	}
	clear(w.pending)
	w.npending = 0
	w.last = now
	return nil
}

func bestIndex(ln *lane) any {
	if math.IsNaN(ln.best) {
		return nil
	}
	return ln.bestIdx
}

func (w *Writer) failLocked(err error) error {
	w.err = w.s.wrap(fmt.Sprintf("save results of session %d", w.id), err)
	return w.err
}

// laneLocked returns the lane of precision p with its run row, creating
// the row on first use or taking over the existing one (resume: its saved
// time and best Sharpe carry on).
func (w *Writer) laneLocked(ctx context.Context, tx *sql.Tx, p engine.Precision, now time.Time) (*lane, error) {
	ln := w.lanes[p]
	if ln == nil {
		ln = &lane{started: now, best: math.NaN()}
		w.lanes[p] = ln
	}
	if ln.runID != 0 {
		return ln, nil
	}
	wma := w.wma
	if p == engine.FP64 {
		wma = engine.Direct
	}
	var (
		prep, elap int64
		best       sql.NullFloat64
		bestIdx    sql.NullInt64
		done       int
	)
	err := tx.QueryRowContext(ctx, `INSERT INTO runs (study_id, precision, backend, wma, status, created, updated, combos)
		VALUES (?, ?, ?, ?, 'running', ?, ?, ?)
		ON CONFLICT (study_id, precision) DO UPDATE SET status = 'running', error = '', updated = excluded.updated
		RETURNING id, done, prepare_ns, elapsed_ns, best_sharpe, best_index`,
		w.id, p.String(), w.backend, wma.String(), fmtTime(now), fmtTime(now), w.grid.Len()).
		Scan(&ln.runID, &done, &prep, &elap, &best, &bestIdx)
	if err != nil {
		return nil, err
	}
	ln.priorPrepare, ln.priorElapsed = time.Duration(prep), time.Duration(elap)
	if best.Valid && bestIdx.Valid {
		ln.best, ln.bestIdx = best.Float64, int(bestIdx.Int64)
	}
	return ln, nil
}

// Finish saves what is still buffered and the final state of the study:
// each run's status, device and timings, the parity report when there is
// one, and the study's status: complete when every requested precision
// completed, cancelled when runErr is a cancellation, failed otherwise (or
// when results could not be saved). rep may be nil when the study failed
// before anything ran. Uses its own context: a cancelled sweep is saved.
func (w *Writer) Finish(rep *engine.Report, runErr error) error {
	var (
		runs     []*engine.Run
		par      *engine.Parity
		compared string
	)
	if rep != nil {
		runs, par, compared = rep.Runs, rep.Parity, rep.ParityOf
	}
	return w.finish(runs, par, compared, runErr)
}

func (w *Writer) finish(runs []*engine.Run, par *engine.Parity, compared string, runErr error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		_ = w.flushLocked()
	}
	saveErr := w.err
	ctx := context.Background()
	now := time.Now()
	tx, err := w.s.db.BeginTx(ctx, nil)
	if err != nil {
		return w.s.wrap(fmt.Sprintf("finish session %d", w.id), err)
	}
	defer tx.Rollback()
	fail := func(err error) error { return w.s.wrap(fmt.Sprintf("finish session %d", w.id), err) }

	for _, run := range runs {
		if w.kept[run.Precision] {
			continue
		}
		ln, err := w.laneLocked(ctx, tx, run.Precision, now)
		if err != nil {
			return fail(err)
		}
		status, msg := run.Status, ""
		if run.Err != nil {
			msg = run.Err.Error()
		}
		if saveErr != nil && status == engine.StatusComplete {
			status, msg = engine.StatusFailed, "computed, but not every result was saved: "+saveErr.Error()
		}
		// The backend that computed the lane: the study's, or its fallback.
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, backend = ?, device = ?, prepare_ns = ?, elapsed_ns = ?,
			done = (SELECT count(*) FROM results WHERE run_id = ?), updated = ? WHERE id = ?`,
			string(status), msg, run.Backend, run.Device, int64(ln.priorPrepare+run.Prepare), int64(ln.priorElapsed+run.Elapsed),
			ln.runID, fmtTime(now), ln.runID)
		if err != nil {
			return fail(err)
		}
	}
	if par != nil && saveErr == nil {
		// The runs of the study, including those a resume did not touch.
		var ref, test int64
		if err := tx.QueryRowContext(ctx, `SELECT
			coalesce((SELECT id FROM runs WHERE study_id = ? AND precision = 'fp64'), 0),
			coalesce((SELECT id FROM runs WHERE study_id = ? AND precision = 'fp32'), 0)`, w.id, w.id).Scan(&ref, &test); err != nil {
			return fail(err)
		}
		if ref != 0 && test != 0 {
			if compared == "" {
				compared = "fp32 vs fp64"
			}
			if err := saveParity(ctx, tx, &w.id, ref, test, compared, par, now); err != nil {
				return fail(err)
			}
		}
	}

	var precs string
	var complete int
	if err := tx.QueryRowContext(ctx, `SELECT precisions, (SELECT count(*) FROM runs WHERE study_id = ? AND status = 'complete')
		FROM studies WHERE id = ?`, w.id, w.id).Scan(&precs, &complete); err != nil {
		return fail(err)
	}
	status, msg := engine.StatusFailed, ""
	switch {
	case saveErr != nil:
		msg = "results were not all saved: " + saveErr.Error()
	case runErr == nil && complete == len(strings.Split(precs, ",")):
		status = engine.StatusComplete
	case errors.Is(runErr, context.Canceled):
		status = engine.StatusCancelled
	}
	if msg == "" && runErr != nil {
		msg = runErr.Error()
	}
	if _, err := tx.ExecContext(ctx, `UPDATE studies SET status = ?, error = ?, finished = ?, updated = ? WHERE id = ?`,
		string(status), msg, fmtTime(now), fmtTime(now), w.id); err != nil {
		return fail(err)
	}
	// A save error was already returned by Save (or given to the Sink's
	// onErr); the study now says so.
	return fail(tx.Commit())
}
