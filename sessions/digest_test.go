package sessions_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// rawSQL opens the database file at path directly, as the sqlite3 shell
// would: to change it behind the store's back.
func rawSQL(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// runID is the id of the run of precision p of session id.
func runID(t *testing.T, db *sql.DB, id int64, p engine.Precision) int64 {
	t.Helper()
	var rid int64
	if err := db.QueryRow(`SELECT id FROM runs WHERE study_id = ? AND precision = ?`, id, p.String()).Scan(&rid); err != nil {
		t.Fatal(err)
	}
	return rid
}

// wantDigestError checks that err refuses run id:p by its digest, naming
// the session and the run.
func wantDigestError(t *testing.T, what string, err error, id int64, p engine.Precision) {
	t.Helper()
	var de *sessions.DigestError
	if !errors.As(err, &de) || de.ID != id || de.Precision != p {
		t.Errorf("%s: %v, want a *DigestError for run %d:%s", what, err, id, p)
		return
	}
	if want := fmt.Sprintf("session %d, run %d:%s", id, id, p); !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %q does not name %q", what, err, want)
	}
}

// independentDigest computes the digest of a run from its batches as the
// sqlite3 shell shows them (parseBlob), following the definition
// (digest.go) field by field: SHA-256 of idx, hma, hma3 (from the study's
// grid) as int64 and every metric as float64 bits (a count converted, any
// NaN as 0x7ff8000000000000), little-endian, Part 1's 14 metrics alone
// when the 10 of Part 2 are all NaN; summed as four uint64 words.
func independentDigest(t *testing.T, db *sql.DB, rid int64) []byte {
	t.Helper()
	g := runGrid(t, db, rid)
	var sum [4]uint64
	for _, b := range readBatches(t, db, rid) {
		for _, r := range parseBlob(t, b.data) {
			c := g.At(r.idx)
			var enc bytes.Buffer
			binary.Write(&enc, binary.LittleEndian, []int64{int64(r.idx), int64(c.HMA), int64(c.HMA3)})
			names := engine.MetricNames[:14]
			for _, bits := range r.vals[14:] {
				if !math.IsNaN(math.Float64frombits(bits)) {
					names = engine.MetricNames
				}
			}
			for j, name := range names {
				bits := r.vals[j]
				switch {
				case isCount(name):
					bits = math.Float64bits(float64(int64(bits)))
				case math.IsNaN(math.Float64frombits(bits)):
					bits = 0x7ff8000000000000
				}
				binary.Write(&enc, binary.LittleEndian, bits)
			}
			h := sha256.Sum256(enc.Bytes())
			for w := range sum {
				sum[w] += binary.LittleEndian.Uint64(h[8*w:])
			}
		}
	}
	out := make([]byte, 0, 32)
	for _, w := range sum {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	return out
}

func savedDigest(t *testing.T, db *sql.DB, rid int64) []byte {
	t.Helper()
	var d []byte
	if err := db.QueryRow(`SELECT digest FROM runs WHERE id = ?`, rid).Scan(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDigestIsTheRows: the digest saved with each run is the one the
// definition gives for its rows (computed independently from the rows as
// stored), and a session killed part way and resumed carries the digest
// of an uninterrupted one: the sum does not depend on the order or the
// process that committed the rows.
func TestDigestIsTheRows(t *testing.T) {
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 4000
	spec.HMA, spec.HMA3, spec.Backend = "10:100:10", "12:96:12", "reference"
	s := openStore(t, "")
	reg := pipelineRegistry()
	id := interruptedSession(t, s, reg, spec, 30)
	resumeAndCompare(t, s, reg, id, spec)
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, rec, err := sessions.RunStudy(context.Background(), s, st, engine.StudyOptions{}, sessions.RecordOptions{})
	if err != nil || rec.Err != nil {
		t.Fatal(err, rec.Err)
	}
	db := rawSQL(t, s.Path())
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		resumed, fresh := runID(t, db, id, p), runID(t, db, rec.ID, p)
		got := savedDigest(t, db, resumed)
		if want := independentDigest(t, db, resumed); !bytes.Equal(got, want) {
			t.Errorf("%s: saved digest %x, the rows' %x", p, got, want)
		}
		if want := savedDigest(t, db, fresh); !bytes.Equal(got, want) {
			t.Errorf("%s: resumed session's digest %x, uninterrupted one's %x", p, got, want)
		}
	}
}

// TestDigestRefusesChangedRows changes the saved rows of an interrupted
// session through SQL, one way per case, and checks that show and export
// (Open), OpenRun, diff and resume all refuse the run with a *DigestError
// naming the session and the run, before resume claims anything. A run
// without a digest (saved before schema v3) reads as before, unverified.
func TestDigestRefusesChangedRows(t *testing.T) {
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 3000
	spec.HMA, spec.HMA3, spec.Backend = "10:100:10", "12:96:12", "reference"
	reg := pipelineRegistry()
	// first is the run's first batch, by its first combo (the lowest
	// saved); g is the grid.
	sharpe, trades, omega := metricCol("sharpe"), metricCol("total_trades"), metricCol("omega")
	cases := []struct {
		name   string
		change func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid)
	}{
		{"the last bit of a metric", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) {
			rewriteBatch(t, db, rid, first, func(rs []storedRow) []storedRow { rs[0].vals[sharpe] ^= 1; return rs })
		}},
		{"a trade count", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) {
			rewriteBatch(t, db, rid, first, func(rs []storedRow) []storedRow { rs[0].vals[trades]++; return rs })
		}},
		{"a metric made NaN", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) {
			rewriteBatch(t, db, rid, first, func(rs []storedRow) []storedRow { rs[0].vals[omega] = 0x7ff8000000000000; return rs })
		}},
		{"a combo's index", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) {
			// The last combo of the grid: not saved by the interrupted run.
			rewriteBatch(t, db, rid, first, func(rs []storedRow) []storedRow { rs[len(rs)-1].idx = g.Len() - 1; return rs })
		}},
		{"a row deleted", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) {
			rewriteBatch(t, db, rid, first, func(rs []storedRow) []storedRow { return rs[1:] })
		}},
		{"a row added", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) {
			rewriteBatch(t, db, rid, first, func(rs []storedRow) []storedRow {
				return append(rs, storedRow{idx: g.Len() - 1, vals: rs[0].vals})
			})
		}},
		{"a batch deleted", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) {
			mustExec(t, db, `DELETE FROM result_batches WHERE run_id = ? AND first_idx = ?`, rid, first)
		}},
		{"the digest itself", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) {
			mustExec(t, db, `UPDATE runs SET digest = zeroblob(32) WHERE id = ?`, rid)
		}},
	}
	bg := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, "")
			id := interruptedSession(t, s, reg, spec, 30)
			db := rawSQL(t, s.Path())
			rid := runID(t, db, id, engine.FP64)
			c.change(t, db, rid, readBatches(t, db, rid)[0].first, runGrid(t, db, rid))

			_, err := s.Open(bg, id)
			wantDigestError(t, "show/export", err, id, engine.FP64)
			_, _, err = s.OpenRun(bg, id, engine.FP64)
			wantDigestError(t, "OpenRun", err, id, engine.FP64)
			_, err = s.OpenSummary(bg, id, engine.SummaryOptions{})
			wantDigestError(t, "OpenSummary", err, id, engine.FP64)
			_, err = s.OpenRunReader(bg, id, engine.FP64)
			wantDigestError(t, "OpenRunReader", err, id, engine.FP64)
			ref := sessions.RunRef{ID: id, Precision: engine.FP64, Explicit: true}
			_, err = s.Diff(bg, ref, ref, nil)
			wantDigestError(t, "diff", err, id, engine.FP64)
			ss, err := s.Get(bg, id)
			if err != nil {
				t.Fatal(err)
			}
			st, err := sessions.Rebuild(bg, ss, reg, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = s.Resume(bg, id, st, sessions.ResumeOptions{})
			wantDigestError(t, "resume", err, id, engine.FP64)
			if after, err := s.Get(bg, id); err != nil || after.Status != ss.Status || after.PID != ss.PID {
				t.Errorf("the refused resume changed the session: %v, status %s -> %s", err, ss.Status, after.Status)
			}
		})
	}

	t.Run("digest removed: refused", func(t *testing.T) {
		s := openStore(t, "")
		id := interruptedSession(t, s, reg, spec, 30)
		db := rawSQL(t, s.Path())
		rid := runID(t, db, id, engine.FP64)
		for _, removed := range []string{"NULL", "x''"} {
			mustExec(t, db, `UPDATE runs SET digest = `+removed+` WHERE id = ?`, rid)
			rewriteBatch(t, db, rid, readBatches(t, db, rid)[0].first, func(rs []storedRow) []storedRow { rs[0].vals[trades] = 123456; return rs })
			_, err := s.Open(bg, id)
			wantDigestError(t, "show with the digest set to "+removed, err, id, engine.FP64)
			var de *sessions.DigestError
			if errors.As(err, &de) && (!de.Missing || !strings.Contains(err.Error(), "the digest of its saved results is missing")) {
				t.Errorf("digest %s: %v, want it refused as missing", removed, err)
			}
			_, err = s.OpenSummary(bg, id, engine.SummaryOptions{})
			wantDigestError(t, "summary with the digest set to "+removed, err, id, engine.FP64)
			_, err = s.OpenRunReader(bg, id, engine.FP64)
			wantDigestError(t, "run reader with the digest set to "+removed, err, id, engine.FP64)
			ref := sessions.RunRef{ID: id, Precision: engine.FP64, Explicit: true}
			_, err = s.Diff(bg, ref, ref, nil)
			wantDigestError(t, "diff with the digest set to "+removed, err, id, engine.FP64)
			ss, err := s.Get(bg, id)
			if err != nil || len(ss.Unverified) != 0 {
				t.Fatalf("get: unverified %q (%v), want none: the session is not an old one", ss.Unverified, err)
			}
			st, err := sessions.Rebuild(bg, ss, reg, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = s.Resume(bg, id, st, sessions.ResumeOptions{})
			wantDigestError(t, "resume with the digest set to "+removed, err, id, engine.FP64)
		}
	})

	t.Run("saved before digests: read as before", func(t *testing.T) {
		s := openStore(t, "")
		id := interruptedSession(t, s, reg, spec, 30)
		db := rawSQL(t, s.Path())
		rid := runID(t, db, id, engine.FP64)
		// As a session saved at schema version 2 reads after the
		// migrations: no digests, and the file's epochs after it.
		oldSession(t, db, id)
		mustExec(t, db, `UPDATE runs SET digest = NULL WHERE id = ?`, rid)
		rewriteBatch(t, db, rid, readBatches(t, db, rid)[0].first, func(rs []storedRow) []storedRow { rs[0].vals[trades] = 123456; return rs })
		rep, err := s.Open(bg, id)
		if err != nil {
			t.Fatalf("a run without a digest: %v, want it read unverified", err)
		}
		if got := rep.Run(engine.FP64).Results[0].TotalTrades; got != 123456 {
			t.Errorf("read %d trades, want the changed 123456", got)
		}
		ss, err := s.Get(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := "[results settings dataset note robustness summary parity report]"; fmt.Sprint(ss.Unverified) != want {
			t.Errorf("unverified %q, want %s", ss.Unverified, want)
		}
		if want := fmt.Sprintf("session %d was saved before sweepbench digested its results: its results, settings, dataset, note, robustness summary, parity report are read unverified", id); ss.UnverifiedNote() != want {
			t.Errorf("note %q, want %q", ss.UnverifiedNote(), want)
		}
	})
}

// oldSession makes session id of db read as one saved before any digest,
// as a session of schema version 2 does after the migrations: no record
// digests, and the file's epochs (meta, v13) after it, as the migration
// to v13 records them.
func oldSession(t *testing.T, db *sql.DB, id int64) {
	t.Helper()
	mustExec(t, db, `UPDATE studies SET digest_version = 0, settings_digest = NULL, dataset_digest = NULL, note_digest = NULL,
		robustness_digest = NULL, parity_digest = NULL WHERE id = ?`, id)
	mustExec(t, db, `UPDATE meta SET value = ? WHERE name IN ('record_digests_from', 'run_digests_from')`, id+1)
}

// TestDigestCatchesAFlippedByteInTheFile flips one bit of one saved metric
// in the database file itself (SQLite keeps no checksum of its pages, so
// nothing else notices): show refuses the run. With the digest removed the
// same file shows the changed number as if it were computed, which is what
// the digest is for.
func TestDigestCatchesAFlippedByteInTheFile(t *testing.T) {
	bg := context.Background()
	path := t.TempDir() + "/sessions.db"
	s, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, id := runSaved(t, s, newStudy(t, btcusdt(t, 3000), "10:60:10", "12:72:12", engine.FP64), origin(3000), "")
	if err := s.Close(); err != nil { // checkpoints the WAL into the file
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A combo whose cagr is stored once in the file (a batch holds a float
	// metric as its 8 little-endian bytes).
	var victim *engine.ComboResult
	var at int
	for i := range rep.Runs[0].Results {
		r := &rep.Runs[0].Results[i]
		pat := binary.LittleEndian.AppendUint64(nil, math.Float64bits(r.CAGR))
		if at = bytes.Index(file, pat); at >= 0 && bytes.Count(file, pat) == 1 && r.CAGR != 0 {
			victim = r
			break
		}
	}
	if victim == nil {
		t.Fatal("no metric stored once in the file")
	}
	file[at] ^= 0x01 // the last bit of the mantissa
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path)
	_, err = s.Open(bg, id)
	wantDigestError(t, "show after a flipped bit", err, id, engine.FP64)

	// Removing the digest does not turn the check off: the session was
	// saved after the file began digesting runs (finding: rc 0, the
	// flipped number shown as computed).
	raw := rawSQL(t, path)
	mustExec(t, raw, `UPDATE runs SET digest = NULL`)
	_, err = s.Open(bg, id)
	wantDigestError(t, "show after a flipped bit and the digest removed", err, id, engine.FP64)
	mustExec(t, raw, `UPDATE studies SET digest_version = 0`)
	_, err = s.Open(bg, id)
	if err == nil {
		t.Error("show after a flipped bit, the digest removed and the digest version lowered: read, want it refused")
	}

	// Only a session saved before digests reads unverified.
	oldSession(t, raw, id)
	shown, err := s.Open(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	got := shown.Runs[0].Results[victim.Index].CAGR
	if want := math.Float64frombits(math.Float64bits(victim.CAGR) ^ 1); got != want {
		t.Errorf("without the digest the flipped cagr reads %v, want %v (computed %v)", got, want, victim.CAGR)
	}
}

func itoa(i int) string { return fmt.Sprint(i) }
