// Package sessions is the sweepbench sessions store: every `sweepbench run`
// (one engine.Study, up to two runs, fp64 and fp32, and their parity) saved
// in one SQLite file, written in batches beside the sweep (writer.go: a
// short queue and a goroutine that commits) so that a dropped SSH
// connection or a kill -9 loses only the few batches not yet committed, and
// read back as an engine.Report for `sessions show`, `export`, `diff` and the
// TUI's sessions browser. A run's results are stored a batch at a time,
// each batch one blob of its rows (resultbatch.go), and carry a digest
// (digest.go), checked whenever they are read. A study too large to hold
// is read as its summary (OpenSummary: each run's engine.Summary, built
// batch by batch) and the rest a page at a time (OpenRunReader: combos by
// index, a window of the grid, the best N under a filter; page.go).
//
// The file is opened in WAL mode (readers never block the writer), with a
// busy timeout and foreign keys on; its schema is versioned with PRAGMA
// user_version and migrated forward on Open (schema.go).
package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"modernc.org/sqlite"
)

// BusyTimeout is how long a statement waits for another process's write
// transaction before it fails with "database is locked".
const BusyTimeout = 10 * time.Second

// Store is an open sessions database. It is safe for concurrent use; any
// number of processes may read one file while one writes.
type Store struct {
	db       *sql.DB
	path     string
	self     process
	readOnly bool
	// schema is the file's schema version once opened; a writer on an
	// older one (a test's raw database) saves what that version holds.
	schema int
	// bg is the writers' checkpointers (checkpoint.go), which Close
	// closes and waits for; ckpts those running, under ckptMu.
	bg     sync.WaitGroup
	ckptMu sync.Mutex
	ckpts  map[*checkpointer]bool
}

// DefaultPath is where the store lives when --db is not given:
// $XDG_DATA_HOME/sweepbench/sessions.db when XDG_DATA_HOME is set (an
// absolute path), else the OS data directory: ~/.local/share on Linux and
// the BSDs, ~/Library/Application Support on macOS, %LocalAppData% on Windows.
func DefaultPath() (string, error) {
	dir, err := dataDir()
	if err != nil {
		return "", fmt.Errorf("sessions: no default database path (%v): name a database file", err)
	}
	return filepath.Join(dir, "sweepbench", "sessions.db"), nil
}

func dataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return d, nil
	}
	if runtime.GOOS == "windows" {
		if d := os.Getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%LocalAppData% is not set")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return filepath.Join(home, "Library", "Application Support"), nil
	}
	return filepath.Join(home, ".local", "share"), nil
}

// Open opens the store at path, creating the file and its directory when
// missing, and migrates its schema to the current version. Runs left
// "running" by a process that no longer exists on this host are marked
// interrupted. Problems with the file itself (corrupted, read-only, a
// directory, a newer schema) come back as *DBError naming the path.
func Open(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &DBError{Path: path, Op: "open", Err: err}
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return nil, &DBError{Path: abs, Op: "open", Err: errors.New("is a directory"), Hint: "name a file, e.g. " + filepath.Join(abs, "sessions.db")}
	}
	// Private: a sessions database holds data paths and host names. A new
	// directory is 0700, a new file 0600 (SQLite gives its -wal and -shm
	// files the database file's mode); existing ones keep theirs.
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, &DBError{Path: abs, Op: "create its directory", Err: err, Hint: "use a file in a writable directory"}
	}
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, &DBError{Path: abs, Op: "open", Err: err}
	}
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	s := &Store{db: db, path: abs, self: currentProcess()}
	ctx := context.Background()
	if err := migrate(ctx, db, len(migrations)); err != nil {
		db.Close()
		return nil, s.wrap("open", err)
	}
	s.schema = len(migrations)
	s.reap(ctx)
	return s, nil
}

// OpenReadOnly opens the store at path for reading only, as it is: for a
// file that cannot be written (another user's, a read-only mount). Nothing
// is migrated or marked interrupted (List and Get still report a study
// whose writer is gone as interrupted), and every write fails. A file in
// WAL mode whose directory cannot be written either is read as immutable:
// a concurrent writer's latest batches may not show.
func OpenReadOnly(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &DBError{Path: path, Op: "open read-only", Err: err}
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, &DBError{Path: abs, Op: "open read-only", Err: err}
	}
	var last error
	for _, immutable := range []bool{false, true} {
		db, err := sql.Open("sqlite", roDSN(abs, immutable))
		if err != nil {
			return nil, &DBError{Path: abs, Op: "open read-only", Err: err}
		}
		s := &Store{db: db, path: abs, self: currentProcess(), readOnly: true, schema: len(migrations)}
		v, err := userVersion(context.Background(), db)
		switch {
		case err != nil:
			db.Close()
			last = s.wrap("open read-only", err)
			continue
		case v > len(migrations):
			db.Close()
			return nil, s.wrap("open read-only", &versionError{v, len(migrations)})
		case v < len(migrations):
			db.Close()
			return nil, &DBError{Path: abs, Op: "open read-only", Err: fmt.Errorf("schema version %d is older than this sweepbench's (%d)", v, len(migrations)),
				Hint: "open it once where it can be written, to migrate it"}
		}
		return s, nil
	}
	return nil, last
}

func roDSN(path string, immutable bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "query_only(1)")
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	if runtime.GOOS == "windows" {
		u.Path = "/" + u.Path
	}
	return u.String()
}

// ReadOnly reports whether the store was opened with OpenReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }

// IsReadOnly reports whether err is a database that cannot be written
// (permissions, a read-only file system): OpenReadOnly may still read it.
func IsReadOnly(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqliteReadOnly, sqlitePerm, sqliteCantOpen:
			return true
		}
	}
	return errors.Is(err, os.ErrPermission)
}

// dsn is the driver's name for path: a file: URI (so that any character
// in the path is escaped) with the pragmas every connection needs. Write
// transactions begin IMMEDIATE so that two writers queue on the busy
// timeout instead of failing on a lock upgrade; read-only transactions
// begin deferred and never wait for the writer (WAL).
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	// NORMAL in WAL mode survives a crash of the process (kill -9); only a
	// power loss can drop the last commits.
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	if runtime.GOOS == "windows" {
		u.Path = "/" + u.Path // file:///C:/...
	}
	return u.String()
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database, once the checkpoints its writers asked for
// are done (Writer.Finish's, of the study's last commits, runs beside the
// front end's report until then).
func (s *Store) Close() error {
	s.ckptMu.Lock()
	for c := range s.ckpts {
		c.close() // a writer not finished (a test's crash) asks no more
	}
	s.ckptMu.Unlock()
	s.bg.Wait()
	return s.db.Close()
}

// DBError is a failure of the database file itself: corrupted, not a
// sessions database, read-only, locked, full, or of a newer schema. The
// CLI catches it to warn and carry on computing without saving.
type DBError struct {
	Path string // the database file
	Op   string // what was being done: "open", "save results", ...
	Err  error
	Hint string // what to do about it
}

func (e *DBError) Error() string {
	msg := fmt.Sprintf("sessions database %s: %s: %v", e.Path, e.Op, e.Err)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

func (e *DBError) Unwrap() error { return e.Err }

// SQLite primary result codes the hints speak of.
const (
	sqliteBusy     = 5
	sqliteLocked   = 6
	sqliteReadOnly = 8
	sqliteIOErr    = 10
	sqliteCorrupt  = 11
	sqliteFull     = 13
	sqliteCantOpen = 14
	sqlitePerm     = 3
	sqliteNotADB   = 26
)

// wrap turns an error of the database file into a *DBError with a hint;
// other errors (a missing session, a bad argument) pass through unchanged.
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var de *DBError
	if errors.As(err, &de) {
		return err
	}
	var se *sqlite.Error
	var ve *versionError
	switch {
	case errors.As(err, &ve):
		return &DBError{Path: s.path, Op: op, Err: err, Hint: "upgrade sweepbench, or use another file"}
	case errors.As(err, &se):
		e := &DBError{Path: s.path, Op: op, Err: err}
		switch se.Code() & 0xff {
		case sqliteNotADB, sqliteCorrupt:
			e.Hint = "the file is damaged or is not a sweepbench sessions database: move it aside (a new one is created) or use another file"
		case sqliteReadOnly, sqlitePerm, sqliteCantOpen:
			e.Hint = "the file or its directory is not writable: fix the permissions or use a writable file"
		case sqliteBusy, sqliteLocked:
			e.Hint = fmt.Sprintf("another process held a write lock for more than %s", BusyTimeout)
		case sqliteFull:
			e.Hint = "the disk is full"
		case sqliteIOErr:
			e.Hint = "an I/O error: check the disk, or use a file on another disk"
		}
		return e
	case errors.Is(err, os.ErrPermission):
		return &DBError{Path: s.path, Op: op, Err: err, Hint: "fix the permissions or use a writable file"}
	}
	return err
}

// Times are stored as fixed-width UTC text, so that they sort as text and
// read well in the sqlite3 shell.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) time.Time {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		t, _ = time.Parse(time.RFC3339Nano, s)
	}
	return t.UTC()
}

// nullTime is NULL for the zero time.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return fmtTime(t)
}

// ErrNotFound is returned (wrapped) for a session id that does not exist.
var ErrNotFound = errors.New("no such session")

func notFound(id int64) error {
	return fmt.Errorf("session %d: %w", id, ErrNotFound)
}
