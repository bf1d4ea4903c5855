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

// Batching of results: Save hands its buffer to the committer as one
// batch when it holds BatchRows combos or when a chunk arrives BatchAge
// after the last hand-off, whichever comes first.
const (
	DefaultBatchRows = 512
	DefaultBatchAge  = 250 * time.Millisecond
)

// QueueDepth is how many batches may wait for the committer. When they
// are all waiting, Save blocks (the sweep waits for the disk) until the
// committer takes them: memory stays bounded however fast the backend.
const QueueDepth = 2

// Writer saves one study while it runs: each chunk of results through
// Save (or the Sink it builds for engine.StudyOptions), then the final
// state through Finish. Safe for concurrent use.
//
// Saving runs beside the sweep: Save only copies the chunk into a buffer
// and, when the buffer is a batch, queues it (at most QueueDepth batches
// wait) for a goroutine that commits them, each in a transaction of its
// own, or several at once when it fell behind (up to QueueDepth+1). A
// batch is stored as one blob per precision (resultbatch.go): about 90
// bytes and 0.75 us of CPU a combo in all, the blobs encoded and the
// digest's hashes taken on the other cores while the committer inserts
// (encoders.go), the copying into the database file (the WAL's
// checkpoints) on a goroutine of its own (checkpoint.go; docs/PERFORMANCE.md,
// "Saving beside the sweep"). The sweep waits for SQLite only when the
// queue is full. Finish must be called once the study ends: it drains the
// queue and stops the goroutine. A kill -9 loses what is not committed:
// the buffer being filled (under one batch or one chunk), the batches
// waiting and the transaction being committed: at most 2*QueueDepth+2
// batches, 3,072 combos at the default batch size for CPU-sized chunks (a
// GPU hands over larger chunks, each one batch). A resume computes them
// again.
type Writer struct {
	s    *Store
	id   int64
	grid engine.Grid

	backend string
	wma     engine.Formulation

	// BatchRows and BatchAge may be changed before the first Save.
	BatchRows int
	BatchAge  time.Duration

	// mu guards what Save fills and the hand-off to the committer (a
	// batch is queued under it, so that Flush's marker follows every
	// batch handed off before it). The committer never takes it.
	mu       sync.Mutex
	kept     map[engine.Precision]bool  // runs Finish leaves as saved (a resume's complete lanes)
	prior    map[engine.Precision]spans // the combos a resume found saved, until the lane takes them
	pending  []part                     // the buffer: one part per precision, in arrival order
	npending int
	last     time.Time // of the last hand-off
	seen     map[engine.Precision]time.Time
	received map[engine.Precision]int // combos Save accepted
	queue    chan *batch              // nil until the first hand-off
	done     chan struct{}            // closed when the committer has returned
	ckpt     *checkpointer            // started with the committer (checkpoint.go)
	finished bool

	errMu sync.Mutex
	err   error // the first save error: later saves are refused with it

	// lanes belong to the committer while it runs, then to finish.
	lanes map[engine.Precision]*lane
	// unckpt is what the committer committed since it last asked for a
	// checkpoint, in bytes of blobs.
	unckpt int
}

// part is the rows of one precision in a batch.
type part struct {
	p       engine.Precision
	rows    []engine.ComboResult
	started time.Time // when Save saw the lane's first chunk
}

// batch is what the committer commits in one transaction (or joins with
// the batches waiting behind it). A batch with ack set is Flush's: ack is
// closed once it (and so everything queued before it) is committed or
// refused.
type batch struct {
	parts []part
	ack   chan struct{}
}

// lane is the committer's state of one run.
type lane struct {
	runID        int64
	started      time.Time     // when this process saw the lane's first chunk
	priorElapsed time.Duration // saved by earlier processes (resume)
	priorPrepare time.Duration
	best         float64 // NaN until a Sharpe is seen
	bestIdx      int
	digest       digest
	hasDigest    bool  // false for a run saved before digests (NULL): it stays unverified
	saved        spans // the combos saved (after a failed commit, tried): a combo is saved once
}

func newWriter(s *Store, id int64, g engine.Grid, backend string, wma engine.Formulation) *Writer {
	return &Writer{s: s, id: id, grid: g, backend: backend, wma: wma,
		BatchRows: DefaultBatchRows, BatchAge: DefaultBatchAge, last: time.Now(),
		seen: map[engine.Precision]time.Time{}, received: map[engine.Precision]int{},
		lanes: map[engine.Precision]*lane{}}
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

// savedBefore tells the writer of a resumed study which combos of the run
// of precision p are saved (rs, in index order): saving one of them again
// fails. Called before the first Save.
func (w *Writer) savedBefore(p engine.Precision, rs []engine.ComboResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.prior == nil {
		w.prior = map[engine.Precision]spans{}
	}
	var s spans
	s.addRows(rs)
	w.prior[p] = s
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
	if g.Strategy != nil {
		// A strategy study keeps the Spec's hull ranges, unused, in the
		// hma_* columns (0 where it has none): its grid is the family's.
		g.HMA, _ = engine.ParseRange(engine.FieldHMA, o.HMA)
		g.HMA3, _ = engine.ParseRange(engine.FieldHMA3, o.HMA3)
	}
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO studies (created, updated, dataset_id, data_spec, tz, time_column, lean_asset, timeframe, head,
		window_from, window_to, objective, min_trades, max_drawdown, blocks, wf,
		hma_start, hma_stop, hma_step, hma3_start, hma3_stop, hma3_step, fee, mode, source, bars_per_year,
		precisions, wma, tolerance, backend, note, asked_backend, asked_bars_per_year, suite, status, host, pid, pid_start)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?) RETURNING id`,
		now, now, dsID, o.Data, o.TZ, o.TimeColumn, o.LEANAsset, o.Timeframe, o.Head, o.From, o.To, o.Objective, o.MinTrades, o.MaxDrawdown, o.Blocks, o.WF,
		g.HMA.Start, g.HMA.Stop, g.HMA.Step, g.HMA3.Start, g.HMA3.Stop, g.HMA3.Step,
		p.Fee, p.Mode.String(), p.Source.String(), p.BarsPerYear,
		strings.Join(precs, ","), st.WMA.String(), tol, st.Backend.Name(), note, orAuto(o.Backend), o.BarsPerYear, o.Suite,
		s.self.Host, s.self.PID, s.self.Start).Scan(&id)
	if err != nil {
		return nil, s.wrap("record the study", err)
	}
	family, params, fastBelowSlow, err := strategyColumns(st.Grid)
	if err != nil {
		return nil, s.wrap("record the study", err)
	}
	switch {
	case s.schema >= strategySchema:
		if _, err := tx.ExecContext(ctx, `UPDATE studies SET strategy = ?, params = ?, fast_below_slow = ? WHERE id = ?`,
			family, params, fastBelowSlow, id); err != nil {
			return nil, s.wrap("record the study", err)
		}
	case family != "":
		return nil, s.wrap("record the study", fmt.Errorf("a %s study needs schema version %d (this file is at %d)", family, strategySchema, s.schema))
	}
	switch {
	case s.schema >= executionSchema:
		if _, err := tx.ExecContext(ctx, `UPDATE studies SET fill = ?, slippage = ?, risk_free = ?, buy_hold = ? WHERE id = ?`,
			p.Fill.String(), p.Slippage, p.RiskFree, nullable(engine.BuyHoldReturn(&st.Dataset.Bars)), id); err != nil {
			return nil, s.wrap("record the study", err)
		}
	case !p.Part1():
		return nil, s.wrap("record the study", fmt.Errorf("a study with fill, slippage or a risk-free rate needs schema version %d (this file is at %d)", executionSchema, s.schema))
	}
	if s.schema >= recordSchema {
		if _, err := tx.ExecContext(ctx, `UPDATE studies SET digest_version = ? WHERE id = ?`, s.writeVersion(), id); err != nil {
			return nil, s.wrap("record the study", err)
		}
		if err := s.stampRecord(ctx, tx, id); err != nil {
			return nil, s.wrap("record the study", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, s.wrap("record the study", err)
	}
	return newWriter(s, id, st.Grid, st.Backend.Name(), st.WMA), nil
}

// orAuto is a Spec's backend as asked: "" is auto.
func orAuto(b string) string {
	if b == "" {
		return "auto"
	}
	return b
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

// errFinished refuses a Save after Finish.
var errFinished = errors.New("sessions: results saved after the session was finished")

// Save copies a chunk of results of precision p into the buffer and, when
// the buffer holds BatchRows combos or BatchAge passed since the last
// hand-off, queues it for the committer; it blocks only while QueueDepth
// batches are waiting. rs is not retained. A failed commit is seen by the
// next Save (or Flush, or Finish): from then on every Save returns that
// error (a *DBError) and keeps nothing.
func (w *Writer) Save(p engine.Precision, rs []engine.ComboResult) error {
	if err := w.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished {
		return errFinished
	}
	if _, ok := w.seen[p]; !ok {
		w.seen[p] = time.Now()
	}
	w.received[p] += len(rs)
	if n := len(w.pending); n > 0 && w.pending[n-1].p == p {
		w.pending[n-1].rows = append(w.pending[n-1].rows, rs...)
	} else {
		w.pending = append(w.pending, part{p: p, rows: append([]engine.ComboResult(nil), rs...), started: w.seen[p]})
	}
	w.npending += len(rs)
	if w.npending >= w.BatchRows || time.Since(w.last) >= w.BatchAge {
		w.handOffLocked(nil)
	}
	return nil
}

// handOffLocked queues the buffer as a batch (with ack, Flush's marker,
// even when the buffer is empty), starting the committer on first use.
// It blocks while the queue is full.
func (w *Writer) handOffLocked(ack chan struct{}) {
	if w.npending == 0 && ack == nil {
		return
	}
	if w.queue == nil {
		w.queue, w.done = make(chan *batch, QueueDepth), make(chan struct{})
		w.ckpt = w.s.startCheckpointer()
		go w.commit()
	}
	w.queue <- &batch{parts: w.pending, ack: ack}
	w.pending, w.npending, w.last = nil, 0, time.Now()
}

// commit is the committer: it commits the queued batches in order, each
// in one transaction, joining those already waiting when it fell behind.
// After a failure it only drains the queue (the batches are refused).
func (w *Writer) commit() {
	defer close(w.done)
	// One connection for every commit: SQLite drops a connection's page
	// cache when another one wrote the file since its last transaction, so
	// commits that took turns on the pool's connections read the pages
	// they update again each time.
	// Its commits leave the checkpoints to the checkpointer.
	ctx := context.Background()
	conn, err := w.s.db.Conn(ctx)
	if err != nil {
		w.fail(err)
	} else {
		defer conn.Close()
		defer noAutoCheckpoint(ctx, conn)()
	}
	for b := range w.queue {
		group := []*batch{b}
	join:
		for len(group) <= QueueDepth {
			select {
			case next, ok := <-w.queue:
				if !ok {
					break join
				}
				group = append(group, next)
			default:
				break join
			}
		}
		if w.Err() == nil {
			if err := w.commitGroup(conn, group); err != nil {
				w.fail(err)
			} else if w.unckpt >= checkpointBytes {
				w.ckpt.ask()
				w.unckpt = 0
			}
		}
		for _, g := range group {
			if g.ack != nil {
				close(g.ack)
			}
		}
	}
}

// Sink returns an engine.StudyOptions.Sink that saves every chunk and
// never stops the sweep: the first save error goes to onErr (once), when a
// later chunk finds it, and the sweep carries on unsaved, so the run being
// computed is never lost to a broken database. An error found only when
// the last batches are committed is Finish's to see (Err).
func (w *Writer) Sink(onErr func(error)) func(engine.Precision, []engine.ComboResult) error {
	var once sync.Once
	return func(p engine.Precision, rs []engine.ComboResult) error {
		if err := w.Save(p, rs); err != nil && onErr != nil {
			once.Do(func() { onErr(err) })
		}
		return nil
	}
}

// Flush commits everything saved so far and returns the first save
// error, if any.
func (w *Writer) Flush() error {
	w.mu.Lock()
	if w.finished || w.Err() != nil {
		w.mu.Unlock()
		return w.Err()
	}
	ack := make(chan struct{})
	w.handOffLocked(ack)
	w.mu.Unlock()
	<-ack
	return w.Err()
}

// Err is the first save error, or nil.
func (w *Writer) Err() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

func (w *Writer) fail(err error) {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.err == nil {
		w.err = w.s.wrap(fmt.Sprintf("save results of session %d", w.id), err)
	}
}

// insertBatch stores one blob of a run's results (resultbatch.go). A
// combo is saved once (a resume skips those saved): a batch that holds one
// again fails (the lane's spans, and the primary key for a batch saved
// twice) rather than add it, so that the run's digest, a sum over its
// rows, stays the digest of the rows in the table.
const insertBatch = `INSERT INTO result_batches (run_id, first_idx, last_idx, rows, data) VALUES (?, ?, ?, ?, ?)`

// commitGroup commits the batches of group in one transaction: their
// rows, and per run the count, time, best Sharpe and digest they add. A
// panic in the driver becomes the error (it would otherwise kill the
// process, the study with it).
func (w *Writer) commitGroup(conn *sql.Conn, group []*batch) (err error) {
	var created []*lane // run rows this transaction made: gone if it fails
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while saving: %v", r)
		}
		if err != nil {
			for _, ln := range created {
				ln.runID = 0
			}
		}
	}()
	ctx := context.Background() // a cancelled sweep still saves what it computed
	now := time.Now()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// What each run gains, applied to the lanes once the commit holds.
	type gain struct {
		ln      *lane
		rows    int
		best    float64
		bestIdx int
		digest  digest
	}
	var gains []*gain
	gainOf := map[engine.Precision]*gain{}
	// A part of a batch: one precision's rows.
	type piece struct {
		g    *gain
		rows []engine.ComboResult
		sum  digest // of its rows, when the run has a digest
	}
	var pieces []*piece
	for _, b := range group {
		for _, pt := range b.parts {
			g := gainOf[pt.p]
			if g == nil {
				fresh := w.lanes[pt.p] == nil || w.lanes[pt.p].runID == 0
				ln, err := w.lane(ctx, tx, pt.p, pt.started)
				if err != nil {
					return err
				}
				if fresh {
					created = append(created, ln)
				}
				g = &gain{ln: ln, best: ln.best, bestIdx: ln.bestIdx, digest: ln.digest}
				gainOf[pt.p] = g
				gains = append(gains, g)
			}
			if err := sortBatch(pt.rows, w.grid); err != nil {
				return fmt.Errorf("the %s run: %w", pt.p, err)
			}
			if dup, ok := g.ln.saved.addRows(pt.rows); !ok {
				return fmt.Errorf("the %s run: combo %d is saved already", pt.p, dup)
			}
			pieces = append(pieces, &piece{g: g, rows: pt.rows})
		}
	}
	// Each piece is stored as blobs of up to maxBlobRows rows, encoded,
	// hashed for the digest and searched for the best Sharpe on the other
	// cores (encoders.go) while this goroutine inserts them in order: a
	// GPU's chunk is 25 blobs, and what this commit takes is what a GPU
	// study waits for after its last lane.
	type blobPart struct {
		pc   *piece
		rows []engine.ComboResult
	}
	var parts []blobPart
	for _, pc := range pieces {
		for lo := 0; lo < len(pc.rows); lo += maxBlobRows {
			parts = append(parts, blobPart{pc, pc.rows[lo:min(lo+maxBlobRows, len(pc.rows))]})
		}
	}
	// At most one blob per worker and the one being inserted ahead: about
	// 0.8 MB each (4,096 rows of 24 metrics), 13 MB on 16 cores.
	workers := encodeWorkers()
	spare := make(chan []byte, workers+2) // blobs inserted, for the next parts to reuse
	enc := startEncoders(len(parts), workers, workers+1, func(i int) encodedBatch {
		var buf []byte
		select {
		case buf = <-spare:
		default:
		}
		pt := parts[i]
		return encodeBatch(buf, pt.rows, pt.pc.g.ln.hasDigest)
	})
	defer enc.stop()     // the rows are the encoders' until they have stopped
	var insert *sql.Stmt // prepared on first use
	written := 0
	for _, pt := range parts {
		e, err := enc.next()
		if err != nil {
			return err
		}
		g := pt.pc.g
		if insert == nil {
			if insert, err = tx.PrepareContext(ctx, insertBatch); err != nil {
				return err
			}
			defer insert.Close()
		}
		if _, err := insert.ExecContext(ctx, g.ln.runID, pt.rows[0].Index, pt.rows[len(pt.rows)-1].Index, len(pt.rows), e.blob); err != nil {
			return err
		}
		written += len(e.blob)
		select {
		case spare <- e.blob[:0]:
		default:
		}
		pt.pc.sum.plus(&e.sum)
		// The parts' best, in index order: the row with the highest
		// Sharpe, the lowest index among equals, as a scan of every row.
		if s := e.best; !math.IsNaN(s) && (math.IsNaN(g.best) || s > g.best || s == g.best && e.bestIdx < g.bestIdx) {
			g.best, g.bestIdx = s, e.bestIdx
		}
	}
	enc.stop()
	for _, pc := range pieces {
		pc.g.rows += len(pc.rows)
		pc.g.digest.plus(&pc.sum)
	}
	for _, g := range gains {
		ln := g.ln
		best := nullable(g.best)
		var bestIdx any
		if !math.IsNaN(g.best) {
			bestIdx = g.bestIdx
		}
		q := `UPDATE runs SET done = done + ?, elapsed_ns = ?, best_sharpe = ?, best_index = ?, updated = ? WHERE id = ?`
		args := []any{g.rows, int64(ln.priorElapsed + now.Sub(ln.started)), best, bestIdx, fmtTime(now), ln.runID}
		if ln.hasDigest {
			q = `UPDATE runs SET done = done + ?, elapsed_ns = ?, best_sharpe = ?, best_index = ?, updated = ?, digest = ? WHERE id = ?`
			args = []any{g.rows, int64(ln.priorElapsed + now.Sub(ln.started)), best, bestIdx, fmtTime(now), g.digest[:], ln.runID}
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE studies SET updated = ? WHERE id = ?`, fmtTime(now), w.id); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	w.unckpt += written
	for _, g := range gains {
		g.ln.best, g.ln.bestIdx, g.ln.digest = g.best, g.bestIdx, g.digest
	}
	return nil
}

// encodedBatch is one blob of a run's rows (resultbatch.go) and what the
// commit takes of them: the sum of their digest hashes (when the run has a
// digest) and their best Sharpe.
type encodedBatch struct {
	blob    []byte
	sum     digest
	best    float64 // NaN when no row has a Sharpe
	bestIdx int
}

// encodeBatch encodes rows (in index order) as a blob, appended to
// buf[:0], hashing them for the digest when hash is set.
func encodeBatch(buf []byte, rows []engine.ComboResult, hash bool) encodedBatch {
	e := encodedBatch{blob: appendBatch(buf[:0], rows), best: math.NaN()}
	if hash {
		b := make([]byte, 0, rowBytes)
		ms := make([]float64, len(engine.MetricNames))
		for i := range rows {
			r := &rows[i]
			e.sum.add(b, r.Index, r.HMA, r.HMA3, metricValues(ms, r))
		}
	}
	for i := range rows {
		r := &rows[i]
		if s := r.Sharpe; !math.IsNaN(s) && (math.IsNaN(e.best) || s > e.best || s == e.best && r.Index < e.bestIdx) {
			e.best, e.bestIdx = s, r.Index
		}
	}
	return e
}

// lane returns the lane of precision p with its run row, creating the row
// on first use (with the digest of no rows) or taking over the existing
// one (resume: its saved time, best Sharpe and digest carry on). started
// is when this process saw the lane's first chunk. Only the committer, or
// finish once the committer has returned, calls it.
func (w *Writer) lane(ctx context.Context, tx *sql.Tx, p engine.Precision, started time.Time) (*lane, error) {
	ln := w.lanes[p]
	if ln == nil {
		ln = &lane{started: started, best: math.NaN(), saved: w.prior[p]}
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
		sum        []byte
	)
	now := fmtTime(time.Now())
	dest := []any{&ln.runID, &done, &prep, &elap, &best, &bestIdx}
	var err error
	if w.s.schema >= digestSchema {
		dest = append(dest, &sum)
		err = tx.QueryRowContext(ctx, `INSERT INTO runs (study_id, precision, backend, wma, status, created, updated, combos, digest)
			VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?)
			ON CONFLICT (study_id, precision) DO UPDATE SET status = 'running', error = '', updated = excluded.updated
			RETURNING id, done, prepare_ns, elapsed_ns, best_sharpe, best_index, digest`,
			w.id, p.String(), w.backend, wma.String(), now, now, w.grid.Len(), make([]byte, len(digest{}))).Scan(dest...)
	} else {
		err = tx.QueryRowContext(ctx, `INSERT INTO runs (study_id, precision, backend, wma, status, created, updated, combos)
			VALUES (?, ?, ?, ?, 'running', ?, ?, ?)
			ON CONFLICT (study_id, precision) DO UPDATE SET status = 'running', error = '', updated = excluded.updated
			RETURNING id, done, prepare_ns, elapsed_ns, best_sharpe, best_index`,
			w.id, p.String(), w.backend, wma.String(), now, now, w.grid.Len()).Scan(dest...)
	}
	if err != nil {
		ln.runID = 0
		return nil, err
	}
	ln.priorPrepare, ln.priorElapsed = time.Duration(prep), time.Duration(elap)
	if best.Valid && bestIdx.Valid {
		ln.best, ln.bestIdx = best.Float64, int(bestIdx.Int64)
	}
	if len(sum) == len(ln.digest) {
		copy(ln.digest[:], sum)
		ln.hasDigest = true
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
	if !w.finished {
		w.finished = true
		if w.Err() == nil {
			w.handOffLocked(nil)
		}
		if w.queue != nil {
			close(w.queue)
		}
	}
	// The parity report's rows are encoded on the other cores while the
	// committer commits its last batches.
	var parityBlobs func() ([]parityBlob, error)
	if par != nil && w.s.schema >= parityBatchSchema {
		parityBlobs = encodeParity(par.Combos)
		defer parityBlobs() // the encoding is over when finish returns
	}
	if w.done != nil {
		<-w.done // the committer has committed (or refused) every batch
	}
	saveErr := w.Err()
	ctx := context.Background()
	now := time.Now()
	// The final state commits with the automatic checkpoint off, as the
	// committer does: the checkpointer copies it beside the front end's
	// report (checkpoint.go).
	conn, err := w.s.db.Conn(ctx)
	if err != nil {
		return w.s.wrap(fmt.Sprintf("finish session %d", w.id), err)
	}
	defer conn.Close()
	if w.ckpt != nil {
		defer noAutoCheckpoint(ctx, conn)()
		defer w.ckpt.close()
		defer w.ckpt.ask()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return w.s.wrap(fmt.Sprintf("finish session %d", w.id), err)
	}
	defer tx.Rollback()
	fail := func(err error) error { return w.s.wrap(fmt.Sprintf("finish session %d", w.id), err) }

	var interrupted *engine.Interrupted
	errors.As(runErr, &interrupted)
	for _, run := range runs {
		if w.kept[run.Precision] {
			continue
		}
		ln, err := w.lane(ctx, tx, run.Precision, now)
		if err != nil {
			return fail(err)
		}
		status, msg := run.Status, ""
		if run.Err != nil {
			msg = run.Err.Error()
		}
		if interrupted != nil && status == engine.StatusCancelled {
			status, msg = StatusInterrupted, interrupted.Error()
		}
		if saveErr != nil && status == engine.StatusComplete {
			status, msg = engine.StatusFailed, "computed, but not every result was saved: "+saveErr.Error()
		}
		// The backend that computed the lane: the study's, or its fallback.
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, backend = ?, device = ?, prepare_ns = ?, elapsed_ns = ?,
			done = (SELECT coalesce(sum(rows), 0) FROM result_batches WHERE run_id = ?), updated = ? WHERE id = ?`,
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
			batched, err := w.s.parityBatches(ctx, tx, w.id)
			if err != nil {
				return fail(err)
			}
			var batches func() ([]parityBlob, error)
			if batched {
				batches = parityBlobs
			}
			if err := saveParity(ctx, tx, &w.id, ref, test, compared, par, now, w.s.schema >= strategySchema, batches); err != nil {
				return fail(err)
			}
			if err := w.s.stampRecord(ctx, tx, w.id, "parity report"); err != nil {
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
	case interrupted != nil:
		status = StatusInterrupted
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
