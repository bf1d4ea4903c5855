package sessions

import (
	"strings"
	"sync/atomic"
	"testing"
)

// TestEncodersInOrder: f(i) computed on several goroutines comes back in
// order, i = 0 to n-1, never more than ahead results computed or being
// computed beyond the one taken; stop after every result returns.
func TestEncodersInOrder(t *testing.T) {
	const n, workers, ahead = 200, 4, 3
	// taken counts the results once next has returned them, so it may be
	// one behind: f(i) may start once i < (results taken) + ahead, that is
	// i - taken <= ahead here.
	var taken, busiest atomic.Int64
	e := startEncoders(n, workers, ahead, func(i int) int {
		if d := int64(i) - taken.Load(); d > busiest.Load() {
			busiest.Store(d) // racy max, enough to catch a missing bound
		}
		return i * i
	})
	for i := range n {
		v, err := e.next()
		if err != nil {
			t.Fatal(err)
		}
		taken.Add(1)
		if v != i*i {
			t.Fatalf("result %d: %d, want %d", i, v, i*i)
		}
	}
	e.stop()
	if b := busiest.Load(); b > ahead {
		t.Errorf("f(i) started %d results ahead of those taken, want at most %d", b, ahead)
	}
}

// TestEncodersPanicAndStop: a panic in f comes back as that result's
// error (the process goes on), and stop before every result is taken
// returns, having started no more than ahead beyond those taken.
func TestEncodersPanicAndStop(t *testing.T) {
	var calls atomic.Int64
	e := startEncoders(100, 2, 4, func(i int) int {
		calls.Add(1)
		if i == 2 {
			panic("boom")
		}
		return i
	})
	for i := range 2 {
		if v, err := e.next(); err != nil || v != i {
			t.Fatalf("result %d: %d, %v", i, v, err)
		}
	}
	if _, err := e.next(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("result 2: error %v, want the panic", err)
	}
	e.stop()
	if c := calls.Load(); c > 3+4 {
		t.Errorf("f called %d times after 3 results taken, want at most 7", c)
	}
}
