package sessions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sweepbench/engine"
)

// Open rebuilds the engine.Report of session id from the store: dataset,
// parameters, every run with its saved results in grid order, and the
// parity report, so that WriteTable, WriteJSON and WriteCSV print what
// `sweepbench run` printed. A run that is not complete holds the combos
// saved so far, and its Err says why and what to do (resume). Its memory
// grows with the grid (every result, ~140 bytes a combo a run, and the
// parity report's row per combo): OpenSummary does not.
func (s *Store) Open(ctx context.Context, id int64) (*engine.Report, error) {
	return s.open(ctx, id, nil)
}

// OpenSummary is Open without holding the results: each run is a kept
// run (engine.Run.Kept: its best by the study's objective in Results,
// and in the fp32 run the fp64 run's best too, as a study that discards
// its results keeps them; Computed the count) carrying its
// engine.Summary (top lists and heatmaps of every metric, bounded by
// opt), built from its batches read one at a time and verified as Open
// verifies them; the parity report holds its counts, worst flips and
// indicator errors, not its row per combo (engine.Parity.Counts). The
// table (WriteTable) prints what Open's report prints. Memory: the
// summaries, one batch, and a bit per combo while a run is read; the rest
// is read a page at a time through OpenRunReader. Errors as Open's.
func (s *Store) OpenSummary(ctx context.Context, id int64, opt engine.SummaryOptions) (*engine.Report, error) {
	return s.open(ctx, id, &opt)
}

// open is Open, or OpenSummary when sum is set.
func (s *Store) open(ctx context.Context, id int64, sum *engine.SummaryOptions) (*engine.Report, error) {
	s.reap(ctx)
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("read session %d", id), err)
	}
	defer tx.Rollback()
	ss, err := getSession(ctx, tx, id)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("read session %d", id), err)
	}
	if err := verifyRecord(ctx, tx, id); err != nil {
		return nil, s.wrap(fmt.Sprintf("read session %d", id), err)
	}
	if ss.gridErr != nil {
		return nil, ss.gridErr
	}
	s.settle(ss)
	rep := &engine.Report{Dataset: ss.Dataset, Params: ss.Params, Grid: ss.Grid, WMA: ss.WMA,
		Backend: ss.Backend, Note: ss.Note, Created: ss.Created, Requested: append([]engine.Precision(nil), ss.Precisions...),
		BuyHold: ss.BuyHold}
	// The top lists as the study ranked them (--objective, constraints).
	if o := ss.Spec; (o.Objective != "" && o.Objective != "sharpe") || o.MinTrades != 0 || o.MaxDrawdown != 0 {
		name := o.Objective
		if name == "" {
			name = "sharpe"
		}
		if rep.Objective, err = engine.ParseObjective(name, o.MinTrades, o.MaxDrawdown); err != nil {
			return nil, s.wrap(fmt.Sprintf("read session %d", id), err)
		}
	}
	var also []int // the fp64 run's best, kept in the fp32 run too
	for i := range ss.Runs {
		var run *engine.Run
		if sum == nil {
			run, err = loadRun(ctx, tx, ss, &ss.Runs[i])
		} else {
			run, err = summariseRun(ctx, tx, ss, &ss.Runs[i], rep.Objective, *sum, also)
		}
		if err != nil {
			return nil, s.wrap(fmt.Sprintf("read session %d", id), err)
		}
		if sum != nil && run.Precision == engine.FP64 {
			for _, r := range run.Summary.Best {
				also = append(also, r.Index)
			}
		}
		rep.Runs = append(rep.Runs, run)
	}
	rep.Parity, rep.ParityOf, err = loadStudyParity(ctx, tx, id, ss.Grid, sum == nil, batchedParity(ss.digestVersion))
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("read the parity of session %d", id), err)
	}
	if p := rep.Parity; p != nil && sum == nil {
		// The per-combo returns, which the store keeps in the runs only.
		var ref, test *engine.Run
		for _, run := range rep.Runs {
			if run.Precision == engine.FP64 {
				ref = run
			} else {
				test = run
			}
		}
		if ref != nil && test != nil {
			p.SetReturns(ref, test)
			if w := p.SensitiveWorst; w != nil {
				// Its row, with the returns just set.
				if k, ok := slices.BinarySearchFunc(p.Combos, w.Index, func(c engine.ComboParity, i int) int { return c.Index - i }); ok {
					*w = p.Combos[k]
				}
			}
		}
	}
	var rob string
	if err := tx.QueryRowContext(ctx, `SELECT robustness FROM studies WHERE id = ?`, id).Scan(&rob); err != nil {
		return nil, s.wrap(fmt.Sprintf("read the robustness of session %d", id), err)
	}
	if rob != "" {
		rep.Robustness = json.RawMessage(rob)
	}
	// What run printed: the notes its results call for (the parity's
	// explanation, loadStudyParity) are derived again from what was saved.
	rep.Note = engine.JoinNote(rep.Note, rep.RunNotes())
	return rep, nil
}

// summariseRun reads run rs of session ss as a kept run with its summary
// (OpenSummary): its batches one at a time (eachBatch, verified as
// loadRun verifies them) through an engine.Summariser.
func summariseRun(ctx context.Context, q querier, ss *Session, rs *RunSummary, o engine.Objective, opt engine.SummaryOptions, also []int) (*engine.Run, error) {
	run := &engine.Run{Backend: rs.Backend, Device: rs.Device, Precision: rs.Precision, WMA: rs.WMA, Grid: ss.Grid,
		Status: rs.Status, Prepare: rs.Prepare, Elapsed: rs.Elapsed}
	sm := engine.NewSummariser(ss.Grid, rs.Precision, o, opt, also)
	n, err := eachBatch(ctx, q, ss, rs, func(_ batchRef, _ []byte, rows []engine.ComboResult) error {
		sm.Add(rows)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sm.Keep(run)
	settleRun(run, ss, rs, n)
	return run, nil
}

// OpenRun reads one run of session id with its results.
func (s *Store) OpenRun(ctx context.Context, id int64, p engine.Precision) (*engine.Run, *Session, error) {
	ss, err := s.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	rs := ss.Run(p)
	if rs == nil {
		return nil, nil, fmt.Errorf("session %d has no %s run (it has %s)", id, p, runList(ss))
	}
	run, err := s.readRun(ctx, ss, rs)
	if err != nil {
		return nil, nil, err
	}
	return run, ss, nil
}

// readRun reads one run of ss with its results (loadRun) in a read
// transaction of its own: the rows and their digest from one snapshot,
// while another process may be adding batches.
func (s *Store) readRun(ctx context.Context, ss *Session, rs *RunSummary) (*engine.Run, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("read session %d", ss.ID), err)
	}
	defer tx.Rollback()
	if err := verifyRecord(ctx, tx, ss.ID); err != nil {
		return nil, s.wrap(fmt.Sprintf("read session %d", ss.ID), err)
	}
	if ss.gridErr != nil {
		return nil, ss.gridErr
	}
	run, err := loadRun(ctx, tx, ss, rs)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("read session %d", ss.ID), err)
	}
	return run, nil
}

func runList(ss *Session) string {
	if len(ss.Runs) == 0 {
		return "none"
	}
	var names []string
	for _, r := range ss.Runs {
		names = append(names, r.Precision.String())
	}
	return strings.Join(names, " and ")
}

// selectBatches reads a run's batches of results (resultbatch.go) by
// their first combo.
const selectBatches = `SELECT first_idx, last_idx, rows, data FROM result_batches WHERE run_id = ? ORDER BY first_idx`

// loadRun reads the results of run rs of session ss, in grid order, and
// checks them against the run's digest, read with them (q must be a
// transaction, so that both come from one snapshot): rows that do not hash
// to it are refused with *DigestError, a batch that cannot be decoded (or
// that holds a combo another holds too) with *BatchError. A run without a
// digest (saved before schema version 3) is read unverified. Every read
// of saved results (Open, OpenRun, diff, resume) comes through here.
func loadRun(ctx context.Context, q querier, ss *Session, rs *RunSummary) (*engine.Run, error) {
	run := &engine.Run{Backend: rs.Backend, Device: rs.Device, Precision: rs.Precision, WMA: rs.WMA, Grid: ss.Grid,
		Status: rs.Status, Prepare: rs.Prepare, Elapsed: rs.Elapsed}
	var saved []byte
	if err := q.QueryRowContext(ctx, `SELECT digest FROM runs WHERE id = ?`, rs.ID).Scan(&saved); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, selectBatches, rs.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	all := make([]engine.ComboResult, 0, max(0, min(rs.Done, ss.Grid.Len())))
	var (
		starts, firsts, sizes []int // per batch read: where its rows start in all, its first_idx and rows
		first, last, n        int
		blob                  sql.RawBytes
		sum                   digest
	)
	verify := saved != nil
	buf := make([]byte, 0, rowBytes)
	ms := make([]float64, len(engine.MetricNames))
	for rows.Next() {
		if err := rows.Scan(&first, &last, &n, &blob); err != nil {
			return nil, err
		}
		start := len(all)
		if all, err = decodeBatch(all, blob, first, last, n, ss.Grid); err != nil {
			return nil, &BatchError{ID: ss.ID, Precision: rs.Precision, First: first, Rows: n, Err: err}
		}
		if verify {
			for i := start; i < len(all); i++ {
				r := &all[i]
				sum.add(buf, r.Index, r.HMA, r.HMA3, metricValues(ms, r))
			}
		}
		starts, firsts, sizes = append(starts, start), append(firsts, first), append(sizes, n)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if verify && (len(saved) != len(sum) || digest(saved) != sum) {
		return nil, &DigestError{ID: ss.ID, Precision: rs.Precision, Rows: len(all)}
	}
	var dup int
	if run.Results, dup = inIndexOrder(all, starts); dup >= 0 {
		return nil, &BatchError{ID: ss.ID, Precision: rs.Precision, First: firsts[dup], Rows: sizes[dup],
			Err: errors.New("it holds a combo another batch holds too")}
	}
	settleRun(run, ss, rs, len(run.Results))
	return run, nil
}

// settleRun sets the status and error of run, read from the saved run rs
// of ss holding n of the grid's combos.
func settleRun(run *engine.Run, ss *Session, rs *RunSummary, n int) {
	missing := ss.Grid.Len() - n
	switch {
	case missing == 0 && rs.Status == StatusInterrupted:
		// Every combo was saved before its process died, which then
		// could not record the lane complete: it is.
		run.Status = engine.StatusComplete
	case rs.Error != "":
		run.Err = errors.New(rs.Error)
	case rs.Status == StatusInterrupted:
		run.Err = fmt.Errorf("the process writing it (pid %d on %s) stopped with %d combos to go: resuming the session computes them",
			ss.PID, ss.Host, missing)
	case rs.Status == StatusRunning:
		run.Err = fmt.Errorf("still running (pid %d on %s): %d combos to go", ss.PID, ss.Host, missing)
	}
}

// SetRobustness saves the robustness summary of session id (engine/robust's
// Summary as JSON, computed after the study from its per-block
// statistics): show prints it again and the JSON export carries it.
func (s *Store) SetRobustness(ctx context.Context, id int64, summary []byte) error {
	op := fmt.Sprintf("save the robustness of session %d", id)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(op, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE studies SET robustness = ? WHERE id = ?`, string(summary), id)
	if err != nil {
		return s.wrap(op, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return s.wrap(op, ErrNotFound)
	}
	if err := s.stampRecord(ctx, tx, id, "robustness summary"); err != nil {
		return s.wrap(op, err)
	}
	return s.wrap(op, tx.Commit())
}
