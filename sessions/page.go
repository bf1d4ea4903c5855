package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"

	"sweepbench/engine"
)

// Reading a saved run a page at a time: a front end showing a study of
// millions of combos holds its summary (OpenSummary, engine.Summary) and
// reads the rest from here when it needs it (a table's next page, a
// heatmap cell's detail, the best combos under a filter), batch by batch,
// never the whole run.
//
// What is served is verified as Open verifies it: OpenRunReader reads
// every batch once, checking the rows against the run's digest (and that
// no combo is in two batches), and notes a hash of each batch's blob; a
// page read later decodes only the batches it needs and refuses one whose
// blob is no longer the one verified (changed or damaged in the file
// since). The reader serves the run as it was when opened: batches a
// running study adds later are not read.

// RunReader reads one saved run's results a page at a time. Its memory
// is a few words per batch (a batch holds up to 4,096 combos: 10^7 combos
// are ~2,500 batches, ~100 kB) besides what a call returns. Safe for
// concurrent use.
type RunReader struct {
	s         *Store
	id        int64
	precision engine.Precision
	runID     int64
	grid      engine.Grid
	count     int
	batches   []batchRef // by first
	seed      maphash.Seed
}

// batchRef is one verified batch of a run: where it is, which combos it
// spans, and the hash of its blob as verified.
type batchRef struct {
	first, last, rows int
	hash              uint64
}

// errBatchChanged: a batch's blob is not the one OpenRunReader verified.
var errBatchChanged = errors.New("it changed since the run was opened and verified")

// OpenRunReader opens run p of session id for reading a page at a time,
// after reading every batch once to verify it (memory: one batch at a time
// and a bit per combo of the grid while it does; the time of a full read).
// Errors: ErrNotFound (wrapped) for no such session, an error naming the
// runs it has for no such run, *BatchError for a batch that cannot be
// decoded or holds a combo another holds too, *DigestError for rows that
// do not hash to the run's digest, *DBError for the file.
func (s *Store) OpenRunReader(ctx context.Context, id int64, p engine.Precision) (*RunReader, error) {
	op := fmt.Sprintf("read session %d", id)
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.wrap(op, err)
	}
	defer tx.Rollback()
	ss, err := getSession(ctx, tx, id)
	if err != nil {
		return nil, s.wrap(op, err)
	}
	if err := verifyRecord(ctx, tx, id); err != nil {
		return nil, s.wrap(op, err)
	}
	if ss.gridErr != nil {
		return nil, ss.gridErr
	}
	rs := ss.Run(p)
	if rs == nil {
		return nil, fmt.Errorf("session %d has no %s run (it has %s)", id, p, runList(ss))
	}
	r := &RunReader{s: s, id: id, precision: p, runID: rs.ID, grid: ss.Grid, seed: maphash.MakeSeed()}
	r.count, err = eachBatch(ctx, tx, ss, rs, func(b batchRef, blob []byte, _ []engine.ComboResult) error {
		b.hash = maphash.Bytes(r.seed, blob)
		r.batches = append(r.batches, b)
		return nil
	})
	if err != nil {
		return nil, s.wrap(op, err)
	}
	return r, nil
}

// Grid is the run's grid.
func (r *RunReader) Grid() engine.Grid { return r.grid }

// Count is how many combos the run holds (as verified).
func (r *RunReader) Count() int { return r.count }

// Combos returns the results of the combos idx (grid indices, any order,
// repeats read once) that the run holds, in grid order: a combo not
// computed (an incomplete run) is left out. Only the batches that span one
// of them are read. Errors: an index outside the grid; *BatchError for a
// batch changed since the run was opened; *DBError.
func (r *RunReader) Combos(ctx context.Context, idx []int) ([]engine.ComboResult, error) {
	want := slices.Clone(idx)
	slices.Sort(want)
	want = slices.Compact(want)
	if len(want) > 0 && (want[0] < 0 || want[len(want)-1] >= r.grid.Len()) {
		bad := want[0]
		if bad >= 0 {
			bad = want[len(want)-1]
		}
		return nil, fmt.Errorf("session %d, run %d:%s: combo index %d is outside the grid's %d combos", r.id, r.id, r.precision, bad, r.grid.Len())
	}
	has := func(i int) bool { _, ok := slices.BinarySearch(want, i); return ok }
	spans := func(b *batchRef) bool {
		k, _ := slices.BinarySearch(want, b.first)
		return k < len(want) && want[k] <= b.last
	}
	return r.read(ctx, spans, has)
}

// Window returns the results the run holds in the rectangle of the grid
// of HMA rows [r0, r1) and HMA3 columns [c0, c1) (positions in the grid's
// ranges, Grid.Index: a heatmap cell's Span), in grid order. Memory: the
// window's results. Errors: a rectangle outside the grid or empty;
// *BatchError for a batch changed since the run was opened; *DBError.
//
// A strategy grid's rows and columns are its first two axes (a grid of
// one axis: one column), as its heatmaps' (engine.Heatmap.Span): the
// window holds every combo whose first two coordinates are in it, any
// along the other axes.
func (r *RunReader) Window(ctx context.Context, r0, r1, c0, c1 int) ([]engine.ComboResult, error) {
	R, C := r.grid.HMA.Len(), r.grid.HMA3.Len()
	st := r.grid.Strategy
	if st != nil {
		axes := st.Axes()
		R, C = 1, 1
		if len(axes) > 0 {
			R = len(axes[0].Values)
		}
		if len(axes) > 1 {
			C = len(axes[1].Values)
		}
	}
	if r0 < 0 || c0 < 0 || r1 > R || c1 > C || r0 >= r1 || c0 >= c1 {
		return nil, fmt.Errorf("session %d, run %d:%s: window rows [%d, %d) x columns [%d, %d) is not in the grid's %d x %d",
			r.id, r.id, r.precision, r0, r1, c0, c1, R, C)
	}
	if st != nil {
		has := func(i int) bool {
			co := st.Coords(i)
			row, col := 0, 0
			if len(co) > 0 {
				row = co[0]
			}
			if len(co) > 1 {
				col = co[1]
			}
			return row >= r0 && row < r1 && col >= c0 && col < c1
		}
		return r.read(ctx, func(*batchRef) bool { return true }, has)
	}
	has := func(i int) bool {
		row, col := i/C, i%C
		return row >= r0 && row < r1 && col >= c0 && col < c1
	}
	spans := func(b *batchRef) bool {
		for row := max(r0, b.first/C); row <= min(r1-1, b.last/C); row++ {
			if lo, hi := row*C+c0, row*C+c1-1; hi >= b.first && lo <= b.last {
				return true
			}
		}
		return false
	}
	return r.read(ctx, spans, has)
}

// Range returns the results the run holds of the combos with grid index
// in [lo, hi), in grid order: a band of any grid, hull's or a strategy
// family's (whose combos are only indices). Memory: the band's results.
// Errors: a range outside the grid or empty; *BatchError for a batch
// changed since the run was opened; *DBError.
func (r *RunReader) Range(ctx context.Context, lo, hi int) ([]engine.ComboResult, error) {
	if lo < 0 || hi > r.grid.Len() || lo >= hi {
		return nil, fmt.Errorf("session %d, run %d:%s: combos [%d, %d) are not in the grid's %d", r.id, r.id, r.precision, lo, hi, r.grid.Len())
	}
	has := func(i int) bool { return i >= lo && i < hi }
	spans := func(b *batchRef) bool { return b.first < hi && b.last >= lo }
	return r.read(ctx, spans, has)
}

// read decodes the batches spans picks, in one read transaction, and
// returns their rows has picks, in grid order.
func (r *RunReader) read(ctx context.Context, spans func(*batchRef) bool, has func(int) bool) ([]engine.ComboResult, error) {
	op := fmt.Sprintf("read session %d", r.id)
	tx, err := r.s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, r.s.wrap(op, err)
	}
	defer tx.Rollback()
	var out, buf []engine.ComboResult
	for i := range r.batches {
		b := &r.batches[i]
		if !spans(b) {
			continue
		}
		var blob []byte
		err := tx.QueryRowContext(ctx, `SELECT data FROM result_batches WHERE run_id = ? AND first_idx = ?`, r.runID, b.first).Scan(&blob)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, r.batchError(b, errors.New("it is no longer in the database"))
		}
		if err != nil {
			return nil, r.s.wrap(op, err)
		}
		if buf, err = r.decode(buf[:0], b, blob); err != nil {
			return nil, err
		}
		for k := range buf {
			if has(buf[k].Index) {
				out = append(out, buf[k])
			}
		}
	}
	slices.SortFunc(out, byIndex)
	return out, nil
}

// decode decodes b's blob into buf after checking it is the one verified.
func (r *RunReader) decode(buf []engine.ComboResult, b *batchRef, blob []byte) ([]engine.ComboResult, error) {
	if maphash.Bytes(r.seed, blob) != b.hash {
		return buf, r.batchError(b, errBatchChanged)
	}
	out, err := decodeBatch(buf, blob, b.first, b.last, b.rows, r.grid)
	if err != nil {
		return buf, r.batchError(b, err) // cannot happen to a blob verified: its bytes are those decoded then
	}
	return out, nil
}

func (r *RunReader) batchError(b *batchRef, err error) error {
	return &BatchError{ID: r.id, Precision: r.precision, First: b.first, Rows: b.rows, Err: err}
}

// TopQuery asks a RunReader for the best combos of a run.
type TopQuery struct {
	// Objective ranks them (engine.Objective.Ranks, as every top list:
	// its metric, larger first or smaller when Minimise, NaN last, ties to
	// the lower grid index) and its constraints (MinTrades, MaxDrawdown)
	// leave out the combos that do not meet them.
	Objective engine.Objective
	// N is how many to return (at most); 0 or less returns none.
	N int
	// Filter, when set, leaves out the combos it returns false for (a
	// table's filter). It is called from the reading goroutine, once per
	// combo the run holds.
	Filter func(*engine.ComboResult) bool
}

// Top returns the best q.N combos of the run under q's filter and
// constraints, best first, reading every batch once (one at a time, in one
// read transaction) and keeping the best N in a heap (engine.Top): memory
// for N results and a batch, whatever the run's size. Errors: *BatchError
// for a batch changed since the run was opened or gone; *DBError.
func (r *RunReader) Top(ctx context.Context, q TopQuery) ([]engine.ComboResult, error) {
	top := engine.NewTop(q.Objective, q.N)
	err := r.Scan(ctx, func(rs []engine.ComboResult) error {
		for i := range rs {
			if q.Filter == nil || q.Filter(&rs[i]) {
				top.Offer(&rs[i])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return top.Sorted(), nil
}

// Scan calls f with the rows of every batch of the run, batch by batch (in
// the order of their first combo; rows in grid order within a batch, not
// across batches that overlap), in one read transaction; the slice is
// reused after f returns. An error from f stops the scan and is returned.
// Errors besides: *BatchError for a batch changed since the run was
// opened or gone; *DBError.
func (r *RunReader) Scan(ctx context.Context, f func([]engine.ComboResult) error) error {
	op := fmt.Sprintf("read session %d", r.id)
	tx, err := r.s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return r.s.wrap(op, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT first_idx, data FROM result_batches WHERE run_id = ? ORDER BY first_idx`, r.runID)
	if err != nil {
		return r.s.wrap(op, err)
	}
	defer rows.Close()
	var (
		buf   []engine.ComboResult
		first int
		blob  sql.RawBytes
		next  int // r.batches[next] is the next batch verified
	)
	for rows.Next() {
		if err := rows.Scan(&first, &blob); err != nil {
			return r.s.wrap(op, err)
		}
		if next < len(r.batches) && r.batches[next].first < first {
			return r.batchError(&r.batches[next], errors.New("it is no longer in the database"))
		}
		if next == len(r.batches) || r.batches[next].first > first {
			continue // added after the reader was opened: not verified, not read
		}
		b := &r.batches[next]
		next++
		if buf, err = r.decode(buf[:0], b, blob); err != nil {
			return err
		}
		if err := f(buf); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return r.s.wrap(op, err)
	}
	if next < len(r.batches) {
		return r.batchError(&r.batches[next], errors.New("it is no longer in the database"))
	}
	return nil
}

// eachBatch reads the batches of run rs of session ss through q (a read
// transaction: the rows and the digest from one snapshot), in the order of
// their first combo, one at a time, and calls f with each: where it is,
// its blob and its rows (both reused after f returns). It verifies the run
// as loadRun does, without holding it: a batch that cannot be decoded is
// *BatchError at once; a combo in two batches (a bit per combo of the grid
// tells) is *BatchError naming the later batch, and rows that do not
// hash to the run's digest *DigestError, both once every batch is read:
// f has then seen them all, so what a caller built from them is only good
// when eachBatch returns nil. A run without a digest (saved before schema
// version 3) is read unverified. It returns the rows read.
func eachBatch(ctx context.Context, q querier, ss *Session, rs *RunSummary, f func(b batchRef, blob []byte, rows []engine.ComboResult) error) (int, error) {
	var saved []byte
	if err := q.QueryRowContext(ctx, `SELECT digest FROM runs WHERE id = ?`, rs.ID).Scan(&saved); err != nil {
		return 0, err
	}
	rows, err := q.QueryContext(ctx, selectBatches, rs.ID)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var (
		buf           []engine.ComboResult
		b             batchRef
		blob          sql.RawBytes
		sum           digest
		count         int
		dup           *BatchError
		seen          = make([]uint64, (ss.Grid.Len()+63)/64)
		verify        = saved != nil
		digestBuf, ms = make([]byte, 0, rowBytes), make([]float64, len(engine.MetricNames))
		markSeen      = func(i int) bool { w, m := i/64, uint64(1)<<(i%64); was := seen[w]&m != 0; seen[w] |= m; return was }
	)
	for rows.Next() {
		if err := rows.Scan(&b.first, &b.last, &b.rows, &blob); err != nil {
			return count, err
		}
		if buf, err = decodeBatch(buf[:0], blob, b.first, b.last, b.rows, ss.Grid); err != nil {
			return count, &BatchError{ID: ss.ID, Precision: rs.Precision, First: b.first, Rows: b.rows, Err: err}
		}
		for i := range buf {
			r := &buf[i]
			if markSeen(r.Index) && dup == nil {
				dup = &BatchError{ID: ss.ID, Precision: rs.Precision, First: b.first, Rows: b.rows,
					Err: errors.New("it holds a combo another batch holds too")}
			}
			if verify {
				sum.add(digestBuf, r.Index, r.HMA, r.HMA3, metricValues(ms, r))
			}
		}
		count += len(buf)
		if err := f(b, blob, buf); err != nil {
			return count, err
		}
	}
	if err := rows.Err(); err != nil {
		return count, err
	}
	if verify && (len(saved) != len(sum) || digest(saved) != sum) {
		return count, &DigestError{ID: ss.ID, Precision: rs.Precision, Rows: count}
	}
	if dup != nil {
		return count, dup
	}
	return count, nil
}
