package sessions_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// TestSaveDoesNotWaitForTheDisk holds the database's write lock from
// another connection (as a second writer would) so that nothing can be
// committed: the first batches are accepted at once, one being committed
// and QueueDepth waiting, and only then does Save block (memory stays
// bounded). When the lock is released every row is committed.
func TestSaveDoesNotWaitForTheDisk(t *testing.T) {
	bg := context.Background()
	s := openStore(t, "")
	st := newStudy(t, btcusdt(t, 2000), "10:200:1", "12:20:1", engine.FP64)
	w, err := begin(bg, s, st, origin(2000), "")
	if err != nil {
		t.Fatal(err)
	}
	const rows = 10
	w.BatchRows, w.BatchAge = rows, time.Hour

	lock, err := rawSQL(t, s.Path()).Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(`UPDATE studies SET note = note`); err != nil { // takes the write lock
		t.Fatal(err)
	}
	// At most 2*QueueDepth+1 batches can be accepted: up to QueueDepth+1
	// taken by the committer into its (blocked) transaction, QueueDepth
	// waiting behind it.
	total := 2*sessions.QueueDepth + 3
	var accepted atomic.Int32
	saved := make(chan error, 1)
	go func() {
		for k := 0; k < total; k++ {
			rs := make([]engine.ComboResult, rows)
			for i := range rs {
				rs[i] = engine.ComboResult{Index: k*rows + i, Combo: st.Grid.At(k*rows + i), Metrics: engine.Metrics{Sharpe: float64(i)}}
			}
			if err := w.Save(engine.FP64, rs); err != nil {
				saved <- err
				return
			}
			accepted.Add(1)
			time.Sleep(20 * time.Millisecond) // let the committer take each batch as it comes
		}
		saved <- nil
	}()
	time.Sleep(time.Second)
	n := int(accepted.Load())
	if n < sessions.QueueDepth+1 || n > 2*sessions.QueueDepth+1 {
		t.Errorf("with the database locked, %d batches were accepted; want between %d and %d", n, sessions.QueueDepth+1, 2*sessions.QueueDepth+1)
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	ss, err := s.Get(bg, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if done, _ := ss.Done(); done != total*rows {
		t.Errorf("%d combos saved after the flush, want %d", done, total*rows)
	}
}

// TestSaveErrorNeverStopsTheStudy breaks the database part way through a
// study (a trigger refuses every batch holding some combo or a later one): the study still
// computes every combo; the front end hears of the save error once; the
// session is recorded failed, saying why; the rows committed before the
// failure read back and verify against their digest. When the failure
// comes only with the last batch (committed after the sweep, at Finish),
// it is reported all the same.
func TestSaveErrorNeverStopsTheStudy(t *testing.T) {
	bg := context.Background()
	for _, c := range []struct {
		name string
		from int // the first combo index the database refuses
	}{
		{"part way", 700},
		{"the last batch", 1150},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, "")
			mustExec(t, rawSQL(t, s.Path()), `CREATE TRIGGER refuse BEFORE INSERT ON result_batches WHEN NEW.last_idx >= `+itoa(c.from)+
				` BEGIN SELECT RAISE(ABORT, 'the disk is on fire'); END`)
			st := newStudy(t, btcusdt(t, 3000), "10:600:5", "12:120:12", engine.FP64) // 1,190 combos: 3 batches
			st.Spec.Data, st.Spec.Head = "embedded:btcusdt-1m", 3000
			var heard []*sessions.SaveError
			rep, rec, runErr := sessions.RunStudy(bg, s, st, engine.StudyOptions{}, sessions.RecordOptions{
				SaveError: func(e *sessions.SaveError) { heard = append(heard, e) },
			})
			if runErr != nil || !rep.Complete() || len(rep.Runs[0].Results) != st.Grid.Len() {
				t.Fatalf("the study: %v, complete %v: a save error must not stop it", runErr, rep.Complete())
			}
			var de *sessions.DBError
			if len(heard) != 1 || rec.Err != heard[0] || rec.Err.Stage != sessions.SaveSave || !errors.As(rec.Err, &de) ||
				!strings.Contains(rec.Err.Error(), "the disk is on fire") {
				t.Fatalf("heard %v, recorded %v: want one save-stage SaveError wrapping the database's error", heard, rec.Err)
			}
			ss, err := s.Get(bg, rec.ID)
			if err != nil {
				t.Fatal(err)
			}
			if ss.Status != engine.StatusFailed || !strings.Contains(ss.Error, "not all saved") {
				t.Errorf("session %s (%q), want failed saying results were not all saved", ss.Status, ss.Error)
			}
			saved, err := s.Open(bg, rec.ID)
			if err != nil {
				t.Fatalf("the rows saved before the failure: %v", err)
			}
			// The batches committed before the refused one are saved (none
			// when the committer, behind on a loaded machine, joined the
			// first batch with the refused one into one transaction), each
			// as computed; nothing at or past the refused combo.
			got := saved.Runs[0].Results
			if len(got) > c.from {
				t.Errorf("%d rows saved, want all below %d", len(got), c.from)
			}
			for i := range got {
				if got[i].Index >= c.from {
					t.Fatalf("row %d saved past the refused combo %d", got[i].Index, c.from)
				}
			}
			for i := range got {
				if got[i] != rep.Runs[0].Results[got[i].Index] {
					t.Fatalf("saved row %d differs from the computed one", got[i].Index)
				}
			}
		})
	}
}

// TestSaveRefusedAfterAFailure: a failed commit is seen by the next Save,
// Flush or Finish; from then on Save refuses every chunk with that error,
// and the Sink tells the front end once and never stops the sweep.
func TestSaveRefusedAfterAFailure(t *testing.T) {
	bg := context.Background()
	s := openStore(t, "")
	mustExec(t, rawSQL(t, s.Path()), `CREATE TRIGGER refuse BEFORE INSERT ON result_batches BEGIN SELECT RAISE(ABORT, 'read-only medium'); END`)
	st := newStudy(t, btcusdt(t, 2000), "10:20:1", "12:20:1", engine.FP64)
	w, err := begin(bg, s, st, origin(2000), "")
	if err != nil {
		t.Fatal(err)
	}
	w.BatchRows = 1
	chunk := func(i int) []engine.ComboResult { return []engine.ComboResult{{Index: i, Combo: st.Grid.At(i)}} }
	if err := w.Save(engine.FP64, chunk(0)); err != nil {
		t.Fatalf("first Save: %v, want it accepted (the commit fails later)", err)
	}
	first := w.Flush()
	var de *sessions.DBError
	if !errors.As(first, &de) || !strings.Contains(first.Error(), "read-only medium") {
		t.Fatalf("Flush: %v, want the commit's *DBError", first)
	}
	var heard []error
	sink := w.Sink(func(err error) { heard = append(heard, err) })
	for i := 1; i < 4; i++ {
		if err := sink(engine.FP64, chunk(i)); err != nil {
			t.Fatalf("Sink returned %v: it must never stop the sweep", err)
		}
	}
	if len(heard) != 1 || heard[0] != first || w.Err() != first {
		t.Errorf("heard %v, Err %v; want the first error, once", heard, w.Err())
	}
	if err := w.Finish(nil, nil); err != nil {
		t.Fatal(err)
	}
	if ss, err := s.Get(bg, w.ID()); err != nil || ss.Status != engine.StatusFailed {
		t.Errorf("session after the failure: %v, %+v", err, ss)
	}
}

// TestSaveRefusesWhatABatchCannotHold: a combo saved again (a chunk handed
// over twice, or one overlapping it), outside the grid or with lengths
// other than the grid's fails the save, naming the combo, rather than be
// stored: the run's digest and its rows stay one combo each.
func TestSaveRefusesWhatABatchCannotHold(t *testing.T) {
	bg := context.Background()
	st := newStudy(t, btcusdt(t, 2000), "10:20:1", "12:20:1", engine.FP64)
	rows := func(lo, hi int) []engine.ComboResult {
		var rs []engine.ComboResult
		for i := lo; i < hi; i++ {
			rs = append(rs, engine.ComboResult{Index: i, Combo: st.Grid.At(i)})
		}
		return rs
	}
	wrong := rows(9, 10)
	wrong[0].HMA++
	for _, c := range []struct {
		name string
		then []engine.ComboResult
		says string
	}{
		{"the same chunk", rows(0, 4), "combo 0 is saved already"},
		{"an overlapping chunk", rows(2, 6), "combo 2 is saved already"},
		{"twice in a batch", append(rows(5, 7), rows(6, 7)...), "combo 6 is in the batch twice"},
		{"outside the grid", rows(st.Grid.Len(), st.Grid.Len()+1), "outside the grid"},
		{"another combo's lengths", wrong, "combo 9 is"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, "")
			w, err := begin(bg, s, st, origin(2000), "")
			if err != nil {
				t.Fatal(err)
			}
			w.BatchRows = 1
			if err := w.Save(engine.FP64, rows(0, 4)); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := w.Save(engine.FP64, c.then); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("Flush: %v, want an error saying %q", err, c.says)
			}
			w.Finish(nil, nil)
			run, _, err := s.OpenRun(bg, w.ID(), engine.FP64)
			if err != nil || len(run.Results) != 4 {
				t.Fatalf("the run after the refusal: %v, %d rows; want the first 4", err, len(run.Results))
			}
		})
	}
}
