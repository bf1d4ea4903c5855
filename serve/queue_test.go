package serve

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// fakeClock is a settable time for the queue's estimates.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// submission is a study Admit-ted in its own goroutine.
type submission struct {
	name   string
	cancel context.CancelFunc
	mu     sync.Mutex
	place  common.Place
	placed bool
	turn   common.Turn
	err    error
	done   chan struct{}
}

func (s *submission) lastPlace() (common.Place, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.place, s.placed
}

func submit(t *testing.T, q *Queue, name, user string, work int) *submission {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &submission{name: name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.turn, s.err = q.Admit(ctx, user, "reference", work, func(p common.Place) {
			s.mu.Lock()
			s.place, s.placed = p, true
			s.mu.Unlock()
		})
	}()
	t.Cleanup(cancel)
	return s
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func admitted(s *submission) bool {
	select {
	case <-s.done:
		return s.err == nil
	default:
		return false
	}
}

func waitingCount(q *Queue) int { q.mu.Lock(); defer q.mu.Unlock(); return len(q.waiting) }

// TestQueueFairOrder: while alice's first study computes, alice queues two
// more, then bob and carol one each. The order is bob, carol, alice, alice
// (the user whose last start is oldest first; ties by arrival), each
// study's reported position says so, and each starts only when the one
// before it is released.
func TestQueueFairOrder(t *testing.T) {
	q := NewQueue(Limits{Concurrent: 1})
	a1 := submit(t, q, "a1", "alice", 10)
	waitFor(t, "a1 admitted", func() bool { return admitted(a1) })
	a2 := submit(t, q, "a2", "alice", 10)
	waitFor(t, "a2 queued", func() bool { return waitingCount(q) == 1 })
	a3 := submit(t, q, "a3", "alice", 10)
	waitFor(t, "a3 queued", func() bool { return waitingCount(q) == 2 })
	b1 := submit(t, q, "b1", "bob", 10)
	waitFor(t, "b1 queued", func() bool { return waitingCount(q) == 3 })
	c1 := submit(t, q, "c1", "carol", 10)
	waitFor(t, "c1 queued", func() bool { return waitingCount(q) == 4 })

	want := map[*submission]int{b1: 1, c1: 2, a2: 3, a3: 4}
	for s, pos := range want {
		waitFor(t, s.name+"'s position", func() bool {
			p, ok := s.lastPlace()
			return ok && p.Position == pos && p.Waiting == 4 && p.Running == 1
		})
	}
	order := []*submission{a1, b1, c1, a2, a3}
	for i := 0; i+1 < len(order); i++ {
		next := order[i+1]
		for _, later := range order[i+1:] {
			if admitted(later) {
				t.Fatalf("%s admitted before %s was released", later.name, order[i].name)
			}
		}
		order[i].turn.Done()
		waitFor(t, next.name+" admitted after "+order[i].name, func() bool { return admitted(next) })
	}
	order[len(order)-1].turn.Done()
	if n := waitingCount(q); n != 0 {
		t.Fatalf("%d studies still waiting", n)
	}
}

// TestQueueLimits: a study over the combos limit, and a user's third study
// with two computing or waiting, are refused at once with the limit and
// the values; another user is not held by the first user's count.
func TestQueueLimits(t *testing.T) {
	q := NewQueue(Limits{Concurrent: 1, PerUser: 2, MaxCombos: 1000})
	_, err := q.Admit(context.Background(), "alice", "reference", 1001, nil)
	var le *LimitError
	if !errors.As(err, &le) || *le != (LimitError{Limit: LimitCombos, Value: 1001, Max: 1000}) {
		t.Fatalf("over the combos limit: got %v, want LimitError{combos 1001 1000}", err)
	}
	a1 := submit(t, q, "a1", "alice", 1000)
	waitFor(t, "a1 admitted", func() bool { return admitted(a1) })
	a2 := submit(t, q, "a2", "alice", 10)
	waitFor(t, "a2 queued", func() bool { return waitingCount(q) == 1 })
	_, err = q.Admit(context.Background(), "alice", "reference", 10, nil)
	if !errors.As(err, &le) || *le != (LimitError{Limit: LimitStudies, Value: 3, Max: 2}) {
		t.Fatalf("alice's third study: got %v, want LimitError{studies 3 2}", err)
	}
	if got, want := err.Error(), "server limit: 2 studies of yours computing or waiting at once (this would be your 3rd); wait for one to end or cancel it"; got != want {
		t.Errorf("message:\n got %q\nwant %q", got, want)
	}
	b1 := submit(t, q, "b1", "bob", 10)
	waitFor(t, "b1 queued", func() bool { return waitingCount(q) == 2 })
	a1.turn.Done()
	// bob has not started a study yet: he goes before alice's second.
	waitFor(t, "b1 admitted", func() bool { return admitted(b1) })
	if admitted(a2) {
		t.Fatal("a2 admitted before b1 was released")
	}
	b1.turn.Done()
	waitFor(t, "a2 admitted", func() bool { return admitted(a2) })
	a2.turn.Done()
}

// TestQueueETA: before any study has completed the ETA is unknown
// (negative), and a cancelled wait leaves the queue. A completed study
// teaches the rate: 100 combos in 10 s is 10 per second. A 50-combo study
// computing for 2 s with no progress yet has 5 - 2 = 3 s left: the first
// waiting study (30 combos) starts in 3 s, the next (20 combos) 3 s after
// it. Once it reports 40 of its 50 combos done in those 2 s, its own pace
// says 0.5 s left: 0.5 s and 3.5 s. A cancelled study teaches nothing.
func TestQueueETA(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	q := NewQueue(Limits{Concurrent: 1})
	q.now = clk.now

	first := submit(t, q, "first", "alice", 100)
	waitFor(t, "first admitted", func() bool { return admitted(first) })
	early := submit(t, q, "early", "bob", 30)
	waitFor(t, "early's place", func() bool { _, ok := early.lastPlace(); return ok })
	if p, _ := early.lastPlace(); p.ETA >= 0 || p.Position != 1 {
		t.Fatalf("before any completed study: place %+v, want position 1 and an unknown ETA", p)
	}
	early.cancel()
	<-early.done
	if !errors.Is(early.err, context.Canceled) || waitingCount(q) != 0 {
		t.Fatalf("a cancelled wait: err %v, %d waiting; want context.Canceled and none", early.err, waitingCount(q))
	}

	clk.add(10 * time.Second)
	first.turn.Done() // 100 combos in 10 s
	first.turn.Done() // twice: nothing more
	if r := *q.rates["reference"]; r != (rate{work: 100, secs: 10}) {
		t.Fatalf("rate %+v, want 100 combos in 10 s", r)
	}

	run := submit(t, q, "run", "alice", 50)
	waitFor(t, "run admitted", func() bool { return admitted(run) })
	clk.add(2 * time.Second)
	x := submit(t, q, "x", "bob", 30)
	waitFor(t, "x queued", func() bool { return waitingCount(q) == 1 })
	y := submit(t, q, "y", "carol", 20)
	waitFor(t, "y queued", func() bool { return waitingCount(q) == 2 })
	expect := func(when string, etaX, etaY time.Duration) {
		t.Helper()
		for _, c := range []struct {
			s   *submission
			pos int
			eta time.Duration
		}{{x, 1, etaX}, {y, 2, etaY}} {
			waitFor(t, when+": "+c.s.name+"'s ETA", func() bool {
				p, ok := c.s.lastPlace()
				return ok && p.Position == c.pos && p.ETA == c.eta
			})
		}
	}
	expect("no progress", 3*time.Second, 6*time.Second)
	run.turn.Progress(engine.Progress{Precision: engine.FP64, Done: 25, Total: 25})
	run.turn.Progress(engine.Progress{Precision: engine.FP32, Done: 15, Total: 25})
	expect("40 of 50 done in 2 s", 500*time.Millisecond, 3500*time.Millisecond)

	run.turn.Done() // 50 in 2 s
	if r := *q.rates["reference"]; r != (rate{work: 100, secs: 7}) {
		t.Fatalf("rate %+v, want 100/2 + 50 combos in 10/2 + 2 s", r)
	}
	waitFor(t, "x admitted", func() bool { return admitted(x) })
	clk.add(100 * time.Second)
	x.cancel()
	x.turn.Done() // x's context is cancelled: it stopped early
	if r := *q.rates["reference"]; r != (rate{work: 100, secs: 7}) {
		t.Fatalf("rate %+v after a cancelled study, want it unchanged", r)
	}
	waitFor(t, "y admitted", func() bool { return admitted(y) })
	y.turn.Done()
}
