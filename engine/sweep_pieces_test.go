package engine

import (
	"context"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
)

// TestSweepRecycledResultsInPieces: a discarding sweep whose sink
// recycles the results slices (SweepOptions.Results: a writer that
// copies each chunk later, on a goroutine of its own, then hands the
// slice back) hands the sink each chunk in pieces of at most
// resultsPiece kernel combos (twice as many results with HMA3 twins),
// labels its results into the slices handed back, and the sink sees
// every result of the sweep that keeps them all, each once.
func TestSweepRecycledResultsInPieces(t *testing.T) {
	defer func(p int) { resultsPiece = p }(resultsPiece)
	resultsPiece = 4
	job := sweepJob()
	job.Grid.HMA3 = Range{Start: 6, Stop: 25, Step: 1} // twins: 2p and 2p+1
	ctx := context.Background()
	want, err := Sweep(ctx, &fakeBackend{lanes: 3, chunk: 9}, job, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	free := make(chan []ComboResult, 2)
	queue := make(chan []ComboResult, 4)
	done := make(chan struct{})
	var got []ComboResult
	go func() {
		defer close(done)
		for rs := range queue {
			got = append(got, rs...)
			select {
			case free <- rs:
			default:
			}
		}
	}()
	largest := 0
	var reused atomic.Int64
	opt := SweepOptions{Discard: true,
		Sink: func(rs []ComboResult) error { // one call at a time (Sweep's lock)
			largest = max(largest, len(rs))
			queue <- rs
			return nil
		},
		Results: func(n int) []ComboResult {
			select {
			case rs := <-free:
				if cap(rs) >= n {
					reused.Add(1)
					return rs[:n]
				}
			default:
			}
			return make([]ComboResult, n)
		}}
	run, err := Sweep(ctx, &fakeBackend{lanes: 3, chunk: 9}, job, opt)
	close(queue)
	<-done
	if err != nil || len(run.Results) != 0 {
		t.Fatalf("err %v, %d results kept", err, len(run.Results))
	}
	slices.SortFunc(got, func(a, b ComboResult) int { return a.Index - b.Index })
	if !reflect.DeepEqual(got, want.Results) {
		t.Errorf("the sink saw %d results, not the %d of the sweep that keeps them", len(got), len(want.Results))
	}
	if largest > 2*resultsPiece || largest < resultsPiece {
		t.Errorf("largest piece handed to the sink %d results, want %d..%d", largest, resultsPiece, 2*resultsPiece)
	}
	if reused.Load() == 0 {
		t.Error("no results slice handed back was used again")
	}
}
