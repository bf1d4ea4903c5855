package sessions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"sweepbench/engine"
)

// saveParity stores p as the parity report of run test against run ref,
// replacing an earlier one of the same pair. studyID is set for a study's
// own fp32-vs-fp64 report. v14 (schema v14 on): the file holds a
// flip's divergence (its bars, trades and dPnL) and the sensitive combos;
// a writer on an older file (a test's) leaves them out. batches, when
// not nil, returns the row per combo encoded for parity_batches
// (encodeParity: maxBlobRows rows a blob; schema v16 on, a study of digest
// version 4 or 0); when nil, each row goes into parity_combos (what a study
// of digest version 1 to 3 hashes). A row's label (Name) is not kept: the
// study's grid names it (refillLabels).
func saveParity(ctx context.Context, tx *sql.Tx, studyID *int64, ref, test int64, compared string, p *engine.Parity, now time.Time, v14 bool, batches func() ([]parityBlob, error)) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM parities WHERE ref_run = ? AND test_run = ?`, ref, test); err != nil {
		return err
	}
	reasons, err := json.Marshal(append([]string{}, p.Reasons...))
	if err != nil {
		return err
	}
	var sid any
	if studyID != nil {
		sid = *studyID
	}
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO parities (study_id, ref_run, test_run, compared, created, verdict, reasons, tolerance,
		incomplete, combos_compared, total_trades_ref, total_trades_test, shifted_trades, shifted_share, max_abs_dn, max_rel_dn,
		max_abs_dpnl_pp, max_rel_dpnl, combos_differing, flip_count, non_borderline_flips, max_rel_indicator_error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		sid, ref, test, compared, fmtTime(now), string(p.Verdict), string(reasons), p.Tolerance,
		p.Incomplete, p.CombosCompared, p.TotalTrades64, p.TotalTrades32, p.ShiftedTrades, nullable(p.ShiftedShare), p.MaxAbsDn, nullable(p.MaxRelDn),
		nullable(p.MaxAbsDPnLpp), nullable(p.MaxRelDPnL), p.CombosDiffering, p.FlipCount, p.NonBorderlineFlips, nullable(p.MaxRelIndicatorError)).Scan(&id)
	if err != nil {
		return err
	}
	if v14 {
		var worst any
		if p.Sensitive > 0 && p.SensitiveWorst != nil {
			worst = p.SensitiveWorst.Index
		}
		if _, err := tx.ExecContext(ctx, `UPDATE parities SET sensitive = ?, sensitive_worst = ? WHERE id = ?`, p.Sensitive, worst, id); err != nil {
			return err
		}
	}
	if batches != nil {
		blobs, err := batches()
		if err != nil {
			return err
		}
		if err := saveParityBatches(ctx, tx, id, blobs); err != nil {
			return err
		}
	} else {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO parity_combos (parity_id, idx, hma, hma3, trades_ref, trades_test, dn, rel_dn,
			dpnl_pp, rel_dpnl, flips, non_borderline, max_flip_margin, dn_limit_breached) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, c := range p.Combos {
			if _, err := stmt.ExecContext(ctx, id, c.Index, c.HMA, c.HMA3, c.Trades64, c.Trades32, c.Dn, nullable(c.RelDn),
				nullable(c.DPnLpp), nullable(c.RelDPnL), c.Flips, c.NonBorderline, nullable(c.MaxFlipMargin), c.DnLimitBreached); err != nil {
				return err
			}
		}
	}
	// A flip's divergence (v14 on) in its row's insert: a statement a flip
	// (up to engine.MaxFlipsListed).
	fq := `INSERT INTO flips (parity_id, rank, idx, hma, hma3, bar, time_ns, pos_ref, pos_test, margin, borderline)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	if v14 {
		fq = `INSERT INTO flips (parity_id, rank, idx, hma, hma3, bar, time_ns, pos_ref, pos_test, margin, borderline, bars, trades, dpnl_pp)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	}
	fstmt, err := tx.PrepareContext(ctx, fq)
	if err != nil {
		return err
	}
	defer fstmt.Close()
	for i, f := range p.Flips {
		args := []any{id, i, f.Index, f.HMA, f.HMA3, f.Bar, f.Time, f.Pos64, f.Pos32, nullable(f.Margin), f.Borderline}
		if v14 {
			args = append(args, f.Bars, f.Trades, nullable(f.DPnLpp))
		}
		if _, err := fstmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	for i, e := range p.IndicatorErrors {
		if _, err := tx.ExecContext(ctx, `INSERT INTO indicator_errors (parity_id, rank, series, length, max_rel, bar) VALUES (?, ?, ?, ?, ?, ?)`,
			id, i, e.Series, e.Length, nullable(e.MaxRel), e.Bar); err != nil {
			return err
		}
	}
	return nil
}

// insertParityBatch stores one blob of a parity report's rows.
const insertParityBatch = `INSERT INTO parity_batches (parity_id, first_idx, last_idx, rows, data) VALUES (?, ?, ?, ?, ?)`

// saveParityBatches stores the blobs of parity report id's rows.
func saveParityBatches(ctx context.Context, tx *sql.Tx, id int64, blobs []parityBlob) error {
	if len(blobs) == 0 {
		return nil
	}
	insert, err := tx.PrepareContext(ctx, insertParityBatch)
	if err != nil {
		return err
	}
	defer insert.Close()
	for _, b := range blobs {
		if _, err := insert.ExecContext(ctx, id, b.first, b.last, b.rows, b.data); err != nil {
			return err
		}
	}
	return nil
}

// parityBlob is one row of parity_batches: maxBlobRows rows of a parity
// report at most, combos first to last, encoded (appendParityBatch).
type parityBlob struct {
	first, last, rows int
	data              []byte
}

// encodeParity starts encoding a parity report's row per combo as the
// blobs of parity_batches, maxBlobRows rows a blob in index order, on the
// other cores (encoders.go), and returns what waits for them: Finish
// starts it before it waits for the committer's last batches. The rows
// are refused as parityInOrder refuses them. The function returned may be
// called more than once (the same blobs); cs must not change until it has
// been called.
func encodeParity(combos []engine.ComboParity) func() ([]parityBlob, error) {
	cs, err := parityInOrder(combos)
	if err != nil || len(cs) == 0 {
		return func() ([]parityBlob, error) { return nil, err }
	}
	n := (len(cs) + maxBlobRows - 1) / maxBlobRows
	p := startEncoders(n, encodeWorkers(), n, func(i int) parityBlob {
		part := cs[i*maxBlobRows : min((i+1)*maxBlobRows, len(cs))]
		return parityBlob{first: part[0].Index, last: part[len(part)-1].Index, rows: len(part), data: appendParityBatch(nil, part)}
	})
	return sync.OnceValues(func() ([]parityBlob, error) {
		defer p.stop()
		blobs := make([]parityBlob, n)
		for i := range blobs {
			var err error
			if blobs[i], err = p.next(); err != nil {
				return nil, err
			}
		}
		return blobs, nil
	})
}

// loadStudyParity reads the parity report of study id, or nil when it has
// none, explained (Parity.Explain) as Compare explains it. Without combos
// it leaves out the row per combo (engine.Parity.Counts: the part that
// grows with the grid), reading each only into the combos behind the
// maxima (Parity.Worst), which the figures and the explanation name.
// The labels of a strategy study's rows and flips are refilled from its
// grid g (labeller). batches: the rows in parity_batches are read too
// (batchedParity of the study's digest version).
func loadStudyParity(ctx context.Context, q querier, studyID int64, g engine.Grid, combos, batches bool) (*engine.Parity, string, error) {
	var (
		id                                          int64
		compared, reasons, verdict                  string
		p                                           engine.Parity
		share, relDn, absDPnL, relDPnL, maxIndicRel sql.NullFloat64
		sensitiveWorst                              sql.NullInt64
	)
	err := q.QueryRowContext(ctx, `SELECT id, compared, verdict, reasons, tolerance, incomplete, combos_compared,
		total_trades_ref, total_trades_test, shifted_trades, shifted_share, max_abs_dn, max_rel_dn, max_abs_dpnl_pp, max_rel_dpnl,
		combos_differing, flip_count, non_borderline_flips, max_rel_indicator_error, sensitive, sensitive_worst
		FROM parities WHERE study_id = ? ORDER BY id DESC LIMIT 1`, studyID).Scan(&id, &compared, &verdict, &reasons,
		&p.Tolerance, &p.Incomplete, &p.CombosCompared, &p.TotalTrades64, &p.TotalTrades32, &p.ShiftedTrades, &share,
		&p.MaxAbsDn, &relDn, &absDPnL, &relDPnL, &p.CombosDiffering, &p.FlipCount, &p.NonBorderlineFlips, &maxIndicRel,
		&p.Sensitive, &sensitiveWorst)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	p.Verdict = engine.Verdict(verdict)
	p.ShiftedShare, p.MaxRelDn, p.MaxAbsDPnLpp, p.MaxRelDPnL = fromNull(share), fromNull(relDn), fromNull(absDPnL), fromNull(relDPnL)
	p.MaxRelIndicatorError = fromNull(maxIndicRel)
	if err := json.Unmarshal([]byte(reasons), &p.Reasons); err != nil {
		return nil, "", err
	}
	if len(p.Reasons) == 0 {
		p.Reasons = nil // as Compare leaves it on a pass
	}

	// Every row is read: held when combos is set, else only taken into
	// the combos behind the maxima (engine.ParityWorst), which the figures
	// and the explanation name.
	if combos {
		p.Combos = []engine.ComboParity{}
	}
	worst := p.Worst()
	*worst = engine.NewParityWorst()
	p.SensitiveWorst = nil
	label := labeller(g)
	take := func(c *engine.ComboParity) {
		c.Name = label(c.Index)
		if sensitiveWorst.Valid && int64(c.Index) == sensitiveWorst.Int64 {
			cc := *c
			p.SensitiveWorst = &cc
		}
		if combos {
			p.Combos = append(p.Combos, *c)
		} else {
			worst.Add(c)
		}
	}
	// A report saved before v16 has its rows in parity_combos, one from
	// v16 on in parity_batches (saveParity): one of the two is empty, and
	// a study of digest version 1 to 3 has none in parity_batches.
	rows, err := q.QueryContext(ctx, `SELECT idx, hma, hma3, trades_ref, trades_test, dn, rel_dn, dpnl_pp, rel_dpnl, flips,
		non_borderline, max_flip_margin, dn_limit_breached FROM parity_combos WHERE parity_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, "", err
	}
	for rows.Next() {
		var c engine.ComboParity
		var relDn, dpnl, relDPnL, margin sql.NullFloat64
		if err := rows.Scan(&c.Index, &c.HMA, &c.HMA3, &c.Trades64, &c.Trades32, &c.Dn, &relDn, &dpnl, &relDPnL, &c.Flips,
			&c.NonBorderline, &margin, &c.DnLimitBreached); err != nil {
			rows.Close()
			return nil, "", err
		}
		c.RelDn, c.DPnLpp, c.RelDPnL, c.MaxFlipMargin = fromNull(relDn), fromNull(dpnl), fromNull(relDPnL), fromNull(margin)
		take(&c)
	}
	if err := rows.Close(); err != nil {
		return nil, "", err
	}
	if batches {
		if err := loadParityBatches(ctx, q, studyID, id, take); err != nil {
			return nil, "", err
		}
	}

	rows, err = q.QueryContext(ctx, `SELECT idx, hma, hma3, bar, time_ns, pos_ref, pos_test, margin, borderline, bars, trades, dpnl_pp
		FROM flips WHERE parity_id = ? ORDER BY rank`, id)
	if err != nil {
		return nil, "", err
	}
	for rows.Next() {
		var f engine.Flip
		var margin, dpnl sql.NullFloat64
		if err := rows.Scan(&f.Index, &f.HMA, &f.HMA3, &f.Bar, &f.Time, &f.Pos64, &f.Pos32, &margin, &f.Borderline, &f.Bars, &f.Trades, &dpnl); err != nil {
			rows.Close()
			return nil, "", err
		}
		f.Margin, f.DPnLpp = fromNull(margin), fromNull(dpnl)
		f.Name = label(f.Index)
		p.Flips = append(p.Flips, f)
	}
	if err := rows.Close(); err != nil {
		return nil, "", err
	}

	rows, err = q.QueryContext(ctx, `SELECT series, length, max_rel, bar FROM indicator_errors WHERE parity_id = ? ORDER BY rank`, id)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	for rows.Next() {
		var e engine.SeriesError
		var rel sql.NullFloat64
		if err := rows.Scan(&e.Series, &e.Length, &rel, &e.Bar); err != nil {
			return nil, "", err
		}
		e.MaxRel = fromNull(rel)
		p.IndicatorErrors = append(p.IndicatorErrors, e)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	p.JudgeAsFamily(g)
	p.Explain() // Worst from Combos when held, then the explanation
	return &p, compared, nil
}

// loadParityBatches hands take every row of the parity_batches of parity
// report id (of session studyID), in index order; none on a file below
// v16. A blob that cannot be read is a *ParityBatchError.
func loadParityBatches(ctx context.Context, q querier, studyID, id int64, take func(*engine.ComboParity)) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'parity_batches'`).Scan(&n); err != nil || n == 0 {
		return err // a raw file of a test, below v16
	}
	rows, err := q.QueryContext(ctx, `SELECT first_idx, last_idx, rows, data FROM parity_batches WHERE parity_id = ? ORDER BY first_idx`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	var buf []engine.ComboParity
	prev := -1 // the last index of the batch before
	for rows.Next() {
		var first, last, count int
		var blob []byte
		if err := rows.Scan(&first, &last, &count, &blob); err != nil {
			return err
		}
		if first <= prev {
			return &ParityBatchError{ID: studyID, First: first, Rows: count, Err: fmt.Errorf("it starts at or before combo %d, where the batch before it ends", prev)}
		}
		if buf, err = decodeParityBatch(buf[:0], blob, first, last, count); err != nil {
			return &ParityBatchError{ID: studyID, First: first, Rows: count, Err: err}
		}
		prev = last
		for i := range buf {
			take(&buf[i])
		}
	}
	return rows.Err()
}
