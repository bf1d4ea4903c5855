package sessions_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// TestReadWhileWriting lists and opens sessions from a second connection
// pool (as `sessions ls` in another terminal would) while a sweep commits
// its batches: no reader waits on the writer or fails (WAL), and each
// reader sees a growing, consistent prefix of the results.
func TestReadWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	writer := openStore(t, path)
	reader := openStore(t, path)
	bg := context.Background()
	st := newStudy(t, btcusdt(t, 10000), "10:150:5", "12:96:12", engine.FP64)

	w, err := begin(bg, writer, st, origin(10000), "")
	if err != nil {
		t.Fatal(err)
	}
	w.BatchRows = 8
	// The writer waits, after each batch it saves, for one read that began
	// after it (up to a second): the reader sees the run's states however
	// the scheduler orders the two goroutines (with GOMAXPROCS=1 the run
	// could otherwise finish before the reader's first turn).
	var saves atomic.Int64
	read := make(chan int64, 1)
	sink := func(p engine.Precision, rs []engine.ComboResult) error {
		if err := w.Save(p, rs); err != nil {
			return err
		}
		k := saves.Add(1)
		deadline := time.After(time.Second)
		for {
			select {
			case g := <-read:
				if g >= k {
					return nil
				}
			case <-deadline:
				return nil
			}
		}
	}
	var wg sync.WaitGroup
	finished := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(finished)
		rep, err := engine.RunStudy(bg, st, engine.StudyOptions{Sink: sink})
		if err == nil {
			err = w.Finish(rep, nil)
		}
		if err != nil {
			t.Error(err)
		}
	}()

	seen := map[int]bool{}
	last := 0
	for reading := true; reading; {
		select {
		case <-finished:
			reading = false
		default:
		}
		began := saves.Load()
		list, err := reader.List(bg, sessions.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			t.Fatalf("%d sessions listed", len(list))
		}
		done, _ := list[0].Done()
		if done < last {
			t.Fatalf("done went back from %d to %d", last, done)
		}
		last = done
		seen[done] = true
		rep, err := reader.Open(bg, list[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Runs) == 1 {
			rs := rep.Runs[0].Results
			for i := 1; i < len(rs); i++ {
				if rs[i].Index <= rs[i-1].Index {
					t.Fatal("results out of grid order")
				}
			}
		}
		select { // this read began after save number began
		case read <- began:
		default:
			select { // replace a stale one
			case <-read:
			default:
			}
			select {
			case read <- began:
			default:
			}
		}
	}
	wg.Wait()
	if last != st.Grid.Len() {
		t.Errorf("finally %d saved, want %d", last, st.Grid.Len())
	}
	if len(seen) < 3 {
		t.Errorf("the reader saw only %d states of the run: %v", len(seen), seen)
	}
}
