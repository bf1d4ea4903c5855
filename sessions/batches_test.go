package sessions_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// The stored batches of results as the sqlite3 shell shows them, read and
// written here from the format's description (resultbatch.go) field by
// field, independently of the store's own codec: to check what the store
// wrote, and to change it behind the store's back.

// storedBatch is a row of result_batches.
type storedBatch struct {
	first, last, rows int
	data              []byte
}

// storedRow is a row of a batch: its grid index and, by engine.MetricNames,
// each metric's float64 bits or, for a count, its int64 value.
type storedRow struct {
	idx  int
	vals []uint64
}

func isCount(name string) bool {
	switch name {
	case "total_trades", "long_bars", "short_bars", "flat_bars":
		return true
	}
	return false
}

// metricCol is the column of metric name.
func metricCol(name string) int {
	for i, n := range engine.MetricNames {
		if n == name {
			return i
		}
	}
	panic("no metric " + name)
}

func readBatches(t *testing.T, db *sql.DB, rid int64) []storedBatch {
	t.Helper()
	rows, err := db.Query(`SELECT first_idx, last_idx, rows, data FROM result_batches WHERE run_id = ? ORDER BY first_idx`, rid)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storedBatch
	for rows.Next() {
		var b storedBatch
		if err := rows.Scan(&b.first, &b.last, &b.rows, &b.data); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// parseBlob reads a batch's blob: version byte 2, uvarint n, n uvarint
// indices (the first as is, then each as its distance from the one before
// less 1), then per metric n values: 8 little-endian bytes for a float,
// a zigzag varint for a count. A version 1 blob holds Part 1's 14 metrics
// only; the others read as the NaN 0x7ff8000000000000.
func parseBlob(t *testing.T, data []byte) []storedRow {
	t.Helper()
	if len(data) == 0 || data[0] != 1 && data[0] != 2 {
		t.Fatalf("blob version %v, want 1 or 2", data[:min(1, len(data))])
	}
	cols := len(engine.MetricNames)
	if data[0] == 1 {
		cols = 14
	}
	p := data[1:]
	uv := func() uint64 {
		v, k := binary.Uvarint(p)
		if k <= 0 {
			t.Fatal("blob ends in a uvarint")
		}
		p = p[k:]
		return v
	}
	n := int(uv())
	rows := make([]storedRow, n)
	idx := -1
	for i := range rows {
		idx += int(uv()) + 1
		rows[i] = storedRow{idx: idx, vals: make([]uint64, len(engine.MetricNames))}
	}
	for j, name := range engine.MetricNames {
		for i := range rows {
			if j >= cols {
				rows[i].vals[j] = 0x7ff8000000000000
				continue
			}
			if isCount(name) {
				v, k := binary.Varint(p)
				if k <= 0 {
					t.Fatal("blob ends in a varint")
				}
				p = p[k:]
				rows[i].vals[j] = uint64(v)
			} else {
				rows[i].vals[j] = binary.LittleEndian.Uint64(p)
				p = p[8:]
			}
		}
	}
	if len(p) != 0 {
		t.Fatalf("%d bytes past the blob's end", len(p))
	}
	return rows
}

// writeBlob is parseBlob's inverse (version 2); rows must be in ascending
// index order.
func writeBlob(rows []storedRow) []byte {
	out := []byte{2}
	out = binary.AppendUvarint(out, uint64(len(rows)))
	prev := -1
	for _, r := range rows {
		out = binary.AppendUvarint(out, uint64(r.idx-prev-1))
		prev = r.idx
	}
	for j, name := range engine.MetricNames {
		for _, r := range rows {
			if isCount(name) {
				out = binary.AppendVarint(out, int64(r.vals[j]))
			} else {
				out = binary.LittleEndian.AppendUint64(out, r.vals[j])
			}
		}
	}
	return out
}

// rewriteBatch replaces the batch of run rid starting at combo first with
// change of its rows, as an edit through SQL would.
func rewriteBatch(t *testing.T, db *sql.DB, rid int64, first int, change func([]storedRow) []storedRow) {
	t.Helper()
	var data []byte
	if err := db.QueryRow(`SELECT data FROM result_batches WHERE run_id = ? AND first_idx = ?`, rid, first).Scan(&data); err != nil {
		t.Fatal(err)
	}
	rows := change(parseBlob(t, data))
	mustExec(t, db, `UPDATE result_batches SET first_idx = ?, last_idx = ?, rows = ?, data = ? WHERE run_id = ? AND first_idx = ?`,
		rows[0].idx, rows[len(rows)-1].idx, len(rows), writeBlob(rows), rid, first)
}

// runGrid is the grid of the study of run rid.
func runGrid(t *testing.T, db *sql.DB, rid int64) engine.Grid {
	t.Helper()
	var g engine.Grid
	if err := db.QueryRow(`SELECT s.hma_start, s.hma_stop, s.hma_step, s.hma3_start, s.hma3_stop, s.hma3_step
		FROM runs r JOIN studies s ON s.id = r.study_id WHERE r.id = ?`, rid).Scan(
		&g.HMA.Start, &g.HMA.Stop, &g.HMA.Step, &g.HMA3.Start, &g.HMA3.Stop, &g.HMA3.Step); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestStoredBatchesAreTheResults: what a saved study's result_batches
// hold, read by the format's description, is what the study computed,
// every combo once, bit for bit, each batch's columns matching its blob.
func TestStoredBatchesAreTheResults(t *testing.T) {
	s := openStore(t, "")
	rep, id := runSaved(t, s, newStudy(t, btcusdt(t, 3000), "10:200:5", "12:120:4"), origin(3000), "")
	db := rawSQL(t, s.Path())
	for _, run := range rep.Runs {
		rid := runID(t, db, id, run.Precision)
		seen := map[int]bool{}
		for _, b := range readBatches(t, db, rid) {
			rows := parseBlob(t, b.data)
			if len(rows) != b.rows || rows[0].idx != b.first || rows[len(rows)-1].idx != b.last {
				t.Fatalf("%s batch %d..%d of %d rows holds %d rows, %d..%d", run.Precision, b.first, b.last, b.rows,
					len(rows), rows[0].idx, rows[len(rows)-1].idx)
			}
			for i, r := range rows {
				if i > 0 && r.idx <= rows[i-1].idx || seen[r.idx] {
					t.Fatalf("%s: combo %d out of order or saved twice", run.Precision, r.idx)
				}
				seen[r.idx] = true
				want := &run.Results[r.idx]
				for j, name := range engine.MetricNames {
					v, _ := want.Value(name)
					wantBits := math.Float64bits(v)
					if isCount(name) {
						wantBits = uint64(int64(v))
					}
					if r.vals[j] != wantBits {
						t.Errorf("%s combo %d %s: stored %#x, computed %#x", run.Precision, r.idx, name, r.vals[j], wantBits)
					}
				}
			}
		}
		if len(seen) != len(run.Results) {
			t.Errorf("%s: %d combos stored, %d computed", run.Precision, len(seen), len(run.Results))
		}
	}
}

// wantBatchError checks that err refuses run id:p for its batch from combo
// first, naming the session, the run and the batch.
func wantBatchError(t *testing.T, what string, err error, id int64, p engine.Precision, first int) {
	t.Helper()
	var be *sessions.BatchError
	if !errors.As(err, &be) || be.ID != id || be.Precision != p || be.First != first {
		t.Errorf("%s: %v, want a *BatchError for run %d:%s, batch from combo %d", what, err, id, p, first)
		return
	}
	for _, want := range []string{fmt.Sprintf("session %d, run %d:%s", id, id, p), fmt.Sprintf("from combo %d cannot be read", first)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not name %q", what, err, want)
		}
	}
}

// TestDamagedBatchRefused damages one stored batch of an interrupted
// session through SQL, one way per case, and checks that show and export
// (Open), OpenRun, diff and resume all refuse the run with a *BatchError
// naming the session, the run and the batch, and saying what is wrong,
// without a panic, before resume claims anything.
func TestDamagedBatchRefused(t *testing.T) {
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 3000
	spec.HMA, spec.HMA3, spec.Backend = "10:100:10", "12:96:12", "reference"
	reg := pipelineRegistry()
	// Each case damages the batch from combo first and returns the first
	// combo the table then says it has, and what the error says.
	cases := []struct {
		name   string
		damage func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string)
	}{
		{"truncated", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			mustExec(t, db, `UPDATE result_batches SET data = substr(data, 1, length(data) - 5) WHERE run_id = ? AND first_idx = ?`, rid, first)
			return first, "it ends early"
		}},
		{"cut to its version byte", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			mustExec(t, db, `UPDATE result_batches SET data = substr(data, 1, 1) WHERE run_id = ? AND first_idx = ?`, rid, first)
			return first, "it ends early"
		}},
		{"empty", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			mustExec(t, db, `UPDATE result_batches SET data = x'' WHERE run_id = ? AND first_idx = ?`, rid, first)
			return first, "it is empty"
		}},
		{"a newer format", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			mustExec(t, db, `UPDATE result_batches SET data = CAST(x'03' || substr(data, 2) AS BLOB) WHERE run_id = ? AND first_idx = ?`, rid, first)
			return first, "format version is 3"
		}},
		{"bytes past its end", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			mustExec(t, db, `UPDATE result_batches SET data = CAST(data || x'00' AS BLOB) WHERE run_id = ? AND first_idx = ?`, rid, first)
			return first, "bytes past its end"
		}},
		{"more rows than it holds", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			mustExec(t, db, `UPDATE result_batches SET rows = rows + 1 WHERE run_id = ? AND first_idx = ?`, rid, first)
			return first, "the table says"
		}},
		{"another first combo", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			mustExec(t, db, `UPDATE result_batches SET first_idx = first_idx - 1 WHERE run_id = ? AND first_idx = ?`, rid, first)
			return first - 1, "the table says"
		}},
		{"another last combo", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			mustExec(t, db, `UPDATE result_batches SET last_idx = last_idx + 1 WHERE run_id = ? AND first_idx = ?`, rid, first)
			return first, "the table says"
		}},
		{"a combo past the grid", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			rewriteBatch(t, db, rid, first, func(rs []storedRow) []storedRow { rs[len(rs)-1].idx = g.Len(); return rs })
			return first, "past the grid"
		}},
		{"a combo in two batches", func(t *testing.T, db *sql.DB, rid int64, first int, g engine.Grid) (int, string) {
			// A copy of the batch less its first row, the digest made to
			// count it: only the batches disagree.
			var data []byte
			if err := db.QueryRow(`SELECT data FROM result_batches WHERE run_id = ? AND first_idx = ?`, rid, first).Scan(&data); err != nil {
				t.Fatal(err)
			}
			rs := parseBlob(t, data)[1:]
			mustExec(t, db, `INSERT INTO result_batches (run_id, first_idx, last_idx, rows, data) VALUES (?, ?, ?, ?, ?)`,
				rid, rs[0].idx, rs[len(rs)-1].idx, len(rs), writeBlob(rs))
			mustExec(t, db, `UPDATE runs SET digest = ? WHERE id = ?`, independentDigest(t, db, rid), rid)
			return rs[0].idx, "another batch holds too"
		}},
	}
	bg := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, "")
			id := interruptedSession(t, s, reg, spec, 30)
			db := rawSQL(t, s.Path())
			rid := runID(t, db, id, engine.FP64)
			first, says := c.damage(t, db, rid, readBatches(t, db, rid)[0].first, runGrid(t, db, rid))

			_, err := s.Open(bg, id)
			wantBatchError(t, "show/export", err, id, engine.FP64, first)
			if err != nil && !strings.Contains(err.Error(), says) {
				t.Errorf("%q does not say %q", err, says)
			}
			_, _, err = s.OpenRun(bg, id, engine.FP64)
			wantBatchError(t, "OpenRun", err, id, engine.FP64, first)
			_, err = s.OpenSummary(bg, id, engine.SummaryOptions{})
			wantBatchError(t, "OpenSummary", err, id, engine.FP64, first)
			if err != nil && !strings.Contains(err.Error(), says) {
				t.Errorf("OpenSummary: %q does not say %q", err, says)
			}
			_, err = s.OpenRunReader(bg, id, engine.FP64)
			wantBatchError(t, "OpenRunReader", err, id, engine.FP64, first)
			ref := sessions.RunRef{ID: id, Precision: engine.FP64, Explicit: true}
			_, err = s.Diff(bg, ref, ref, nil)
			wantBatchError(t, "diff", err, id, engine.FP64, first)
			ss, err := s.Get(bg, id)
			if err != nil {
				t.Fatal(err)
			}
			st, err := sessions.Rebuild(bg, ss, reg, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = s.Resume(bg, id, st, sessions.ResumeOptions{})
			wantBatchError(t, "resume", err, id, engine.FP64, first)
			if after, err := s.Get(bg, id); err != nil || after.Status != ss.Status || after.PID != ss.PID {
				t.Errorf("the refused resume changed the session: %v, status %s -> %s", err, ss.Status, after.Status)
			}
		})
	}
}

// TestDeleteRemovesBatches: removing a session removes its stored batches
// with its runs, and only its own.
func TestDeleteRemovesBatches(t *testing.T) {
	s := openStore(t, "")
	st := func() *engine.Study { return newStudy(t, btcusdt(t, 2000), "10:40:10", "12:48:12") }
	_, gone := runSaved(t, s, st(), origin(2000), "")
	_, kept := runSaved(t, s, st(), origin(2000), "")
	if err := s.Delete(context.Background(), gone, false); err != nil {
		t.Fatal(err)
	}
	db := rawSQL(t, s.Path())
	count := func(id int64) (n int) {
		t.Helper()
		if err := db.QueryRow(`SELECT count(*) FROM result_batches b JOIN runs r ON r.id = b.run_id WHERE r.study_id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var all int
	if err := db.QueryRow(`SELECT count(*) FROM result_batches`).Scan(&all); err != nil {
		t.Fatal(err)
	}
	if count(gone) != 0 || count(kept) == 0 || all != count(kept) {
		t.Errorf("after removing session %d: %d of its batches left, %d of session %d, %d in all", gone, count(gone), count(kept), kept, all)
	}
}
