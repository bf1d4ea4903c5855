package sessions

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"sweepbench/engine"
)

// saveWhole saves rep's runs as a GPU hands them over (each lane's
// results in one chunk) and finishes the session.
func saveWhole(t *testing.T, s *Store, st *engine.Study, rep *engine.Report) int64 {
	t.Helper()
	w, err := begin(context.Background(), s, st, testOrigin{Data: "embedded:btcusdt-1m", Head: st.Dataset.Info.Bars}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range rep.Runs {
		if err := w.Save(run.Precision, run.Results); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(rep, nil); err != nil {
		t.Fatal(err)
	}
	return w.ID()
}

// TestClosedStoreIsOneFile: the commits of a study of 22,500 combos in
// both precisions (about 9 MB of blobs, past checkpointBytes: the
// checkpointer copies them beside the commits, which do not) and its
// final state, saved, then the store closed: no -wal file is left, and the
// database file alone (copied without it) holds the whole session, every
// result bit for bit and the parity report, its digests verified on read.
func TestClosedStoreIsOneFile(t *testing.T) {
	ctx := context.Background()
	st := studyOn(t, 300, engine.Grid{HMA: engine.Range{Start: 10, Stop: 159, Step: 1}, HMA3: engine.Range{Start: 12, Stop: 161, Step: 1}},
		engine.FP64, engine.FP32)
	rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{})
	if err != nil || rep.Parity == nil {
		t.Fatal("no parity report: ", err)
	}
	if n := len(rep.Runs[0].Results); n != 22_500 {
		t.Fatalf("%d results", n)
	}
	path := filepath.Join(t.TempDir(), "sessions.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	id := saveWhole(t, s, st, rep)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Close, %s-wal: %v; want no such file (checkpointed into the database)", path, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(alone, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Open(alone)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != len(rep.Runs) {
		t.Fatalf("%d runs read back, want %d", len(got.Runs), len(rep.Runs))
	}
	for i, want := range rep.Runs {
		g := got.Runs[i]
		if g.Precision != want.Precision || len(g.Results) != len(want.Results) {
			t.Fatalf("run %d: %s with %d results, want %s with %d", i, g.Precision, len(g.Results), want.Precision, len(want.Results))
		}
		for j := range want.Results {
			if !sameBits(&g.Results[j], &want.Results[j]) {
				t.Fatalf("%s result %d: got %+v, want %+v", want.Precision, j, g.Results[j], want.Results[j])
			}
		}
	}
	if got.Parity == nil || got.Parity.CombosCompared != rep.Parity.CombosCompared || got.Parity.Verdict != rep.Parity.Verdict ||
		got.Parity.TotalTrades32 != rep.Parity.TotalTrades32 || got.Parity.FlipCount != rep.Parity.FlipCount {
		t.Errorf("parity read back %+v, want %+v", got.Parity, rep.Parity)
	}
}

// TestWriterGivesBackAutoCheckpoint: the committer and Finish commit with
// SQLite's automatic checkpoint off (checkpoint.go) and turn it back on
// before their connections go back to the pool: after a saved study every
// connection of the pool checkpoints at 1,000 pages again, as SQLite's
// default, so that the store's other writes (delete, robustness, a later
// study's Begin) keep the WAL short.
func TestWriterGivesBackAutoCheckpoint(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := testStudy(t, 3000, engine.FP64, engine.FP32)
	rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	saveWhole(t, s, st, rep)
	// Every connection the pool may hand out, held at once.
	var conns []interface{ Close() error }
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 4; i++ {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		var pages int
		if err := conn.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if pages != 1000 {
			t.Errorf("connection %d: wal_autocheckpoint %d, want 1000", i, pages)
		}
	}
}
