package sessions

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[v] takes the schema from version v to v+1 (PRAGMA
// user_version); a new database runs them all. Never edit a released one:
// append a new migration instead, and extend TestMigrateFromEveryVersion.
//
// Conventions: times are fixed-width UTC text (timeLayout), durations
// INTEGER nanoseconds, floats with NULL standing for NaN (SQLite stores a
// NaN as NULL; ±Inf are stored as such). The metrics are stored bit for
// bit (results is STRICT with ANY columns); the other floats are REAL.
var migrations = []string{
	// v1: datasets, studies (one `sweepbench run`), their runs (one per
	// precision) and every combo's metrics.
	`
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
`,
	// v2: parity reports (SPEC "Parity") between two runs: a study's own
	// fp32 vs fp64, per combo, with the worst flips and indicator errors.
	`
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
`,
	// v3: each run's digest of its saved rows (digest.go), updated in the
	// transaction of every batch. NULL for a run saved before v3: it is
	// read unverified, as before.
	`
ALTER TABLE runs ADD COLUMN digest BLOB;
`,
	// v4: the LEAN security type a study's data was loaded as, when its
	// path does not say ('' = from the path); how a dataset was read (the
	// summary states it) and the calendar its bars follow (the derived
	// bars per year follows it). Defaults are what a v2 session knew.
	`
ALTER TABLE studies ADD COLUMN lean_asset TEXT NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN files INTEGER NOT NULL DEFAULT 1;       -- files read (a folder or glob: more)
ALTER TABLE datasets ADD COLUMN price_scale REAL NOT NULL DEFAULT 0;    -- prices were divided by it; 0 = not recorded
ALTER TABLE datasets ADD COLUMN times TEXT NOT NULL DEFAULT '';         -- unix, offset, local, mixed
ALTER TABLE datasets ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';     -- of the local times
ALTER TABLE datasets ADD COLUMN convention TEXT NOT NULL DEFAULT '';    -- e.g. 'LEAN equity/usa (from the path)'
ALTER TABLE datasets ADD COLUMN dropped_at TEXT NOT NULL DEFAULT '[]';  -- JSON array: the first dropped rows' places
ALTER TABLE datasets ADD COLUMN calendar TEXT NOT NULL DEFAULT '';      -- '24/7', 'sessions', '' = not known
ALTER TABLE datasets ADD COLUMN calendar_why TEXT NOT NULL DEFAULT '';
`,
	// v5: the window of bars a study selected (--from, --to, as given;
	// '' = no bound, what every earlier session swept).
	`
ALTER TABLE studies ADD COLUMN window_from TEXT NOT NULL DEFAULT '';
ALTER TABLE studies ADD COLUMN window_to TEXT NOT NULL DEFAULT '';
`,
	// v6: the study's robustness summary (engine/robust's Summary as JSON,
	// '' = none was computed).
	`
ALTER TABLE studies ADD COLUMN robustness TEXT NOT NULL DEFAULT '';
`,
	// v7: what "best" meant for the study's top lists and robustness
	// (--objective, '' = sharpe) and its constraints (0 = none).
	`
ALTER TABLE studies ADD COLUMN objective TEXT NOT NULL DEFAULT '';
ALTER TABLE studies ADD COLUMN min_trades INTEGER NOT NULL DEFAULT 0;
ALTER TABLE studies ADD COLUMN max_drawdown REAL NOT NULL DEFAULT 0;
`,
}

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
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return fmt.Errorf("schema migration %d -> %d: %w", v, v+1, err)
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
