package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

// rawDB opens path without migrating it.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func testStudy(t *testing.T, n int, precs ...engine.Precision) *engine.Study {
	t.Helper()
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds.Bars = ds.Bars.Slice(0, n)
	ds.Info.Bars, ds.Info.Last, ds.Info.Name = n, ds.Bars.Last(), fmt.Sprintf("embedded:btcusdt-1m[:%d]", n)
	st := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 36, Step: 12}},
		Precisions: precs, Backend: reference.New(),
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: engine.BarsPerYear(ds.Info.MedianSpacing)}}
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	return st
}

func saveStudy(t *testing.T, s *Store, st *engine.Study) (*engine.Report, int64) {
	t.Helper()
	ctx := context.Background()
	w, err := begin(ctx, s, st, testOrigin{Data: "embedded:btcusdt-1m", Head: st.Dataset.Info.Bars}, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{Sink: w.Save})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(rep, nil); err != nil {
		t.Fatal(err)
	}
	return rep, w.ID()
}

// TestMigrateFromEveryVersion creates a database at each schema version,
// writes a session with what that version has (from v1 on), then opens it
// with the current code: the schema is brought up to date, the session
// reads back unchanged, and a new session using every table saves and
// reads back.
func TestMigrateFromEveryVersion(t *testing.T) {
	ctx := context.Background()
	for v := 0; v <= SchemaVersion; v++ {
		t.Run(fmt.Sprintf("from_v%d", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions.db")
			db := rawDB(t, path)
			if err := migrate(ctx, db, v); err != nil {
				t.Fatal(err)
			}
			if got, _ := userVersion(ctx, db); got != v {
				t.Fatalf("user_version %d after migrating to %d", got, v)
			}
			var old *engine.Report
			var oldID int64
			if v >= 1 {
				// An fp64-only session touches only the v1 tables.
				old, oldID = saveAsOld(t, db, testStudy(t, 3000, engine.FP64))
			}
			db.Close()

			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, _ := userVersion(ctx, s.db); got != SchemaVersion {
				t.Fatalf("user_version %d after Open, want %d", got, SchemaVersion)
			}
			if old != nil {
				got, err := s.Open(ctx, oldID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Runs[0].Results, old.Runs[0].Results) {
					t.Error("the results saved before the migration changed")
				}
				// Saved by the code of its version: a digest from v3 on;
				// before, none, and it reads unverified (as above).
				var d []byte
				if err := s.db.QueryRow(`SELECT digest FROM runs WHERE study_id = ?`, oldID).Scan(&d); err != nil {
					t.Fatal(err)
				}
				if (d != nil) != (v >= digestSchema) {
					t.Errorf("a run saved at v%d has digest %x", v, d)
				}
			}
			want, id := saveStudy(t, s, testStudy(t, 3000, engine.FP64, engine.FP32))
			var digests int
			if err := s.db.QueryRow(`SELECT count(digest) FROM runs WHERE study_id = ?`, id).Scan(&digests); err != nil || digests != 2 {
				t.Errorf("a new session's runs: %d digests (%v), want 2", digests, err)
			}
			got, err := s.Open(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Parity == nil || got.Parity.CombosCompared != want.Parity.CombosCompared || got.Parity.FlipCount != want.Parity.FlipCount {
				t.Errorf("parity after migration: got %+v", got.Parity)
			}
		})
	}
}

// saveAsOld saves st into db, a database at an older schema version, as
// that version's code would have: the current code saves it into a
// scratch database, and the rows are copied into db less the columns
// db's tables do not have yet.
func saveAsOld(t *testing.T, db *sql.DB, st *engine.Study) (*engine.Report, int64) {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "scratch.db")
	s, err := Open(scratch)
	if err != nil {
		t.Fatal(err)
	}
	rep, id := saveStudy(t, s, st)
	s.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS scratch", scratch); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"datasets", "studies", "runs", "results", "parities", "parity_combos", "flips", "indicator_errors"} {
		rows, err := conn.QueryContext(ctx, "SELECT name FROM pragma_table_info(?, 'main') WHERE name IN (SELECT name FROM pragma_table_info(?, 'scratch'))", table, table)
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, c)
		}
		rows.Close()
		if len(cols) == 0 {
			continue // a table of a later version
		}
		list := strings.Join(cols, ", ")
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("INSERT INTO main.%s (%s) SELECT %s FROM scratch.%s", table, list, list, table)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(ctx, "DETACH DATABASE scratch"); err != nil {
		t.Fatal(err)
	}
	return rep, id
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := rawDB(t, path)
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := Open(path)
	var de *DBError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "newer than this sweepbench") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open: %v, want a *DBError naming the path and the newer schema", err)
	}
}

// TestResultColumnsAreMetricNames: the results table has a column for
// every SPEC metric, by its SPEC name (the SQL is built from MetricNames).
func TestResultColumnsAreMetricNames(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.db.Query(`SELECT name FROM pragma_table_info('results') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		rows.Scan(&c)
		cols = append(cols, c)
	}
	want := append([]string{"run_id", "idx", "hma", "hma3"}, engine.MetricNames...)
	if !reflect.DeepEqual(cols, want) {
		t.Errorf("results columns %v, want %v", cols, want)
	}
}

// TestPragmas: every connection is in WAL mode with foreign keys on and
// the busy timeout set.
func TestPragmas(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// Hold several connections at once so that more than one is checked.
	var conns []*sql.Conn
	for i := 0; i < 3; i++ {
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var mode string
		var fk, busy int
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
		c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy)
		if mode != "wal" || fk != 1 || busy != int(BusyTimeout.Milliseconds()) {
			t.Errorf("connection %d: journal_mode %s, foreign_keys %d, busy_timeout %d", i, mode, fk, busy)
		}
		c.Close()
	}
}

// TestInterruptedDetection: a study left running reads as interrupted
// when its process is gone from this host (or its pid now belongs to
// another process), and stays running when it is alive or on another host.
func TestInterruptedDetection(t *testing.T) {
	self := currentProcess()
	gone := deadPID(t)
	cases := []struct {
		name string
		proc process
		want engine.Status
	}{
		{"this process", self, StatusRunning},
		{"dead pid", process{self.Host, gone, ""}, StatusInterrupted},
		{"reused pid", process{self.Host, self.PID, "other-boot/1"}, StatusInterrupted},
		{"other host", process{"elsewhere.example", gone, ""}, StatusRunning},
	}
	if self.Start == "" {
		cases = append(cases[:2], cases[3:]...) // no /proc: pid reuse cannot be told
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions.db")
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			st := testStudy(t, 2000, engine.FP64)
			w, err := begin(context.Background(), s, st, testOrigin{}, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Save(engine.FP64, []engine.ComboResult{{Index: 0, Combo: st.Grid.At(0)}}); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.Exec(`UPDATE studies SET host = ?, pid = ?, pid_start = ?`, c.proc.Host, c.proc.PID, c.proc.Start); err != nil {
				t.Fatal(err)
			}
			s.Close()

			s, err = Open(path) // the next start
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var stored, run string
			s.db.QueryRow(`SELECT s.status, r.status FROM studies s JOIN runs r ON r.study_id = s.id`).Scan(&stored, &run)
			ss, err := s.Get(context.Background(), w.ID())
			if err != nil {
				t.Fatal(err)
			}
			if ss.Status != c.want || stored != string(c.want) || run != string(c.want) || ss.Runs[0].Status != c.want {
				t.Errorf("status %s (stored %s, run %s), want %s", ss.Status, stored, run, c.want)
			}
		})
	}
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("no /bin/true to make a dead pid:", err)
	}
	pid := p.Pid
	p.Wait()
	return pid
}

// TestZombieIsDead: a killed process its parent has not reaped yet (a
// zombie answers signal 0) is not a live writer.
func TestZombieIsDead(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("no /bin/true:", err)
	}
	defer p.Wait()
	for i := 0; ; i++ { // wait for it to exit, without reaping it
		if state, _ := procStat(p.Pid); state == 'Z' {
			break
		}
		if i == 1000 {
			t.Fatal("the child never became a zombie")
		}
		time.Sleep(time.Millisecond)
	}
	s := &Store{self: currentProcess()}
	if got := s.liveness(process{Host: s.self.Host, PID: p.Pid}); got != dead {
		t.Errorf("liveness of a zombie: %v, want dead", got)
	}
}
