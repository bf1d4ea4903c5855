package sessions

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
	return studyOn(t, n, engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 36, Step: 12}}, precs...)
}

// studyOn is a reference-backend study of grid g on the first n bars of
// the embedded BTC/USDT minutes.
func studyOn(t testing.TB, n int, g engine.Grid, precs ...engine.Precision) *engine.Study {
	t.Helper()
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds.Bars = ds.Bars.Slice(0, n)
	ds.Info.Bars, ds.Info.Last, ds.Info.Name = n, ds.Bars.Last(), fmt.Sprintf("embedded:btcusdt-1m[:%d]", n)
	st := &engine.Study{Dataset: ds, Grid: g,
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
				if !sameResults(got.Runs[0].Results, old.Runs[0].Results) {
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
				// Record digests from v12 on; before, its parts read
				// unverified and say so.
				ss, err := s.Get(ctx, oldID)
				if err != nil {
					t.Fatal(err)
				}
				// Saved before strategy families: a hull study.
				if ss.Grid.Strategy != nil || ss.Grid.Family() != engine.FamilyHull || ss.Spec.Strategy != "" || ss.Spec.Params != nil || ss.Grid != old.Grid {
					t.Errorf("a session saved at v%d reads as %s %q (spec strategy %q), want hull %q", v, ss.Grid.Family(), ss.Grid.Text(), ss.Spec.Strategy, old.Grid.Text())
				}
				var want []string
				if v < digestSchema {
					want = append(want, "results")
				}
				if v < recordSchema {
					want = append(want, recordPartNames()...)
				}
				if fmt.Sprint(ss.Unverified) != fmt.Sprint(want) {
					t.Errorf("a session saved at v%d: unverified %q, want %q", v, ss.Unverified, want)
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
			if ss, err := s.Get(ctx, id); err != nil || len(ss.Unverified) != 0 {
				t.Errorf("a new session: unverified %q (%v), want none", ss.Unverified, err)
			}
			if got.Parity == nil || got.Parity.CombosCompared != want.Parity.CombosCompared || got.Parity.FlipCount != want.Parity.FlipCount {
				t.Errorf("parity after migration: got %+v", got.Parity)
			}
		})
	}
}

// TestMigrateRecordsEpochs: the migration to v13 records where digesting
// began from the file as it is: a session saved at v2 (no digests) and
// one at v11 (run digests only) read unverified after it, each naming
// what; sessions saved at v12 stay digested, even one whose digest
// version or run digest was already removed in the file before the
// migration (the finding's database: user_version 12, an edited session
// shown as genuine); a session saved after the migration is digested.
func TestMigrateRecordsEpochs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := rawDB(t, path)
	if err := migrate(ctx, db, 2); err != nil {
		t.Fatal(err)
	}
	_, id := saveAsOld(t, db, testStudy(t, 3000, engine.FP64))
	ids := []int64{id}
	// Then one at v11 and four at v12, each by the writer of its version:
	// one left alone, one with its digest version lowered, one with its
	// run's digest removed.
	for _, v := range []int{11, 12, 12, 12, 12} {
		if err := migrate(ctx, db, v); err != nil {
			t.Fatal(err)
		}
		_, id := saveStudy(t, &Store{db: db, path: path, self: currentProcess(), schema: v}, testStudy(t, 3000, engine.FP64))
		ids = append(ids, id)
	}
	if _, err := db.Exec(`UPDATE studies SET digest_version = 0, fee = 0.1 WHERE id = ?`, ids[4]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runs SET digest = NULL WHERE study_id = ?`, ids[5]); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, err := readEpochs(ctx, s.db)
	if err != nil || e != (epochs{record: ids[2], runs: ids[1]}) {
		t.Errorf("epochs %+v (%v), want record digests from session %d, run digests from %d", e, err, ids[2], ids[1])
	}
	for i, want := range []string{
		"session 1 was saved before sweepbench digested its results: its results, settings, dataset, note, robustness summary, parity report are read unverified",
		"session 2 was saved before sweepbench digested more than its results: its settings, dataset, note, robustness summary, parity report are read unverified",
		"", "", "", "",
	} {
		ss, err := s.Get(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := ss.UnverifiedNote(); got != want {
			t.Errorf("session %d: note %q, want %q", ids[i], got, want)
		}
	}
	for _, i := range []int{0, 1, 2, 3} {
		if _, err := s.Open(ctx, ids[i]); err != nil {
			t.Errorf("session %d: %v", ids[i], err)
		}
	}
	var re *RecordError
	if _, err := s.Open(ctx, ids[4]); !errors.As(err, &re) || !re.Lowered {
		t.Errorf("session %d, its digest version lowered before the migration: %v, want it refused", ids[4], err)
	}
	var de *DigestError
	if _, err := s.Open(ctx, ids[5]); !errors.As(err, &de) || !de.Missing {
		t.Errorf("session %d, its run's digest removed before the migration: %v, want it refused", ids[5], err)
	}
	_, id = saveStudy(t, s, testStudy(t, 3000, engine.FP64))
	if _, err := s.db.Exec(`UPDATE studies SET digest_version = 0, settings_digest = NULL, dataset_digest = NULL, note_digest = NULL,
		robustness_digest = NULL, parity_digest = NULL WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, id); !errors.As(err, &re) || !re.Lowered {
		t.Errorf("a session saved after the migration, its digests removed: %v, want it refused", err)
	}
}

// saveAsOld saves st into db, a database at an older schema version, as
// that version's code would have: the current code saves it into a
// scratch database, and the rows are copied into db less the columns
// db's tables do not have yet; before v8, the results go in as a row of
// results per combo (oldResults).
func saveAsOld(t *testing.T, db *sql.DB, st *engine.Study) (*engine.Report, int64) {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "scratch.db")
	s, err := Open(scratch)
	if err != nil {
		t.Fatal(err)
	}
	rep, id := saveStudy(t, s, st)
	ctx := context.Background()
	// The record digests that version's code took: version 1 at schema
	// 12 and 13, 2 at 14 (the parts of the columns it had).
	var target int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&target); err != nil {
		t.Fatal(err)
	}
	if target >= recordSchema && target < executionSchema {
		version := 2
		if target < strategySchema {
			version = 1
		}
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE studies SET digest_version = ? WHERE id = ?`, version, id); err != nil {
			t.Fatal(err)
		}
		if err := s.stampRecord(ctx, tx, id); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS scratch", scratch); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"datasets", "studies", "runs", "results", "result_batches", "parities", "parity_combos", "parity_batches", "flips", "indicator_errors"} {
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
	var old int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE name = 'results'").Scan(&old); err != nil {
		t.Fatal(err)
	}
	if old == 1 {
		// The code of v1 to v7 computed Part 1's metrics only: the rows
		// read back with Part 2's NaN, and the digest (from v3) was
		// taken over the 14.
		for _, run := range rep.Runs {
			for i := range run.Results {
				for _, name := range engine.MetricNames[len(v7Metrics):] {
					run.Results[i].SetValue(name, math.NaN())
				}
			}
			var rid int64
			if err := conn.QueryRowContext(ctx, `SELECT id FROM runs WHERE study_id = ? AND precision = ?`, id, run.Precision.String()).Scan(&rid); err != nil {
				t.Fatal(err)
			}
			oldResults(t, conn, rid, run.Results)
			var d []byte
			if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'digest'`).Scan(&old); err != nil {
				t.Fatal(err)
			}
			if old == 1 {
				if err := conn.QueryRowContext(ctx, `SELECT digest FROM runs WHERE id = ?`, rid).Scan(&d); err != nil {
					t.Fatal(err)
				}
			}
			if d != nil {
				if _, err := conn.ExecContext(ctx, `UPDATE runs SET digest = ? WHERE id = ?`, v7Digest(connRows(t, conn, rid)), rid); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return rep, id
}

// sameResults is a == b row by row, a NaN equal to a NaN.
func sameResults(a, b []engine.ComboResult) bool {
	if len(a) != len(b) {
		return false
	}
	var va, vb [engine.NumMetrics]float64
	for i := range a {
		if a[i].Index != b[i].Index || a[i].Combo != b[i].Combo {
			return false
		}
		a[i].Metrics.Values(&va)
		b[i].Metrics.Values(&vb)
		for j := range va {
			if va[j] != vb[j] && !(math.IsNaN(va[j]) && math.IsNaN(vb[j])) {
				return false
			}
		}
	}
	return true
}

// v7Metrics are the metric columns of results (schema v1 to v7): Part
// 1's 14, engine.MetricNames before SPEC Part 2.
var v7Metrics = engine.MetricNames[:14]

// oldResults inserts rs into the results table of a database before v8,
// as the writer of v1 to v7 did: a row per combo, a metric by its SPEC
// name, NaN as NULL, a count as an integer.
func oldResults(t *testing.T, conn *sql.Conn, rid int64, rs []engine.ComboResult) {
	t.Helper()
	q := `INSERT INTO results (run_id, idx, hma, hma3, ` + strings.Join(v7Metrics, ", ") + `) VALUES (?, ?, ?, ?` +
		strings.Repeat(", ?", len(v7Metrics)) + `)`
	for _, r := range rs {
		args := []any{rid, r.Index, r.HMA, r.HMA3}
		for _, name := range v7Metrics {
			v, _ := r.Value(name)
			switch name {
			case "total_trades", "long_bars", "short_bars", "flat_bars":
				args = append(args, int64(v))
			default:
				args = append(args, nullable(v))
			}
		}
		if _, err := conn.ExecContext(context.Background(), q, args...); err != nil {
			t.Fatal(err)
		}
	}
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

// TestResultColumnsAreMetricNames: a batch's columns (resultColumns) are
// the SPEC metrics by their SPEC names, in engine.MetricNames order, each
// reaching the field Metrics.Value and SetValue reach by that name; and
// result_batches has the columns the writer and the reader use.
func TestResultColumnsAreMetricNames(t *testing.T) {
	if len(resultColumns) != len(engine.MetricNames) {
		t.Fatalf("%d columns, %d metrics", len(resultColumns), len(engine.MetricNames))
	}
	for i, c := range &resultColumns {
		if c.name != engine.MetricNames[i] || (c.float == nil) == (c.count == nil) {
			t.Errorf("column %d: %q (float %v, count %v), want metric %q", i, c.name, c.float != nil, c.count != nil, engine.MetricNames[i])
			continue
		}
		var m engine.Metrics
		m.SetValue(c.name, 12345)
		got := 0.0
		if c.float != nil {
			got = *c.float(&m)
		} else {
			got = float64(*c.count(&m))
		}
		if got != 12345 {
			t.Errorf("column %q reads %v where SetValue wrote 12345", c.name, got)
		}
	}
	s, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.db.Query(`SELECT name FROM pragma_table_info('result_batches') ORDER BY cid`)
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
	if want := []string{"run_id", "first_idx", "last_idx", "rows", "data"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("result_batches columns %v, want %v", cols, want)
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

// TestMigrateResultsToBatches opens a v7 database, whose results table
// holds a row per combo, with this version: a real study's rows (5,000
// fp64 combos, so more than one batch) with some set by hand to the values
// hardest to keep (NaN, stored as NULL; -0; ±Inf; the extremes of a
// float64; counts past 2^53) and one deleted (an interrupted run). After
// the migration results is gone, the rows are in result_batches and read
// back bit for bit, and the run's digest, recomputed here from the v7 rows
// by its definition, verifies. A row whose stored lengths were changed
// after it was saved (the fp32 run's) reads with its grid's, which its
// digest was taken over: lengths are not stored any more.
func TestMigrateResultsToBatches(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := rawDB(t, path)
	if err := migrate(ctx, db, 7); err != nil {
		t.Fatal(err)
	}
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 109, Step: 1}, HMA3: engine.Range{Start: 12, Stop: 108, Step: 2}} // 100 x 49
	_, id := saveAsOld(t, db, studyOn(t, 2000, g, engine.FP64, engine.FP32))
	var rid, rid32 int64
	if err := db.QueryRow(`SELECT id FROM runs WHERE study_id = ? AND precision = 'fp64'`, id).Scan(&rid); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT id FROM runs WHERE study_id = ? AND precision = 'fp32'`, id).Scan(&rid32); err != nil {
		t.Fatal(err)
	}
	set := func(idx int, col string, v any) {
		t.Helper()
		if _, err := db.Exec(`UPDATE results SET `+col+` = ? WHERE run_id = ? AND idx = ?`, v, rid, idx); err != nil {
			t.Fatal(err)
		}
	}
	negZero := math.Copysign(0, -1)
	for col, v := range map[string]any{"total_return": nil, "cagr": negZero, "sharpe": math.Inf(1), "sortino": math.Inf(-1),
		"max_drawdown": math.MaxFloat64, "calmar": math.SmallestNonzeroFloat64, "win_rate": -math.MaxFloat64, "var_95": nil,
		"cvar_95": negZero, "omega": math.Inf(1), "total_trades": int64(1)<<62 + 1, "long_bars": int64(math.MaxInt64),
		"short_bars": int64(0), "flat_bars": int64(1)<<53 + 1} {
		set(0, col, v)
		set(4096, col, v) // the first row of the second batch
	}
	set(4095, "sharpe", nil)
	set(4095, "total_trades", int64(9007199254740993)) // 2^53 + 1: not a float64
	if _, err := db.Exec(`DELETE FROM results WHERE run_id = ? AND idx = 77`, rid); err != nil {
		t.Fatal(err)
	}
	want := v7Rows(t, db, rid)
	if len(want) != g.Len()-1 {
		t.Fatalf("%d rows in the v7 run, want %d", len(want), g.Len()-1)
	}
	if _, err := db.Exec(`UPDATE runs SET digest = ?, done = ? WHERE id = ?`, v7Digest(want), len(want), rid); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE results SET hma3 = hma3 + 2 WHERE run_id = ? AND idx = 5`, rid32); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tables, batches, rows int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'results'`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("results after the migration: %d tables (%v), want none", tables, err)
	}
	if err := s.db.QueryRow(`SELECT count(*), sum(rows) FROM result_batches WHERE run_id = ?`, rid).Scan(&batches, &rows); err != nil {
		t.Fatal(err)
	}
	if batches != 2 || rows != len(want) {
		t.Errorf("the fp64 run: %d batches of %d rows, want 2 of %d", batches, rows, len(want))
	}
	run, ss, err := s.OpenRun(ctx, id, engine.FP64)
	if err != nil {
		t.Fatalf("the migrated fp64 run: %v", err)
	}
	if ss.Run(engine.FP64).Done != len(want) || len(run.Results) != len(want) {
		t.Fatalf("%d rows read (%d done), want %d", len(run.Results), ss.Run(engine.FP64).Done, len(want))
	}
	for i, w := range want {
		got := &run.Results[i]
		if got.Index != w.idx || got.HMA != w.hma || got.HMA3 != w.hma3 {
			t.Fatalf("row %d: combo %d (%d, %d), want %d (%d, %d)", i, got.Index, got.HMA, got.HMA3, w.idx, w.hma, w.hma3)
		}
		for j, c := range &resultColumns {
			if j >= len(v7Metrics) { // Part 2's: not computed before it
				if v := *c.float(&got.Metrics); !math.IsNaN(v) {
					t.Errorf("combo %d %s: %v, want NaN", w.idx, c.name, v)
				}
				continue
			}
			if c.count != nil {
				if v := int64(*c.count(&got.Metrics)); v != w.counts[j] {
					t.Errorf("combo %d %s: %d, want %d", w.idx, c.name, v, w.counts[j])
				}
				continue
			}
			v := *c.float(&got.Metrics)
			if wv := w.floats[j]; !wv.Valid && !math.IsNaN(v) || wv.Valid && math.Float64bits(v) != math.Float64bits(wv.Float64) {
				t.Errorf("combo %d %s: %v (%#x), want %v", w.idx, c.name, v, math.Float64bits(v), wv)
			}
		}
	}
	run32, _, err := s.OpenRun(ctx, id, engine.FP32)
	if err != nil {
		t.Fatalf("the fp32 run with a changed hma3: %v", err)
	}
	if c := run32.Results[5].Combo; c != g.At(5) {
		t.Errorf("the fp32 run's combo 5 reads %+v, want the grid's %+v", c, g.At(5))
	}
}

// v7Row is a row of results as SQL holds it.
type v7Row struct {
	idx, hma, hma3 int
	floats         []sql.NullFloat64 // by resultColumns; NULL is NaN
	counts         []int64
}

func v7Rows(t *testing.T, db *sql.DB, rid int64) []v7Row {
	t.Helper()
	return scanV7Rows(t, func(q string, args ...any) (*sql.Rows, error) { return db.Query(q, args...) }, rid)
}

// connRows is v7Rows on a connection.
func connRows(t *testing.T, conn *sql.Conn, rid int64) []v7Row {
	t.Helper()
	return scanV7Rows(t, func(q string, args ...any) (*sql.Rows, error) {
		return conn.QueryContext(context.Background(), q, args...)
	}, rid)
}

func scanV7Rows(t *testing.T, query func(string, ...any) (*sql.Rows, error), rid int64) []v7Row {
	t.Helper()
	rows, err := query(`SELECT idx, hma, hma3, `+strings.Join(v7Metrics, ", ")+` FROM results WHERE run_id = ? ORDER BY idx`, rid)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []v7Row
	for rows.Next() {
		r := v7Row{floats: make([]sql.NullFloat64, len(v7Metrics)), counts: make([]int64, len(v7Metrics))}
		dest := []any{&r.idx, &r.hma, &r.hma3}
		for j, name := range v7Metrics {
			switch name {
			case "total_trades", "long_bars", "short_bars", "flat_bars":
				dest = append(dest, &r.counts[j])
			default:
				dest = append(dest, &r.floats[j])
			}
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// v7Digest is the digest of rows by its definition (digest.go), written
// out here: the SHA-256 of idx, hma, hma3 as int64 and each metric as
// float64 bits (a count converted, NULL as 0x7ff8000000000000),
// little-endian, summed as four uint64 words.
func v7Digest(rows []v7Row) []byte {
	var sum [4]uint64
	for _, r := range rows {
		var enc []byte
		for _, v := range []int{r.idx, r.hma, r.hma3} {
			enc = binary.LittleEndian.AppendUint64(enc, uint64(v))
		}
		for j, name := range v7Metrics {
			bits := uint64(0x7ff8000000000000)
			switch name {
			case "total_trades", "long_bars", "short_bars", "flat_bars":
				bits = math.Float64bits(float64(r.counts[j]))
			default:
				if r.floats[j].Valid {
					bits = math.Float64bits(r.floats[j].Float64)
				}
			}
			enc = binary.LittleEndian.AppendUint64(enc, bits)
		}
		h := sha256.Sum256(enc)
		for w := range sum {
			sum[w] += binary.LittleEndian.Uint64(h[8*w:])
		}
	}
	var out []byte
	for _, w := range sum {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	return out
}
