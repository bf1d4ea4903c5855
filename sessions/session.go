package sessions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/text"
)

// Statuses a stored study or run may have beyond the engine's complete,
// cancelled and failed.
const (
	// StatusRunning: a process is computing it now (or was, on another host).
	StatusRunning engine.Status = "running"
	// StatusInterrupted: it was running and its process is gone (kill -9, a
	// dropped SSH session, a reboot); `sessions resume` computes the rest.
	StatusInterrupted = engine.StatusInterrupted
)

// Session is one stored study (one `sweepbench run`): its dataset, its
// parameters, its state and a summary of each run, without the results.
type Session struct {
	ID       int64
	Created  time.Time
	Updated  time.Time // when the last batch was committed
	Finished time.Time // zero while running or interrupted
	// Status is running, complete, cancelled, failed or interrupted. A study
	// left running by a process that is gone reads as interrupted.
	Status engine.Status
	Error  string // why it is not complete, when known
	Host   string // the host and pid of the process that wrote it last
	PID    int

	Dataset data.Info
	// Spec is the study's description as saved: how its dataset was loaded
	// (Data absolute for a file), its grid and parameters, the backend as
	// resolved (auto -> what it picked) and bars per year as used. Resume
	// builds the study again from it (Rebuild).
	Spec engine.Spec
	// Asked is Spec as the user gave it: its backend and bars per year as
	// asked (auto, 0 = derived from the data), the rest as Spec. A session
	// saved before schema v10 did not keep them: its backend reads as
	// resolved, its bars per year as 0 when it is what the data derive.
	Asked  engine.Spec
	Grid   engine.Grid
	Params engine.Params
	// BuyHold is the study's bars' buy-and-hold return (engine.Report's
	// BuyHold); NaN for a study saved before it was recorded (schema v15).
	BuyHold    float64
	Precisions []engine.Precision // as requested, fp64 first
	WMA        engine.Formulation // of the fp32 run
	Backend    string
	Tolerance  float64 // parity borderline margin
	Note       string
	Runs       []RunSummary // the runs started so far, fp64 first
	// Parity is the verdict of the study's own parity report (fp32 vs
	// fp64, SPEC "Parity"): "pass" or "collapse"; "" when it has none
	// (one precision, or not finished).
	Parity string

	// Unverified names the parts of the session that no digest covers,
	// read as saved: "results" for a session saved before schema version
	// 3 (a run without a digest), then every part of the record digests
	// (settings, dataset, note, robustness summary, parity report) for a
	// session saved before schema version 12; none for one saved since.
	// Only a session below the file's epochs (recorddigest.go) can have
	// any: one saved since without a digest is refused when read.
	Unverified []string

	proc          process
	digestVersion int   // studies.digest_version
	gridErr       error // why a strategy study's grid cannot be built again (Grid is then empty)
}

// GridErr is why the grid of a strategy study cannot be built again here
// (its family not linked into the program, its parameters refused): its
// results cannot be read. nil for every other session.
func (s *Session) GridErr() error { return s.gridErr }

// RunSummary describes one stored run (one precision of a study).
type RunSummary struct {
	ID         int64
	Precision  engine.Precision
	Backend    string
	Device     string
	WMA        engine.Formulation
	Status     engine.Status
	Error      string
	Done       int // combos saved
	Combos     int // combos in the grid
	Prepare    time.Duration
	Elapsed    time.Duration // summed over the processes that worked on it
	BestSharpe float64       // NaN when no combo has a Sharpe
	Best       engine.Combo  // the combo of BestSharpe (zero for a strategy grid: see BestIndex)
	BestIndex  int           // the grid index of BestSharpe's combo; -1 when none
}

// Run returns the summary of the run of precision p, or nil.
func (s *Session) Run(p engine.Precision) *RunSummary {
	for i := range s.Runs {
		if s.Runs[i].Precision == p {
			return &s.Runs[i]
		}
	}
	return nil
}

// Done returns the combos saved and the combos requested, over every
// precision of the study.
func (s *Session) Done() (done, total int) {
	for _, r := range s.Runs {
		done += r.Done
	}
	return done, s.Grid.Len() * len(s.Precisions)
}

// Best returns the best Sharpe of the study: of the fp64 run when it has
// one (the reference), else of the first run with one.
func (s *Session) Best() (sharpe float64, c engine.Combo, p engine.Precision, ok bool) {
	if r := s.Run(engine.FP64); r != nil && !math.IsNaN(r.BestSharpe) {
		return r.BestSharpe, r.Best, r.Precision, true
	}
	for _, r := range s.Runs {
		if !math.IsNaN(r.BestSharpe) {
			return r.BestSharpe, r.Best, r.Precision, true
		}
	}
	return math.NaN(), engine.Combo{}, 0, false
}

// BestLabel is Best's combo by its parameters as the grid names it
// ("hma 20, hma3 30"; "fast ema 20, slow sma 100"), with its Sharpe and
// precision; ok false when no run has a Sharpe.
func (s *Session) BestLabel() (sharpe float64, label string, p engine.Precision, ok bool) {
	sharpe, _, p, ok = s.Best()
	if !ok {
		return sharpe, "", p, false
	}
	r := s.Run(p)
	if r == nil || r.BestIndex < 0 || r.BestIndex >= s.Grid.Len() {
		return sharpe, "", p, false
	}
	return sharpe, s.Grid.Label(r.BestIndex), p, true
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const sessionColumns = `s.id, s.created, s.updated, s.finished, s.status, s.error, s.host, s.pid, s.pid_start,
	s.data_spec, s.tz, s.time_column, s.lean_asset, s.timeframe, s.head, s.window_from, s.window_to,
	s.objective, s.min_trades, s.max_drawdown, s.blocks, s.wf, s.suite,
	s.hma_start, s.hma_stop, s.hma_step, s.hma3_start, s.hma3_stop, s.hma3_step,
	s.fee, s.mode, s.source, s.bars_per_year, s.precisions, s.wma, s.tolerance, s.backend, s.note,
	s.asked_backend, s.asked_bars_per_year, s.digest_version, s.strategy, s.params, s.fast_below_slow, s.fill, s.slippage, s.risk_free, s.buy_hold,
	d.name, d.path, d.sha256, d.layout, d.timeframe, d.bars, d.source_bars, d.first_time, d.last_time,
	d.median_spacing_ns, d.gaps, d.largest_gap_ns, d.dropped_nan, d.min_price, d.max_price,
	d.files, d.price_scale, d.times, d.time_zone, d.convention, d.dropped_at, d.calendar, d.calendar_why,
	COALESCE((SELECT p.verdict FROM parities p WHERE p.study_id = s.id ORDER BY p.id DESC LIMIT 1), '')`

const sessionFrom = ` FROM studies s JOIN datasets d ON d.id = s.dataset_id`

type scanner interface{ Scan(dest ...any) error }

func scanSession(sc scanner) (*Session, error) {
	var (
		s                                Session
		created, updated, first, last    string
		finished                         sql.NullString
		status, mode, source, precs, wma string
		minP, maxP                       sql.NullFloat64
		askedBackend                     sql.NullString
		askedBPY                         sql.NullFloat64
		digestVersion                    int
		family, params                   string
		fastBelowSlow                    bool
		fill                             string
		buyHold                          sql.NullFloat64
		medianNs, largestNs              int64
		droppedAt                        string
		di                               = &s.Dataset
		g                                = &s.Grid
	)
	err := sc.Scan(&s.ID, &created, &updated, &finished, &status, &s.Error, &s.Host, &s.PID, &s.proc.Start,
		&s.Spec.Data, &s.Spec.TZ, &s.Spec.TimeColumn, &s.Spec.LEANAsset, &s.Spec.Timeframe, &s.Spec.Head, &s.Spec.From, &s.Spec.To,
		&s.Spec.Objective, &s.Spec.MinTrades, &s.Spec.MaxDrawdown, &s.Spec.Blocks, &s.Spec.WF, &s.Spec.Suite,
		&g.HMA.Start, &g.HMA.Stop, &g.HMA.Step, &g.HMA3.Start, &g.HMA3.Stop, &g.HMA3.Step,
		&s.Params.Fee, &mode, &source, &s.Params.BarsPerYear, &precs, &wma, &s.Tolerance, &s.Backend, &s.Note,
		&askedBackend, &askedBPY, &digestVersion, &family, &params, &fastBelowSlow, &fill, &s.Params.Slippage, &s.Params.RiskFree, &buyHold,
		&di.Name, &di.Path, &di.SHA256, &di.Layout, &di.Timeframe, &di.Bars, &di.SourceBars, &first, &last,
		&medianNs, &di.Gaps, &largestNs, &di.DroppedNaN, &minP, &maxP,
		&di.Files, &di.PriceScale, &di.Times, &di.TimeZone, &di.Convention, &droppedAt, &di.Calendar, &di.CalendarWhy,
		&s.Parity)
	if err != nil {
		return nil, err
	}
	s.Created, s.Updated = parseTime(created), parseTime(updated)
	s.digestVersion = digestVersion
	if finished.Valid {
		s.Finished = parseTime(finished.String)
	}
	s.Status = engine.Status(status)
	s.proc.Host, s.proc.PID = s.Host, s.PID
	di.First, di.Last = parseTime(first), parseTime(last)
	di.MedianSpacing, di.LargestGap = time.Duration(medianNs), time.Duration(largestNs)
	di.MinPrice, di.MaxPrice = fromNull(minP), fromNull(maxP)
	if err := json.Unmarshal([]byte(droppedAt), &di.DroppedAt); err != nil {
		return nil, fmt.Errorf("session %d: dropped_at %q: %w", s.ID, droppedAt, err)
	}
	if s.Params.Mode, err = engine.ParseMode(mode); err != nil {
		return nil, fmt.Errorf("session %d: %w", s.ID, err)
	}
	if s.Params.Source, err = engine.ParseSource(source); err != nil {
		return nil, fmt.Errorf("session %d: %w", s.ID, err)
	}
	s.BuyHold = fromNull(buyHold)
	if s.Params.Fill, err = engine.ParseFill(fill); err != nil {
		return nil, fmt.Errorf("session %d: %w", s.ID, err)
	}
	if s.Params.Fill != engine.FillClose { // "" is the default, as a Spec given leaves it
		s.Spec.Fill = s.Params.Fill.String()
	}
	s.Spec.Slippage, s.Spec.RiskFree = s.Params.Slippage, s.Params.RiskFree
	if s.WMA, err = engine.ParseFormulation(wma); err != nil {
		return nil, fmt.Errorf("session %d: %w", s.ID, err)
	}
	for _, p := range strings.Split(precs, ",") {
		ps, err := engine.ParsePrecisions(p)
		if err != nil || len(ps) != 1 {
			return nil, fmt.Errorf("session %d: precisions %q", s.ID, precs)
		}
		s.Precisions = append(s.Precisions, ps[0])
	}
	s.Spec.HMA, s.Spec.HMA3 = g.HMA.String(), g.HMA3.String()
	if family != "" {
		// A strategy study: its hma_* columns are the Spec's hull ranges,
		// unused (0 when it had none); its grid is the family's.
		if g.HMA == (engine.Range{}) {
			s.Spec.HMA = ""
		}
		if g.HMA3 == (engine.Range{}) {
			s.Spec.HMA3 = ""
		}
		s.Spec.Strategy, s.Spec.FastBelowSlow = family, fastBelowSlow
		var grid engine.Grid
		grid, s.Spec.Params, s.gridErr = strategyGrid(family, params, fastBelowSlow)
		if s.gridErr != nil {
			s.gridErr = fmt.Errorf("session %d: %w", s.ID, s.gridErr)
		}
		s.Grid = grid
	}
	s.Spec.Fee, s.Spec.Mode, s.Spec.Source, s.Spec.BarsPerYear = s.Params.Fee, mode, source, s.Params.BarsPerYear
	s.Spec.Backend, s.Spec.WMA, s.Spec.Borderline = s.Backend, wma, s.Tolerance
	s.Spec.Precision = precisionSpec(s.Precisions)
	s.Asked = s.Spec
	if askedBackend.Valid {
		s.Asked.Backend = askedBackend.String
	}
	switch {
	case askedBPY.Valid:
		s.Asked.BarsPerYear = askedBPY.Float64
	case engine.BarsPerYearRule(di, s.Spec.BarsPerYear) != "as given":
		s.Asked.BarsPerYear = 0 // before v10: what the data derive
	}
	return &s, nil
}

const runColumns = `r.id, r.study_id, r.precision, r.backend, r.device, r.wma, r.status, r.error,
	r.combos, r.done, r.prepare_ns, r.elapsed_ns, r.best_sharpe, r.best_index`

func scanRun(sc scanner, g func(studyID int64) engine.Grid) (studyID int64, r RunSummary, err error) {
	var (
		prec, wma, status string
		prepNs, elapNs    int64
		best              sql.NullFloat64
		bestIdx           sql.NullInt64
	)
	err = sc.Scan(&r.ID, &studyID, &prec, &r.Backend, &r.Device, &wma, &status, &r.Error,
		&r.Combos, &r.Done, &prepNs, &elapNs, &best, &bestIdx)
	if err != nil {
		return 0, r, err
	}
	r.Precision = parsePrecision(prec)
	r.WMA, _ = engine.ParseFormulation(wma)
	r.Status = engine.Status(status)
	r.Prepare, r.Elapsed = time.Duration(prepNs), time.Duration(elapNs)
	r.BestSharpe = fromNull(best)
	r.BestIndex = -1
	if bestIdx.Valid && best.Valid {
		r.Best = g(studyID).At(int(bestIdx.Int64))
		r.BestIndex = int(bestIdx.Int64)
	}
	return studyID, r, nil
}

func parsePrecision(s string) engine.Precision {
	if s == "fp32" {
		return engine.FP32
	}
	return engine.FP64
}

// fromNull reads a nullable REAL: NULL is NaN (SQLite stores a NaN as NULL).
func fromNull(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}

// nullable writes a float for a REAL column: NaN as NULL, explicitly.
func nullable(v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	return v
}

// ListOptions select the sessions List returns.
type ListOptions struct {
	Limit int // newest first; 0 = all
	// Suite, when set, keeps only the sessions of the suite of that id
	// (suite.SuiteID: their Spec.Suite is "Suite D/N").
	Suite string
}

// List returns the stored sessions, newest first, each with its runs'
// summaries (no results). A session whose writer is gone reads as
// interrupted.
func (s *Store) List(ctx context.Context, opt ListOptions) ([]Session, error) {
	s.reap(ctx)
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.wrap("list sessions", err)
	}
	defer tx.Rollback()
	limit := opt.Limit
	if limit <= 0 {
		limit = -1
	}
	where, args := "", []any{limit}
	if opt.Suite != "" {
		where, args = ` WHERE substr(s.suite, 1, length(?) + 1) = ? || ' '`, []any{opt.Suite, opt.Suite, limit}
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+sessionColumns+sessionFrom+where+` ORDER BY s.id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, s.wrap("list sessions", err)
	}
	var out []Session
	byID := map[int64]int{}
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			rows.Close()
			return nil, s.wrap("list sessions", err)
		}
		byID[ss.ID] = len(out)
		out = append(out, *ss)
	}
	if err := rows.Close(); err != nil {
		return nil, s.wrap("list sessions", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	rows, err = tx.QueryContext(ctx, `SELECT `+runColumns+` FROM runs r WHERE r.study_id >= ?
		ORDER BY r.study_id, CASE r.precision WHEN 'fp64' THEN 0 ELSE 1 END`, out[len(out)-1].ID)
	if err != nil {
		return nil, s.wrap("list sessions", err)
	}
	defer rows.Close()
	grid := func(id int64) engine.Grid { return out[byID[id]].Grid }
	for rows.Next() {
		id, r, err := scanRun(rows, func(id int64) engine.Grid {
			if _, ok := byID[id]; !ok {
				return engine.Grid{HMA: engine.Range{Step: 1}, HMA3: engine.Range{Step: 1}}
			}
			return grid(id)
		})
		if err != nil {
			return nil, s.wrap("list sessions", err)
		}
		if i, ok := byID[id]; ok {
			out[i].Runs = append(out[i].Runs, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("list sessions", err)
	}
	if err := rows.Close(); err != nil {
		return nil, s.wrap("list sessions", err)
	}
	e, err := readEpochs(ctx, tx)
	if err != nil {
		return nil, s.wrap("list sessions", err)
	}
	nullRuns := map[int64]bool{}
	rows, err = tx.QueryContext(ctx, `SELECT DISTINCT study_id FROM runs WHERE digest IS NULL AND study_id >= ? AND study_id < ?`, out[len(out)-1].ID, e.runs)
	if err != nil {
		return nil, s.wrap("list sessions", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, s.wrap("list sessions", err)
		}
		nullRuns[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("list sessions", err)
	}
	for i := range out {
		markUnverified(&out[i], e, nullRuns[out[i].ID])
		s.settle(&out[i])
	}
	return out, nil
}

// Get returns one session with its runs' summaries.
func (s *Store) Get(ctx context.Context, id int64) (*Session, error) {
	s.reap(ctx)
	ss, err := getSession(ctx, s.db, id)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("read session %d", id), err)
	}
	s.settle(ss)
	return ss, nil
}

func getSession(ctx context.Context, q querier, id int64) (*Session, error) {
	ss, err := scanSession(q.QueryRowContext(ctx, `SELECT `+sessionColumns+sessionFrom+` WHERE s.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+runColumns+` FROM runs r WHERE r.study_id = ?
		ORDER BY CASE r.precision WHEN 'fp64' THEN 0 ELSE 1 END`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		_, r, err := scanRun(rows, func(int64) engine.Grid { return ss.Grid })
		if err != nil {
			return nil, err
		}
		ss.Runs = append(ss.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	e, err := readEpochs(ctx, q)
	if err != nil {
		return nil, err
	}
	nullRuns := false
	if ss.ID < e.runs {
		if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE study_id = ? AND digest IS NULL)`, id).Scan(&nullRuns); err != nil {
			return nil, err
		}
	}
	markUnverified(ss, e, nullRuns)
	return ss, nil
}

// settle reports a study whose writer is gone as interrupted, even where
// the file could not be updated (read-only).
func (s *Store) settle(ss *Session) {
	if ss.Status != StatusRunning || s.liveness(ss.proc) != dead {
		return
	}
	ss.Status = StatusInterrupted
	for i := range ss.Runs {
		if ss.Runs[i].Status == StatusRunning {
			ss.Runs[i].Status = StatusInterrupted
		}
	}
}

// reap marks the studies left running by a process of this host that is
// gone as interrupted, with their running runs. Best effort: a read-only
// file is left as it is (settle still reports them interrupted).
func (s *Store) reap(ctx context.Context) {
	if s.readOnly {
		return
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, host, pid, pid_start FROM studies WHERE status = 'running'`)
	if err != nil {
		return
	}
	type gone struct {
		id  int64
		pid int
	}
	var stale []gone
	for rows.Next() {
		var id int64
		var p process
		if rows.Scan(&id, &p.Host, &p.PID, &p.Start) == nil && s.liveness(p) == dead {
			stale = append(stale, gone{id, p.PID})
		}
	}
	rows.Close()
	if len(stale) == 0 {
		return
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return
	}
	defer tx.Rollback()
	now := fmtTime(time.Now())
	for _, g := range stale {
		// The status and pid guard against a resume that claimed it meanwhile.
		res, err := tx.ExecContext(ctx, `UPDATE studies SET status = 'interrupted', updated = ? WHERE id = ? AND status = 'running' AND pid = ?`,
			now, g.id, g.pid)
		if err != nil {
			return
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', updated = ? WHERE study_id = ? AND status = 'running'`,
			now, g.id); err != nil {
			return
		}
	}
	_ = tx.Commit()
}

// ErrRunning is returned (wrapped) when an operation needs a study that no
// live process is writing.
var ErrRunning = errors.New("still running")

// Delete removes a session: its study, runs, results and parity, and its
// dataset row when no other session uses it. A session that a live process
// is writing is refused, as is one marked running by another host unless
// force is set.
func (s *Store) Delete(ctx context.Context, id int64, force bool) error {
	ss, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := s.checkNotRunning(ss, force, "remove it"); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(fmt.Sprintf("remove session %d", id), err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM studies WHERE id = ?`, id); err != nil {
		return s.wrap(fmt.Sprintf("remove session %d", id), err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM datasets WHERE id NOT IN (SELECT dataset_id FROM studies)`); err != nil {
		return s.wrap(fmt.Sprintf("remove session %d", id), err)
	}
	return s.wrap(fmt.Sprintf("remove session %d", id), tx.Commit())
}

// checkNotRunning refuses a study that a live process is writing, or that
// another host marked running (unless force).
func (s *Store) checkNotRunning(ss *Session, force bool, what string) error {
	if ss.Status != StatusRunning {
		return nil
	}
	switch s.liveness(ss.proc) {
	case alive:
		return &RunningError{ID: ss.ID, Host: ss.Host, PID: ss.PID, Checked: true, Action: what}
	case unknown:
		if !force {
			return &RunningError{ID: ss.ID, Host: ss.Host, PID: ss.PID, Action: what}
		}
	}
	return nil
}

// RunningError refuses an operation on a session that a process is
// writing: one seen alive (Checked), or one on another host whose process
// cannot be checked from here, which forcing takes over when it is gone.
// errors.Is(err, ErrRunning) holds.
type RunningError struct {
	ID      int64
	Host    string
	PID     int
	Checked bool   // the process was seen alive on this host
	Action  string // what was refused, e.g. "resume it"
}

func (e *RunningError) Error() string {
	if e.Checked {
		return fmt.Sprintf("session %d is %v (pid %d on %s): stop that process first, then %s", e.ID, ErrRunning, e.PID, e.Host, e.Action)
	}
	return fmt.Sprintf("session %d is marked %v by host %s (pid %d), which cannot be checked from here: if that process is gone, force it to %s",
		e.ID, ErrRunning, e.Host, e.PID, e.Action)
}

func (e *RunningError) Unwrap() error { return ErrRunning }

// precisionSpec is the Spec.Precision of a list of precisions: "both" for
// fp64 and fp32, else the one.
func precisionSpec(ps []engine.Precision) string {
	if len(ps) == 1 {
		return ps[0].String()
	}
	return "both"
}

// ListSettings is what a session asked beyond its fee, mode, source and
// backend, for a list's settings column (`sessions ls` and the
// workbench's sessions screen): ExecSettings then SelectionSettings, so
// that two studies of one grid that differ in it are told apart.
func ListSettings(ss *Session) string { return ExecSettings(ss) + SelectionSettings(ss) }

// ExecSettings is SPEC Part 2's execution options of a session, those not
// at their default: ", fill next-open, slippage 0.02%, risk-free 4%" ("" for
// none).
func ExecSettings(ss *Session) string {
	var b strings.Builder
	if ss.Params.Fill != engine.FillClose {
		b.WriteString(", fill " + ss.Params.Fill.String())
	}
	if q := ss.Params.Slippage; q != 0 {
		b.WriteString(", slippage " + text.FormatFloat(100*q) + "%")
	}
	if rf := ss.Params.RiskFree; rf != 0 {
		b.WriteString(", risk-free " + text.FormatFloat(100*rf) + "%")
	}
	return b.String()
}

// SelectionSettings is what a session asked of its selection: ",
// objective sortino, min trades 400, max drawdown 30%," then
// BlockSettings, each part only when set ("" for none).
func SelectionSettings(ss *Session) string {
	var b strings.Builder
	if o := ss.Spec.Objective; o != "" && o != "sharpe" {
		b.WriteString(", objective " + o)
	}
	if n := ss.Spec.MinTrades; n > 0 {
		fmt.Fprintf(&b, ", min trades %d", n)
	}
	if dd := ss.Spec.MaxDrawdown; dd > 0 {
		b.WriteString(", max drawdown " + text.FormatFloat(100*dd) + "%")
	}
	return b.String() + BlockSettings(ss)
}

// BlockSettings is a session's robustness blocks, walk-forward and suite:
// ", blocks 16, wf rolling:8, suite 3fa2c9e1b0d4 2/5" ("" for none).
func BlockSettings(ss *Session) string {
	var b strings.Builder
	if n := ss.Spec.Blocks; n > 0 {
		fmt.Fprintf(&b, ", blocks %d", n)
	}
	if wf := ss.Spec.WF; wf != "" {
		b.WriteString(", wf " + wf)
	}
	if su := ss.Spec.Suite; su != "" {
		b.WriteString(", suite " + su)
	}
	return b.String()
}

// IDList names sessions ids for a message: "session 9", "sessions 9, 10"
// (the command line and the workbench say them alike).
func IDList(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	if len(ids) == 1 {
		return "session " + s[0]
	}
	return "sessions " + strings.Join(s, ", ")
}
