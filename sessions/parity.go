package sessions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"sweepbench/engine"
)

// saveParity stores p as the parity report of run test against run ref,
// replacing an earlier one of the same pair. studyID is set for a study's
// own fp32-vs-fp64 report. v14 (schema v14 on): the file holds a
// flip's divergence (its bars, trades and dPnL) and the sensitive combos;
// a writer on an older file (a test's) leaves them out. A row's label
// (Name) is not kept: the study's grid names it (refillLabels).
func saveParity(ctx context.Context, tx *sql.Tx, studyID *int64, ref, test int64, compared string, p *engine.Parity, now time.Time, v14 bool) error {
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
	fstmt, err := tx.PrepareContext(ctx, `INSERT INTO flips (parity_id, rank, idx, hma, hma3, bar, time_ns, pos_ref, pos_test, margin, borderline)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer fstmt.Close()
	for i, f := range p.Flips {
		if _, err := fstmt.ExecContext(ctx, id, i, f.Index, f.HMA, f.HMA3, f.Bar, f.Time, f.Pos64, f.Pos32, nullable(f.Margin), f.Borderline); err != nil {
			return err
		}
		if v14 && (f.Bars != 0 || f.Trades != 0 || f.DPnLpp != 0) {
			if _, err := tx.ExecContext(ctx, `UPDATE flips SET bars = ?, trades = ?, dpnl_pp = ? WHERE parity_id = ? AND rank = ?`,
				f.Bars, f.Trades, nullable(f.DPnLpp), id, i); err != nil {
				return err
			}
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

// loadStudyParity reads the parity report of study id, or nil when it has
// none, explained (Parity.Explain) as Compare explains it. Without combos
// it leaves out the row per combo (engine.Parity.Counts: the part that
// grows with the grid), reading each only into the combos behind the
// maxima (Parity.Worst), which the figures and the explanation name.
// The labels of a strategy study's rows and flips are refilled from its
// grid g (labeller).
func loadStudyParity(ctx context.Context, q querier, studyID int64, g engine.Grid, combos bool) (*engine.Parity, string, error) {
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
	rows, err := q.QueryContext(ctx, `SELECT idx, hma, hma3, trades_ref, trades_test, dn, rel_dn, dpnl_pp, rel_dpnl, flips,
		non_borderline, max_flip_margin, dn_limit_breached FROM parity_combos WHERE parity_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, "", err
	}
	if combos {
		p.Combos = []engine.ComboParity{}
	}
	worst := p.Worst()
	*worst = engine.NewParityWorst()
	p.SensitiveWorst = nil
	label := labeller(g)
	for rows.Next() {
		var c engine.ComboParity
		var relDn, dpnl, relDPnL, margin sql.NullFloat64
		if err := rows.Scan(&c.Index, &c.HMA, &c.HMA3, &c.Trades64, &c.Trades32, &c.Dn, &relDn, &dpnl, &relDPnL, &c.Flips,
			&c.NonBorderline, &margin, &c.DnLimitBreached); err != nil {
			rows.Close()
			return nil, "", err
		}
		c.RelDn, c.DPnLpp, c.RelDPnL, c.MaxFlipMargin = fromNull(relDn), fromNull(dpnl), fromNull(relDPnL), fromNull(margin)
		c.Name = label(c.Index)
		if sensitiveWorst.Valid && int64(c.Index) == sensitiveWorst.Int64 {
			cc := c
			p.SensitiveWorst = &cc
		}
		if combos {
			p.Combos = append(p.Combos, c)
		} else {
			worst.Add(&c)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, "", err
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
