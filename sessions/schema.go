package sessions

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"sweepbench/engine"
)

// migration takes the schema from one version to the next: its SQL, then,
// when set, a step in Go, in the same transaction.
type migration struct {
	sql string
	// run does what SQL cannot (v8 encodes the rows of results as
	// batches); it sees the schema as sql left it.
	run func(ctx context.Context, tx *sql.Tx) error
}

// migrations[v] takes the schema from version v to v+1 (PRAGMA
// user_version); a new database runs them all. Never edit a released one:
// append a new migration instead, and extend TestMigrateFromEveryVersion.
//
// Conventions: times are fixed-width UTC text (timeLayout), durations
// INTEGER nanoseconds, floats with NULL standing for NaN (SQLite stores a
// NaN as NULL; ±Inf are stored as such). The metrics are stored bit for
// bit, in blobs (result_batches, v8; before, results was STRICT with ANY
// columns); the other floats are REAL.
var migrations = []migration{
	// v1: datasets, studies (one `sweepbench run`), their runs (one per
	// precision) and every combo's metrics.
	{sql: `
CREATE TABLE datasets (
	id                INTEGER PRIMARY KEY,
	name              TEXT NOT NULL,            -- embedded:btcusdt-1m[:5000], or the file as given
	path              TEXT NOT NULL DEFAULT '', -- the file as given; '' for embedded data
	sha256            TEXT NOT NULL,            -- of the bytes as stored (of the .gz for a .gz)
	layout            TEXT NOT NULL,
	timeframe         TEXT NOT NULL DEFAULT '', -- '' when not resampled
	bars              INTEGER NOT NULL,         -- as swept (after resampling and --head)
	source_bars       INTEGER NOT NULL,
	first_time        TEXT NOT NULL,
	last_time         TEXT NOT NULL,
	median_spacing_ns INTEGER NOT NULL,
	gaps              INTEGER NOT NULL,
	largest_gap_ns    INTEGER NOT NULL,
	dropped_nan       INTEGER NOT NULL,
	min_price         REAL,
	max_price         REAL,
	UNIQUE (sha256, name, timeframe, bars, first_time, last_time)
);

CREATE TABLE studies (
	id            INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused after rm
	created       TEXT NOT NULL,
	updated       TEXT NOT NULL,                     -- last batch committed
	finished      TEXT,
	dataset_id    INTEGER NOT NULL REFERENCES datasets(id),
	-- how to load the dataset again (resume, diff): the run's flags
	data_spec     TEXT NOT NULL,                     -- embedded:NAME or an absolute path
	tz            TEXT NOT NULL DEFAULT '',
	time_column   TEXT NOT NULL DEFAULT '',
	timeframe     TEXT NOT NULL DEFAULT '',
	head          INTEGER NOT NULL DEFAULT 0,
	-- the sweep
	hma_start     INTEGER NOT NULL,
	hma_stop      INTEGER NOT NULL,
	hma_step      INTEGER NOT NULL,
	hma3_start    INTEGER NOT NULL,
	hma3_stop     INTEGER NOT NULL,
	hma3_step     INTEGER NOT NULL,
	fee           REAL NOT NULL,
	mode          TEXT NOT NULL,
	source        TEXT NOT NULL,
	bars_per_year REAL NOT NULL,
	precisions    TEXT NOT NULL,                     -- 'fp64,fp32'
	wma           TEXT NOT NULL,                     -- of the fp32 run
	tolerance     REAL NOT NULL,                     -- parity borderline margin
	backend       TEXT NOT NULL,                     -- as resolved (auto -> reference)
	note          TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL CHECK (status IN ('running', 'complete', 'cancelled', 'failed', 'interrupted')),
	error         TEXT NOT NULL DEFAULT '',
	-- the process writing it, to tell a live run from an interrupted one
	host          TEXT NOT NULL,
	pid           INTEGER NOT NULL,
	pid_start     TEXT NOT NULL DEFAULT ''           -- boot id and start tick of pid, where known
);
CREATE INDEX studies_created ON studies (created);

CREATE TABLE runs (
	id          INTEGER PRIMARY KEY,
	study_id    INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
	precision   TEXT NOT NULL CHECK (precision IN ('fp64', 'fp32')),
	backend     TEXT NOT NULL,
	device      TEXT NOT NULL DEFAULT '',
	wma         TEXT NOT NULL,
	status      TEXT NOT NULL CHECK (status IN ('running', 'complete', 'cancelled', 'failed', 'interrupted')),
	error       TEXT NOT NULL DEFAULT '',
	created     TEXT NOT NULL,
	updated     TEXT NOT NULL,
	combos      INTEGER NOT NULL,                    -- in the grid
	done        INTEGER NOT NULL DEFAULT 0,          -- saved
	prepare_ns  INTEGER NOT NULL DEFAULT 0,
	elapsed_ns  INTEGER NOT NULL DEFAULT 0,          -- summed over resumes
	best_sharpe REAL,
	best_index  INTEGER,
	UNIQUE (study_id, precision)
);

CREATE TABLE results (
	run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	idx          INTEGER NOT NULL,                   -- grid index, HMA-major
	hma          INTEGER NOT NULL,
	hma3         INTEGER NOT NULL,
	-- the SPEC metrics by their SPEC names (engine.MetricNames). ANY in a
	-- STRICT table stores a float exactly as given: REAL affinity would
	-- turn -0.0 into integer 0. NULL is NaN.
	total_return ANY,
	cagr         ANY,
	sharpe       ANY,
	sortino      ANY,
	max_drawdown ANY,
	calmar       ANY,
	win_rate     ANY,
	total_trades INTEGER NOT NULL,
	var_95       ANY,
	cvar_95      ANY,
	omega        ANY,
	long_bars    INTEGER NOT NULL,
	short_bars   INTEGER NOT NULL,
	flat_bars    INTEGER NOT NULL,
	PRIMARY KEY (run_id, idx)
) STRICT, WITHOUT ROWID;
`},
	// v2: parity reports (SPEC "Parity") between two runs: a study's own
	// fp32 vs fp64, per combo, with the worst flips and indicator errors.
	{sql: `
CREATE TABLE parities (
	id                      INTEGER PRIMARY KEY,
	study_id                INTEGER REFERENCES studies(id) ON DELETE CASCADE, -- set for a study's own parity
	ref_run                 INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	test_run                INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	compared                TEXT NOT NULL,          -- 'fp32 vs fp64'
	created                 TEXT NOT NULL,
	verdict                 TEXT NOT NULL CHECK (verdict IN ('pass', 'collapse')),
	reasons                 TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
	tolerance               REAL NOT NULL,
	incomplete              INTEGER NOT NULL,
	combos_compared         INTEGER NOT NULL,
	total_trades_ref        INTEGER NOT NULL,
	total_trades_test       INTEGER NOT NULL,
	shifted_trades          INTEGER NOT NULL,
	shifted_share           REAL,
	max_abs_dn              INTEGER NOT NULL,
	max_rel_dn              REAL,
	max_abs_dpnl_pp         REAL,
	max_rel_dpnl            REAL,
	combos_differing        INTEGER NOT NULL,
	flip_count              INTEGER NOT NULL,
	non_borderline_flips    INTEGER NOT NULL,
	max_rel_indicator_error REAL,
	UNIQUE (ref_run, test_run)
);

CREATE TABLE parity_combos (
	parity_id         INTEGER NOT NULL REFERENCES parities(id) ON DELETE CASCADE,
	idx               INTEGER NOT NULL,
	hma               INTEGER NOT NULL,
	hma3              INTEGER NOT NULL,
	trades_ref        INTEGER NOT NULL,
	trades_test       INTEGER NOT NULL,
	dn                INTEGER NOT NULL,
	rel_dn            REAL,
	dpnl_pp           REAL,
	rel_dpnl          REAL,
	flips             INTEGER NOT NULL,
	non_borderline    INTEGER NOT NULL,
	max_flip_margin   REAL,
	dn_limit_breached INTEGER NOT NULL,
	PRIMARY KEY (parity_id, idx)
) WITHOUT ROWID;

CREATE TABLE flips (
	parity_id  INTEGER NOT NULL REFERENCES parities(id) ON DELETE CASCADE,
	rank       INTEGER NOT NULL,                    -- 0 = worst
	idx        INTEGER NOT NULL,
	hma        INTEGER NOT NULL,
	hma3       INTEGER NOT NULL,
	bar        INTEGER NOT NULL,
	time_ns    INTEGER NOT NULL,                    -- the bar's open time, Unix ns
	pos_ref    INTEGER NOT NULL,
	pos_test   INTEGER NOT NULL,
	margin     REAL,                                -- |h3-h|/close in the reference
	borderline INTEGER NOT NULL,
	PRIMARY KEY (parity_id, rank)
) WITHOUT ROWID;

CREATE TABLE indicator_errors (
	parity_id INTEGER NOT NULL REFERENCES parities(id) ON DELETE CASCADE,
	rank      INTEGER NOT NULL,                     -- 0 = worst
	series    TEXT NOT NULL,                        -- 'h' or 'h3'
	length    INTEGER NOT NULL,
	max_rel   REAL,
	bar       INTEGER NOT NULL,
	PRIMARY KEY (parity_id, rank)
) WITHOUT ROWID;
`},
	// v3: each run's digest of its saved rows (digest.go), updated in the
	// transaction of every batch. NULL for a run saved before v3: it is
	// read unverified, as before.
	{sql: `
ALTER TABLE runs ADD COLUMN digest BLOB;
`},
	// v4: the LEAN security type a study's data was loaded as, when its
	// path does not say ('' = from the path); how a dataset was read (the
	// summary states it) and the calendar its bars follow (the derived
	// bars per year follows it). Defaults are what a v2 session knew.
	{sql: `
ALTER TABLE studies ADD COLUMN lean_asset TEXT NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN files INTEGER NOT NULL DEFAULT 1;       -- files read (a folder or glob: more)
ALTER TABLE datasets ADD COLUMN price_scale REAL NOT NULL DEFAULT 0;    -- prices were divided by it; 0 = not recorded
ALTER TABLE datasets ADD COLUMN times TEXT NOT NULL DEFAULT '';         -- unix, offset, local, mixed
ALTER TABLE datasets ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';     -- of the local times
ALTER TABLE datasets ADD COLUMN convention TEXT NOT NULL DEFAULT '';    -- e.g. 'LEAN equity/usa (from the path)'
ALTER TABLE datasets ADD COLUMN dropped_at TEXT NOT NULL DEFAULT '[]';  -- JSON array: the first dropped rows' places
ALTER TABLE datasets ADD COLUMN calendar TEXT NOT NULL DEFAULT '';      -- '24/7', 'sessions', '' = not known
ALTER TABLE datasets ADD COLUMN calendar_why TEXT NOT NULL DEFAULT '';
`},
	// v5: the window of bars a study selected (--from, --to, as given;
	// '' = no bound, what every earlier session swept).
	{sql: `
ALTER TABLE studies ADD COLUMN window_from TEXT NOT NULL DEFAULT '';
ALTER TABLE studies ADD COLUMN window_to TEXT NOT NULL DEFAULT '';
`},
	// v6: the study's robustness summary (engine/robust's Summary as JSON,
	// '' = none was computed).
	{sql: `
ALTER TABLE studies ADD COLUMN robustness TEXT NOT NULL DEFAULT '';
`},
	// v7: what "best" meant for the study's top lists and robustness
	// (--objective, '' = sharpe) and its constraints (0 = none).
	{sql: `
ALTER TABLE studies ADD COLUMN objective TEXT NOT NULL DEFAULT '';
ALTER TABLE studies ADD COLUMN min_trades INTEGER NOT NULL DEFAULT 0;
ALTER TABLE studies ADD COLUMN max_drawdown REAL NOT NULL DEFAULT 0;
`},
	// v8: results stored a batch at a time, one blob per batch
	// (resultbatch.go), instead of a row per combo: the rows of results
	// move into batches (resultsToBatches) and the table goes. Not WITHOUT
	// ROWID, unlike the other tables of rows: a WITHOUT ROWID table is a
	// B-tree of whole records, and SQLite reads a record that overflowed
	// its page (a blob of kilobytes) in full to compare keys with it while
	// it finds the place of an insert, which made inserting a batch read
	// the blobs next to it. Here the blobs sit in the rowid B-tree, in the
	// order they were saved, and the primary key is an index beside it.
	{sql: `
CREATE TABLE result_batches (
	run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	first_idx INTEGER NOT NULL,                     -- grid index of the batch's first combo (rows are in index order)
	last_idx  INTEGER NOT NULL,                     -- of its last
	rows      INTEGER NOT NULL CHECK (rows > 0),    -- combos in the batch
	data      BLOB NOT NULL,                        -- the rows, encoded (resultbatch.go)
	PRIMARY KEY (run_id, first_idx)
) STRICT;
`, run: resultsToBatches},
	// v9: the robustness a study asked for (--blocks, 0 = none; --wf, ''
	// = none), so that a study resumed or reopened knows it even when its
	// robustness summary was never computed (an interrupted run).
	{sql: `
ALTER TABLE studies ADD COLUMN blocks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE studies ADD COLUMN wf TEXT NOT NULL DEFAULT '';
`},
	// v10: the backend and the bars per year as the user gave them (auto,
	// 0 = derived from the data) beside the columns backend and
	// bars_per_year (as resolved and used), so that a session's study
	// edited again (a timeframe changed) derives its bars per year anew
	// and picks its backend again. NULL: saved before v10, not known.
	{sql: `
ALTER TABLE studies ADD COLUMN asked_backend TEXT;
ALTER TABLE studies ADD COLUMN asked_bars_per_year REAL;
`},
	// v11: the suite a study is one dataset of (engine.Spec.Suite, "ID D/N";
	// '' = a study of one dataset).
	{sql: `
ALTER TABLE studies ADD COLUMN suite TEXT NOT NULL DEFAULT '';
`},
	// v12: each study's record digests (recorddigest.go): of its settings,
	// its dataset's description, its note, its robustness summary and its
	// parity report, each taken anew when sweepbench rewrites that part.
	// digest_version 0 (every study saved before v12): none, the parts
	// read unverified, as before.
	{sql: `
ALTER TABLE studies ADD COLUMN digest_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE studies ADD COLUMN settings_digest BLOB;
ALTER TABLE studies ADD COLUMN dataset_digest BLOB;
ALTER TABLE studies ADD COLUMN note_digest BLOB;
ALTER TABLE studies ADD COLUMN robustness_digest BLOB;
ALTER TABLE studies ADD COLUMN parity_digest BLOB;
`},
	// v13: where digesting began in this file (recorddigest.go, epochs),
	// kept outside the rows a session owns: the first session that must
	// carry record digests and the first whose runs must carry digests.
	// A session from there on with a lowered digest version or a missing
	// digest was edited, not saved before digests, and is refused.
	{sql: `
CREATE TABLE meta (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`, run: recordEpochs},
	// v14: strategy families (SPEC Part 2). A study's family ('' = hull,
	// every study saved before v14), its grid's parameters as the grid
	// writes them (engine.Strategy.Texts: every parameter, defaults
	// included, as a JSON object name -> range text, a leg "KIND:RANGE";
	// '' for hull), so that the grid is rebuilt as it was swept whatever
	// the defaults become, and the crossover restriction. A strategy
	// study's results are by combo index, as hull's are (result_batches
	// never held lengths); its hma_* columns hold the Spec's hull ranges,
	// unused (0 when it had none), and the hma, hma3 of its parity rows
	// and flips are 0: a row's parameters and label (ComboParity.Name,
	// Flip.Name) are the rebuilt grid's at its index. A flip of a family
	// with memory is a divergence: its bars, the trades and the return it
	// moved (0 for hull, and for every flip saved before v14); a parity
	// report's sensitive combos (engine.Parity.Sensitive) and the index
	// of the worst of them (NULL = none).
	{sql: `
ALTER TABLE studies ADD COLUMN strategy TEXT NOT NULL DEFAULT '';
ALTER TABLE studies ADD COLUMN params TEXT NOT NULL DEFAULT '';
ALTER TABLE studies ADD COLUMN fast_below_slow INTEGER NOT NULL DEFAULT 0;
ALTER TABLE flips ADD COLUMN bars INTEGER NOT NULL DEFAULT 0;
ALTER TABLE flips ADD COLUMN trades INTEGER NOT NULL DEFAULT 0;
ALTER TABLE flips ADD COLUMN dpnl_pp REAL DEFAULT 0;
ALTER TABLE parities ADD COLUMN sensitive INTEGER NOT NULL DEFAULT 0;
ALTER TABLE parities ADD COLUMN sensitive_worst INTEGER;
`},
	// v15: SPEC Part 2's execution options and new metrics. A study's fill
	// ('close' or 'next-open'), slippage (a fraction per unit of position
	// change) and risk-free rate (annual, a fraction); every study saved
	// before v15 had the defaults. Its bars' buy-and-hold return
	// (engine.BuyHoldReturn, a fraction; NULL, unknown, for a study saved
	// before v15). Results batches of format version 2
	// (resultbatch.go) hold the 10 new metrics; the version 1 batches of
	// earlier runs stay as they are and read them as NaN. The version
	// bump keeps an older sweepbench from reading version 2 batches as
	// damaged ones: it refuses the file as newer instead.
	{sql: `
ALTER TABLE studies ADD COLUMN fill TEXT NOT NULL DEFAULT 'close';
ALTER TABLE studies ADD COLUMN slippage REAL NOT NULL DEFAULT 0;
ALTER TABLE studies ADD COLUMN risk_free REAL NOT NULL DEFAULT 0;
ALTER TABLE studies ADD COLUMN buy_hold REAL;
`},
	// v16: a parity report's row per combo stored a batch at a time, one
	// blob of up to maxBlobRows rows per row of parity_batches
	// (paritybatch.go), as results are since v8: a row of parity_combos
	// cost about 5 us of CPU to insert and read back for its digest, so the
	// report of a 320 x 320 study took half a second to save after the
	// study, when nothing else is left to overlap it. The reports saved
	// before v16 keep their rows in parity_combos (and their digest version,
	// 1 to 3, whose parity report hashes them); a report saved from v16 on,
	// by a study of digest version 4, has its rows in parity_batches only.
	// A rowid table with the primary key as an index beside it, as
	// result_batches.
	{sql: `
CREATE TABLE parity_batches (
	parity_id INTEGER NOT NULL REFERENCES parities(id) ON DELETE CASCADE,
	first_idx INTEGER NOT NULL,                     -- grid index of the batch's first combo (rows are in index order)
	last_idx  INTEGER NOT NULL,                     -- of its last
	rows      INTEGER NOT NULL CHECK (rows > 0),    -- combos in the batch
	data      BLOB NOT NULL,                        -- the rows, encoded (paritybatch.go)
	PRIMARY KEY (parity_id, first_idx)
) STRICT;
`},
}

// parityBatchSchema is the first schema version that stores a parity
// report's rows as batches (v16): a writer on an older file writes rows
// of parity_combos.
const parityBatchSchema = 16

// executionSchema is the first schema version that holds a study's
// execution options (v15): a writer on an older file saves the defaults
// only.
const executionSchema = 15

// strategySchema is the first schema version that holds strategy
// studies (v14): a writer on an older file (a test's raw database)
// saves hull's columns only.
const strategySchema = 14

// digestSchema is the first schema version whose runs carry a digest.
const digestSchema = 3

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// versionError is a database made by a newer sweepbench.
type versionError struct{ have, know int }

func (e *versionError) Error() string {
	return fmt.Sprintf("schema version %d is newer than this sweepbench knows (%d)", e.have, e.know)
}

// migrate brings db to schema version target, one migration per
// transaction. Each transaction re-reads the version under the write lock,
// so two processes opening a new file at once migrate it once.
func migrate(ctx context.Context, db *sql.DB, target int) error {
	for {
		v, err := userVersion(ctx, db)
		if err != nil {
			return err
		}
		if v > len(migrations) {
			return &versionError{v, len(migrations)}
		}
		if v >= target {
			return nil
		}
		if err := migrateOne(ctx, db, target); err != nil {
			return err
		}
	}
}

func migrateOne(ctx context.Context, db *sql.DB, target int) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v >= target || v >= len(migrations) {
		return nil // another process got there first
	}
	m := migrations[v]
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("schema migration %d -> %d: %w", v, v+1, err)
	}
	if m.run != nil {
		if err := m.run(ctx, tx); err != nil {
			return fmt.Errorf("schema migration %d -> %d: %w", v, v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return err
	}
	return tx.Commit()
}

func userVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// resultsToBatches is v8's step: every run's rows of results, in index
// order, go into result_batches as batches of maxBlobRows, bit for
// bit (a NULL metric, NaN, as the NaN the store read it as), and results
// is dropped. Runs keep their digests: a digest is taken over the same
// bytes from the batches. A combo's lengths are not kept but come from its
// study's grid, as they do when a batch is read: they are the lengths its
// digest was taken over, even where the stored ones were changed since. A
// row whose index is outside the grid (only an edit makes one) is left
// out, and its run then fails its digest.
func resultsToBatches(ctx context.Context, tx *sql.Tx) error {
	type run struct {
		id   int64
		grid engine.Grid
	}
	var runs []run
	rows, err := tx.QueryContext(ctx, `SELECT r.id, s.hma_start, s.hma_stop, s.hma_step, s.hma3_start, s.hma3_stop, s.hma3_step
		FROM runs r JOIN studies s ON s.id = r.study_id ORDER BY r.id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var r run
		g := &r.grid
		if err := rows.Scan(&r.id, &g.HMA.Start, &g.HMA.Stop, &g.HMA.Step, &g.HMA3.Start, &g.HMA3.Stop, &g.HMA3.Step); err != nil {
			rows.Close()
			return err
		}
		runs = append(runs, r)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	insert, err := tx.PrepareContext(ctx, insertBatch)
	if err != nil {
		return err
	}
	defer insert.Close()
	// The columns of results by their SPEC names: a count scanned as an
	// integer (exact past 2^53), a float as a nullable float.
	query := `SELECT idx`
	v1 := resultColumns[:v1Columns] // the results table's; Part 2's are NaN
	for _, c := range v1 {
		query += ", " + c.name
	}
	query += ` FROM results WHERE run_id = ? ORDER BY idx`
	batch := make([]engine.ComboResult, 0, maxBlobRows)
	var blob []byte
	flush := func(runID int64) error {
		if len(batch) == 0 {
			return nil
		}
		blob = appendBatch(blob[:0], batch)
		_, err := insert.ExecContext(ctx, runID, batch[0].Index, batch[len(batch)-1].Index, len(batch), blob)
		batch = batch[:0]
		return err
	}
	floats := make([]sql.NullFloat64, len(v1))
	counts := make([]int64, len(v1))
	dest := make([]any, 1+len(v1))
	var idx int64
	dest[0] = &idx
	for i, c := range v1 {
		if c.float != nil {
			dest[1+i] = &floats[i]
		} else {
			dest[1+i] = &counts[i]
		}
	}
	for _, r := range runs {
		n := int64(r.grid.Len())
		rows, err := tx.QueryContext(ctx, query, r.id)
		if err != nil {
			return err
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
			if idx < 0 || idx >= n {
				continue
			}
			row := engine.ComboResult{Index: int(idx), Combo: r.grid.At(int(idx))}
			for _, c := range resultColumns[v1Columns:] { // not computed then
				*c.float(&row.Metrics) = math.NaN()
			}
			for i, c := range v1 {
				if c.float != nil {
					*c.float(&row.Metrics) = fromNull(floats[i])
				} else {
					*c.count(&row.Metrics) = int(counts[i])
				}
			}
			if batch = append(batch, row); len(batch) == maxBlobRows {
				if err := flush(r.id); err != nil {
					rows.Close()
					return err
				}
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := flush(r.id); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE results`)
	return err
}
