package sessions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"strings"

	"sweepbench/engine"
)

// A session's record digests cover what show, export, diff and resume
// print besides the results (which the runs' digests cover, digest.go):
// the study's settings, its dataset's description, its note, its
// robustness summary and its parity report (the summary, the row per
// combo, the worst flips and indicator errors). Each part has a digest of
// its own in studies, so that a refusal names the part that changed and
// sweepbench can take a part's digest anew when it rewrites that part (a
// resume's note and parity report, the robustness saved after the study)
// without blessing an edit of another one.
//
// A part's digest is the SHA-256 of its rows as SQLite returns them
// (recordQueries: the columns in a fixed order, a tag and the value of
// each), taken by the same function when the part is written (in the
// writing transaction, from the rows just written) and when it is read:
// what a REAL column keeps of a float, a NaN saved as NULL, are hashed as
// they read back.
//
// Not covered: the state a study's process updates as it goes and the
// store settles (status, error, times, host and pid; the runs' status,
// timings, backend and device), and the dataset's path, which a later
// study of the same bytes rewrites (the study's own data_spec, its
// absolute path, is covered). Like the runs' digests, they guard against
// accidents and edits, not against someone who rewrites a part and its
// digest together.

// recordVersion is the record digests a study written by this build
// carries (studies.digest_version): 4, the parts of recordPartsV4 (from
// schema version 16: version 3's, the parity report's row per combo
// hashed as the blobs of parity_batches). 3, the parts of recordPartsV3 (from
// schema version 15: version 2's, the settings with the study's execution
// options, fill, slippage, risk_free, and its buy-and-hold return). 2, the
// parts of recordPartsV2 (schema version 14: a study's strategy family
// and parameters, a flip's divergence, the sensitive combos). 1: the parts
// of recordParts, what a study saved at schema versions 12 and 13
// carries, verified as such. 0: saved before schema version 12, read
// unverified (Session.Unverified).
const recordVersion = 4

// writeVersion is the digest version a study saved in s now carries:
// 1 on a file below schema version 14 (a test's raw database), whose
// studies have no strategy columns.
func (s *Store) writeVersion() int {
	switch {
	case s.schema < strategySchema:
		return 1
	case s.schema < executionSchema:
		return 2
	case s.schema < parityBatchSchema:
		return 3
	}
	return recordVersion
}

// parityBatches reports whether the parity report of study id goes into
// parity_batches (saveParity): on a file of schema v16 on, when the
// study's digest version says so (batchedParity).
func (s *Store) parityBatches(ctx context.Context, q querier, id int64) (bool, error) {
	if s.schema < parityBatchSchema {
		return false, nil
	}
	var version int
	if err := q.QueryRowContext(ctx, `SELECT digest_version FROM studies WHERE id = ?`, id).Scan(&version); err != nil {
		return false, err
	}
	return batchedParity(version), nil
}

// recordSchema is the first schema version with record digests.
const recordSchema = 12

// recordPart is one digested part of a session.
type recordPart struct {
	name    string   // as a refusal names it
	column  string   // its digest's column in studies
	queries []string // its rows, each query with the study's id as its one argument
}

// recordParts are the parts of digest version 1. Never change one: a
// change is a new digest version, and old sessions keep theirs.
var recordParts = []recordPart{
	{name: "settings", column: "settings_digest", queries: []string{`SELECT created, data_spec, tz, time_column, lean_asset, timeframe, head,
		window_from, window_to, objective, min_trades, max_drawdown, blocks, wf, suite,
		hma_start, hma_stop, hma_step, hma3_start, hma3_stop, hma3_step, fee, mode, source, bars_per_year,
		precisions, wma, tolerance, backend, asked_backend, asked_bars_per_year FROM studies WHERE id = ?`}},
	{name: "dataset", column: "dataset_digest", queries: []string{`SELECT d.name, d.sha256, d.layout, d.timeframe, d.bars, d.source_bars,
		d.first_time, d.last_time, d.median_spacing_ns, d.gaps, d.largest_gap_ns, d.dropped_nan, d.min_price, d.max_price,
		d.files, d.price_scale, d.times, d.time_zone, d.convention, d.dropped_at, d.calendar, d.calendar_why
		FROM studies s JOIN datasets d ON d.id = s.dataset_id WHERE s.id = ?`}},
	{name: "note", column: "note_digest", queries: []string{`SELECT note FROM studies WHERE id = ?`}},
	{name: "robustness summary", column: "robustness_digest", queries: []string{`SELECT robustness FROM studies WHERE id = ?`}},
	{name: "parity report", column: "parity_digest", queries: []string{
		`SELECT compared, created, verdict, reasons, tolerance, incomplete, combos_compared, total_trades_ref, total_trades_test,
			shifted_trades, shifted_share, max_abs_dn, max_rel_dn, max_abs_dpnl_pp, max_rel_dpnl, combos_differing, flip_count,
			non_borderline_flips, max_rel_indicator_error FROM parities WHERE study_id = ? ORDER BY id`,
		`SELECT c.idx, c.hma, c.hma3, c.trades_ref, c.trades_test, c.dn, c.rel_dn, c.dpnl_pp, c.rel_dpnl, c.flips, c.non_borderline,
			c.max_flip_margin, c.dn_limit_breached FROM parities p JOIN parity_combos c ON c.parity_id = p.id
			WHERE p.study_id = ? ORDER BY p.id, c.idx`,
		`SELECT f.rank, f.idx, f.hma, f.hma3, f.bar, f.time_ns, f.pos_ref, f.pos_test, f.margin, f.borderline
			FROM parities p JOIN flips f ON f.parity_id = p.id WHERE p.study_id = ? ORDER BY p.id, f.rank`,
		`SELECT e.rank, e.series, e.length, e.max_rel, e.bar
			FROM parities p JOIN indicator_errors e ON e.parity_id = p.id WHERE p.study_id = ? ORDER BY p.id, e.rank`,
	}},
}

// recordPartsV2 are the parts of digest version 2: version 1's, the
// settings with the study's strategy family, parameters and restriction,
// the parity report with its sensitive combos and each flip's
// divergence. Never change one (as recordParts).
var recordPartsV2 = func() []recordPart {
	ps := make([]recordPart, len(recordParts))
	for i, p := range recordParts {
		p.queries = append([]string(nil), p.queries...)
		switch p.name {
		case "settings":
			p.queries = append(p.queries, `SELECT strategy, params, fast_below_slow FROM studies WHERE id = ?`)
		case "parity report":
			p.queries = append(p.queries,
				`SELECT sensitive, sensitive_worst FROM parities WHERE study_id = ? ORDER BY id`,
				`SELECT f.rank, f.bars, f.trades, f.dpnl_pp FROM parities p JOIN flips f ON f.parity_id = p.id
					WHERE p.study_id = ? ORDER BY p.id, f.rank`)
		}
		ps[i] = p
	}
	return ps
}()

// recordPartsV3 are the parts of digest version 3: version 2's, the
// settings with the study's execution options. Never change one.
var recordPartsV3 = func() []recordPart {
	ps := make([]recordPart, len(recordPartsV2))
	for i, p := range recordPartsV2 {
		p.queries = append([]string(nil), p.queries...)
		if p.name == "settings" {
			p.queries = append(p.queries, `SELECT fill, slippage, risk_free, buy_hold FROM studies WHERE id = ?`)
		}
		ps[i] = p
	}
	return ps
}()

// recordPartsV4 are the parts of digest version 4: version 3's, the
// parity report with its row per combo in parity_batches (schema v16),
// the blobs as stored. parity_combos, which a version 4 study leaves
// empty, is hashed still (version 3's query): a row added there, which
// loadStudyParity would read, is an edit. Never change one.
var recordPartsV4 = func() []recordPart {
	ps := make([]recordPart, len(recordPartsV3))
	for i, p := range recordPartsV3 {
		p.queries = append([]string(nil), p.queries...)
		if p.name == "parity report" {
			p.queries = append(p.queries, `SELECT b.first_idx, b.last_idx, b.rows, b.data FROM parities p JOIN parity_batches b ON b.parity_id = p.id
			WHERE p.study_id = ? ORDER BY p.id, b.first_idx`)
		}
		ps[i] = p
	}
	return ps
}()

// batchedParity reports whether a study of digest version v keeps its
// parity report's rows in parity_batches (on a file of schema v16 on):
// version 4, or 0 (saved before record digests; a resume writes them
// so). A study of version 1 to 3 keeps the rows of parity_combos that its
// digest hashes, resumed or not, and nothing of parity_batches is read
// for it.
func batchedParity(v int) bool { return v == 0 || v >= 4 }

// partsOf are the parts of digest version v (1 to 4).
func partsOf(v int) []recordPart {
	switch v {
	case 1:
		return recordParts
	case 2:
		return recordPartsV2
	case 3:
		return recordPartsV3
	}
	return recordPartsV4
}

// recordPartNames are the names of recordParts, in order.
func recordPartNames() []string {
	names := make([]string, len(recordParts))
	for i, p := range recordParts {
		names[i] = p.name
	}
	return names
}

// partDigest hashes part p of study id as q reads it now.
func partDigest(ctx context.Context, q querier, p *recordPart, id int64) ([]byte, error) {
	h := sha256.New()
	var buf []byte
	for qi, query := range p.queries {
		buf = binary.LittleEndian.AppendUint32(buf[:0], uint32(qi))
		h.Write(append([]byte{'Q'}, buf...))
		rows, err := q.QueryContext(ctx, query, id)
		if err != nil {
			return nil, err
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return nil, err
		}
		vals, dest := make([]any, len(cols)), make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, err
			}
			h.Write([]byte{'R'})
			for _, v := range vals {
				if err := hashValue(h, v); err != nil {
					rows.Close()
					return nil, fmt.Errorf("the %s: %w", p.name, err)
				}
			}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	return h.Sum(nil), nil
}

// hashValue writes v, a value as database/sql scans it into an any, to h
// as a tag and its bytes.
func hashValue(h hash.Hash, v any) error {
	var b []byte
	switch x := v.(type) {
	case nil:
		b = []byte{0}
	case int64:
		b = binary.LittleEndian.AppendUint64([]byte{1}, uint64(x))
	case float64:
		b = binary.LittleEndian.AppendUint64([]byte{2}, math.Float64bits(x))
	case string:
		b = binary.LittleEndian.AppendUint64([]byte{3}, uint64(len(x)))
		b = append(b, x...)
	case []byte:
		b = binary.LittleEndian.AppendUint64([]byte{4}, uint64(len(x)))
		b = append(b, x...)
	case bool:
		b = []byte{5, 0}
		if x {
			b[1] = 1
		}
	default:
		return fmt.Errorf("a value of type %T cannot be digested", v)
	}
	h.Write(b)
	return nil
}

// stampRecord takes anew, in tx, the digests of the named parts of study
// id from its rows as they are now (just written by sweepbench), when the
// study carries record digests (a study saved before them stays
// unverified). Every part when names is empty.
func (s *Store) stampRecord(ctx context.Context, tx *sql.Tx, id int64, names ...string) error {
	if s.schema < recordSchema {
		return nil
	}
	var version int
	if err := tx.QueryRowContext(ctx, `SELECT digest_version FROM studies WHERE id = ?`, id).Scan(&version); err != nil {
		return err
	}
	if version < 1 || version > recordVersion {
		return nil
	}
	parts := partsOf(version)
	for i := range parts {
		p := &parts[i]
		if len(names) > 0 && !contains(names, p.name) {
			continue
		}
		d, err := partDigest(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE studies SET `+p.column+` = ? WHERE id = ?`, d, id); err != nil {
			return err
		}
	}
	return nil
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// verifyRecord checks the parts of study id, read through q (a read
// transaction: the rows and their digests from one snapshot), against
// their digests: *RecordError names those that no longer match, or whose
// digest is missing. A study saved before record digests (digest_version
// 0, below the file's epoch) passes unverified; one at or above the epoch
// that reads as such, or that carries digests with version 0, had its
// version lowered and is refused, as is one whose version is newer than
// this build's. A study at or above the runs' epoch whose run has no
// digest is refused with *DigestError (Missing).
func verifyRecord(ctx context.Context, q querier, id int64) error {
	e, err := readEpochs(ctx, q)
	if err != nil {
		return err
	}
	var version int
	dest := []any{&version}
	saved := make([][]byte, len(recordParts))
	cols := make([]string, len(recordParts))
	for i := range recordParts {
		dest, cols[i] = append(dest, &saved[i]), recordParts[i].column
	}
	err = q.QueryRowContext(ctx, `SELECT digest_version, `+strings.Join(cols, ", ")+` FROM studies WHERE id = ?`, id).Scan(dest...)
	if err == sql.ErrNoRows {
		return notFound(id)
	}
	if err != nil {
		return err
	}
	switch {
	case version > recordVersion:
		return &RecordError{ID: id, Version: version, Newer: true}
	case version < 1:
		carries := false
		for _, d := range saved {
			carries = carries || d != nil
		}
		if version != 0 || carries || id >= e.record {
			return &RecordError{ID: id, Parts: recordPartNames(), Version: version, Lowered: true}
		}
	default:
		var changed, removed []string
		parts := partsOf(version)
		for i := range parts {
			if len(saved[i]) == 0 {
				removed = append(removed, parts[i].name)
				continue
			}
			d, err := partDigest(ctx, q, &parts[i], id)
			if err != nil {
				return err
			}
			if !bytes.Equal(d, saved[i]) {
				changed = append(changed, parts[i].name)
			}
		}
		if len(changed) > 0 || len(removed) > 0 {
			return &RecordError{ID: id, Parts: changed, Removed: removed}
		}
	}
	if id < e.runs {
		return nil
	}
	var prec string
	err = q.QueryRowContext(ctx, `SELECT precision FROM runs WHERE study_id = ? AND (digest IS NULL OR length(digest) != ?)
		ORDER BY CASE precision WHEN 'fp64' THEN 0 ELSE 1 END LIMIT 1`, id, len(digest{})).Scan(&prec)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	p, err := engine.ParsePrecisions(prec)
	if err != nil || len(p) != 1 {
		return fmt.Errorf("session %d: run precision %q", id, prec)
	}
	return &DigestError{ID: id, Precision: p[0], Missing: true}
}

// The epochs (table meta, schema v13) say where digesting began in a
// file: record_digests_from is the first study that must carry record
// digests, run_digests_from the first whose runs must carry digests.
// Studies' ids are never reused (AUTOINCREMENT), so every study saved
// since has an id at or above them. They sit outside the rows a session
// owns: lowering a session's digest_version or removing a digest cannot
// make an edited session read as an old one.
const (
	recordEpochName = "record_digests_from"
	runEpochName    = "run_digests_from"
)

// epochs are a file's epochs as read; math.MaxInt64 where the file has
// none (a test's database older than v13: every session reads as old).
type epochs struct{ record, runs int64 }

// readEpochs reads the epochs through q. A file with the table but
// without a row has had it removed: that epoch is 1, every study.
func readEpochs(ctx context.Context, q querier) (epochs, error) {
	e := epochs{math.MaxInt64, math.MaxInt64}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'meta'`).Scan(&n); err != nil || n == 0 {
		return e, err
	}
	e = epochs{1, 1}
	rows, err := q.QueryContext(ctx, `SELECT name, value FROM meta WHERE name IN (?, ?)`, recordEpochName, runEpochName)
	if err != nil {
		return e, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return e, err
		}
		if name == recordEpochName {
			e.record = v
		} else {
			e.runs = v
		}
	}
	if err := rows.Err(); err != nil {
		return e, err
	}
	e.runs = min(e.runs, e.record) // a study with record digests has run digests too
	return e, nil
}

// recordEpochs is v13's step: the epochs of the file as it is. The record
// epoch is the first study that carries any record digest or a digest
// version (every study since v12 does), else the next study's id; the
// runs' epoch the study after the last one below the record epoch with a
// run without a digest (saved before v3), and at most the record epoch.
// What was edited in the file before this migration stays as it is: a
// study with digests but its version lowered is refused, as after.
func recordEpochs(ctx context.Context, tx *sql.Tx) error {
	var next, record, lastNull int64
	if err := tx.QueryRowContext(ctx, `SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'studies'), 0),
		COALESCE((SELECT max(id) FROM studies), 0)) + 1`).Scan(&next); err != nil {
		return err
	}
	cond := "digest_version != 0"
	for _, p := range recordParts {
		cond += " OR " + p.column + " IS NOT NULL"
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(min(id), ?) FROM studies WHERE `+cond, next).Scan(&record); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(study_id), 0) FROM runs WHERE digest IS NULL AND study_id < ?`, record).Scan(&lastNull); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?), (?, ?)`,
		recordEpochName, record, runEpochName, min(record, lastNull+1))
	return err
}

// markUnverified sets ss.Unverified from what it was saved with: a study
// below the record epoch without record digests has every part
// unverified, one below the runs' epoch with a run without a digest its
// results. nullRuns: whether one of its runs has no digest.
func markUnverified(ss *Session, e epochs, nullRuns bool) {
	ss.Unverified = nil
	if nullRuns && ss.ID < e.runs {
		ss.Unverified = append(ss.Unverified, "results")
	}
	if ss.digestVersion == 0 && ss.ID < e.record {
		ss.Unverified = append(ss.Unverified, recordPartNames()...)
	}
}

// UnverifiedNote says which parts of ss no digest covers, as a sentence
// without a final period ("" when every part is covered).
func (ss *Session) UnverifiedNote() string {
	if len(ss.Unverified) == 0 {
		return ""
	}
	what := "more than its results"
	if ss.Unverified[0] == "results" {
		what = "its results"
	}
	return fmt.Sprintf("session %d was saved before sweepbench digested %s: its %s are read unverified",
		ss.ID, what, strings.Join(ss.Unverified, ", "))
}

// verify is verifyRecord in a read transaction of its own.
func (s *Store) verify(ctx context.Context, id int64) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.wrap(fmt.Sprintf("read session %d", id), err)
	}
	defer tx.Rollback()
	return s.wrap(fmt.Sprintf("read session %d", id), verifyRecord(ctx, tx, id))
}

// RecordError refuses a saved session whose settings, dataset, note,
// robustness summary or parity report no longer hash to the digest saved
// with them, or whose digest is missing, or whose digest version was
// lowered: they were changed or damaged in the database after they were
// saved, and showing them would pass them off as the study's. Show,
// export, diff and resume refuse the session (rm still removes it); a
// session saved before record digests (schema version 11 and older) is
// read unverified (Session.Unverified). Newer: the session was saved by a
// newer sweepbench, whose digests this build cannot check.
type RecordError struct {
	ID      int64
	Parts   []string // the parts that changed, e.g. "settings", "parity report"
	Removed []string // the parts whose digest is missing
	Version int      // the digest version read, when Lowered or Newer
	Lowered bool     // the version reads lower than the session was saved with
	Newer   bool     // the version is newer than this build's
}

func (e *RecordError) Error() string {
	switch {
	case e.Newer:
		return fmt.Sprintf("session %d was saved by a newer sweepbench (record digest version %d; this one knows %d), so it is not used: read it with that sweepbench or a later one",
			e.ID, e.Version, recordVersion)
	case e.Lowered:
		return fmt.Sprintf("session %d: its digest version reads %d, but the session was saved with record digests: the version was changed in the database after it was saved, so its %s cannot be verified and the session is not used",
			e.ID, e.Version, strings.Join(e.Parts, ", "))
	}
	var clauses []string
	if len(e.Parts) > 0 {
		verb, them := "does not match the digest saved with it: it was", "it was"
		if len(e.Parts) > 1 {
			verb, them = "do not match the digests saved with them: they were", "they were"
		}
		clauses = append(clauses, fmt.Sprintf("%s %s changed or damaged in the database after %s saved", its(e.Parts), verb, them))
	}
	if len(e.Removed) > 0 {
		clauses = append(clauses, fmt.Sprintf("the digest of %s is missing: it was removed from the database after the session was saved", its(e.Removed)))
	}
	return fmt.Sprintf("session %d: %s, so the session is not used", e.ID, strings.Join(clauses, "; "))
}

// its lists parts as "its a, its b and its c".
func its(names []string) string {
	parts := "its " + names[0]
	for i, p := range names[1:] {
		if i == len(names)-2 {
			parts += " and its " + p
		} else {
			parts += ", its " + p
		}
	}
	return parts
}
