package serve

import (
	"context"
	"sync"
	"time"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// Limits bound what the queue admits.
type Limits struct {
	// Concurrent is the studies computing at once on the server (1: one
	// GPU, one study at a time; 0 means 1).
	Concurrent int
	// PerUser is the studies one user may have computing or waiting at
	// once, over all their connections and the studies they kept
	// computing after a disconnect (0: no limit).
	PerUser int
	// MaxCombos is the most combos x precisions one study may hold (0:
	// no limit).
	MaxCombos int
}

// Queue is the one queue every connection's studies go through before
// they compute on the server's backends. The order is fair across users:
// when a study ends, the next to start is the first waiting study of the
// user whose last study started longest ago (a user who has not started
// one yet first; ties by arrival), so a user who queues ten studies does
// not hold the others back ten times. Each waiting study's place and an
// estimate of its wait are told to it as they change.
//
// The wait is estimated from the throughput of the studies that
// completed on each backend (combos x precisions over seconds, each sum
// halved at every new study, so large and recent studies weigh most): a
// waiting study's length is its size over that rate. A running study's
// remaining time is its own pace so far (time per combo done, from its
// progress) times the combos left, or, before its first combo, its length
// less its time so far. Before a study has completed on a backend and
// while the running ones have not reported progress, the estimate is
// unknown (common.Place.ETA < 0).
type Queue struct {
	lim Limits
	now func() time.Time

	mu      sync.Mutex
	seq     uint64
	starts  uint64
	last    map[string]uint64 // user -> the starts count at their last start
	waiting []*ticket         // in arrival order
	running []*ticket
	rates   map[string]*rate // by backend
	changed chan struct{}    // closed (and replaced) on every change
}

// rate is a backend's throughput: work done over seconds taken.
type rate struct{ work, secs float64 }

type ticket struct {
	user    string
	backend string
	work    int // combos x precisions
	seq     uint64
	started time.Time
	turn    chan struct{}            // closed when the study may compute
	lanes   map[engine.Precision]int // combos done per lane (Turn.Progress)
}

// NewQueue returns an empty queue with limits lim.
func NewQueue(lim Limits) *Queue {
	if lim.Concurrent < 1 {
		lim.Concurrent = 1
	}
	return &Queue{lim: lim, now: time.Now, last: map[string]uint64{}, rates: map[string]*rate{}, changed: make(chan struct{})}
}

// For is the queue as one user's studies see it (tui.Config.Gate).
func (q *Queue) For(user string) common.Gate { return userGate{q, user} }

type userGate struct {
	q    *Queue
	user string
}

func (g userGate) Admit(ctx context.Context, s *engine.Study, place func(common.Place)) (common.Turn, error) {
	return g.q.Admit(ctx, g.user, s.Backend.Name(), s.Grid.Len()*len(s.Precisions), place)
}

// Admit queues a study of user on backend of work combos x precisions,
// and blocks until it may compute or ctx ends (the study then leaves the
// queue; ctx's error is returned). A study over a limit is refused at once
// with a *LimitError. place (nil: none) hears the study's place while it
// waits: on every change and once a second. The turn hears the study's
// progress; its Done must be called once the study has ended.
func (q *Queue) Admit(ctx context.Context, user, backend string, work int, place func(common.Place)) (common.Turn, error) {
	if q.lim.MaxCombos > 0 && work > q.lim.MaxCombos {
		return nil, &LimitError{Limit: LimitCombos, Value: work, Max: q.lim.MaxCombos}
	}
	q.mu.Lock()
	if q.lim.PerUser > 0 {
		n := 0
		for _, t := range append(q.waiting[:len(q.waiting):len(q.waiting)], q.running...) {
			if t.user == user {
				n++
			}
		}
		if n >= q.lim.PerUser {
			q.mu.Unlock()
			return nil, &LimitError{Limit: LimitStudies, Value: n + 1, Max: q.lim.PerUser}
		}
	}
	q.seq++
	t := &ticket{user: user, backend: backend, work: work, seq: q.seq, turn: make(chan struct{}), lanes: map[engine.Precision]int{}}
	q.waiting = append(q.waiting, t)
	q.dispatch()
	q.mu.Unlock()

	turn := &queueTurn{q: q, t: t, ctx: ctx}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		q.mu.Lock()
		changed := q.changed
		p, waiting := q.place(t)
		q.mu.Unlock()
		if !waiting {
			return turn, nil
		}
		if place != nil {
			place(p)
		}
		select {
		case <-t.turn:
			return turn, nil
		case <-ctx.Done():
			q.mu.Lock()
			select {
			case <-t.turn: // admitted meanwhile: give the turn back
				q.mu.Unlock()
				q.release(t, ctx)
			default:
				q.remove(&q.waiting, t)
				q.broadcast()
				q.mu.Unlock()
			}
			return nil, context.Cause(ctx)
		case <-changed:
		case <-tick.C:
		}
	}
}

// queueTurn is an admitted study's turn (common.Turn).
type queueTurn struct {
	q   *Queue
	t   *ticket
	ctx context.Context
}

func (u *queueTurn) Progress(p engine.Progress) {
	u.q.mu.Lock()
	u.t.lanes[p.Precision] = p.Done
	u.q.mu.Unlock()
}

func (u *queueTurn) Done() { u.q.release(u.t, u.ctx) }

// release ends t's turn: the next study starts. A study that ended with
// its context alive (it completed, or failed) teaches the queue its
// backend's rate; a cancelled one does not (it stopped early).
func (q *Queue) release(t *ticket, ctx context.Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.remove(&q.running, t) {
		return // released already
	}
	if el := q.now().Sub(t.started).Seconds(); ctx.Err() == nil && el > 0 && t.work > 0 {
		r := q.rates[t.backend]
		if r == nil {
			r = &rate{}
			q.rates[t.backend] = r
		}
		r.work = r.work/2 + float64(t.work)
		r.secs = r.secs/2 + el
	}
	q.dispatch()
}

// dispatch starts waiting studies while a slot is free; q.mu is held.
func (q *Queue) dispatch() {
	for len(q.running) < q.lim.Concurrent && len(q.waiting) > 0 {
		t := pick(q.waiting, q.last)
		q.remove(&q.waiting, t)
		q.starts++
		q.last[t.user] = q.starts
		t.started = q.now()
		q.running = append(q.running, t)
		close(t.turn)
	}
	q.broadcast()
}

func (q *Queue) broadcast() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// pick is the next study to start of waiting (arrival order): the first
// study of the user whose last start (last) is the oldest.
func pick(waiting []*ticket, last map[string]uint64) *ticket {
	var best *ticket
	seen := map[string]bool{}
	for _, t := range waiting {
		if seen[t.user] {
			continue // only a user's first waiting study competes
		}
		seen[t.user] = true
		if best == nil || last[t.user] < last[best.user] {
			best = t
		}
	}
	return best
}

func (q *Queue) remove(list *[]*ticket, t *ticket) bool {
	for i, x := range *list {
		if x == t {
			*list = append((*list)[:i], (*list)[i+1:]...)
			return true
		}
	}
	return false
}

// place is t's place: the order the queue would start the waiting studies
// in if nothing else arrived, and when t would start; waiting is false
// once t computes. q.mu is held.
func (q *Queue) place(t *ticket) (p common.Place, waiting bool) {
	now := q.now()
	known := true
	length := func(x *ticket) time.Duration {
		r := q.rates[x.backend]
		if r == nil || r.work <= 0 || r.secs <= 0 {
			known = false
			return 0
		}
		return time.Duration(float64(x.work) / r.work * r.secs * float64(time.Second))
	}
	// Each slot's time until it is free.
	free := make([]time.Duration, q.lim.Concurrent)
	for i, x := range q.running {
		if i >= len(free) {
			break
		}
		done := 0
		for _, d := range x.lanes {
			done += d
		}
		el := now.Sub(x.started)
		if done > 0 {
			free[i] = time.Duration(float64(el) * float64(max(x.work-done, 0)) / float64(done))
		} else {
			free[i] = max(length(x)-el, 0)
		}
	}
	last := make(map[string]uint64, len(q.last))
	for u, n := range q.last {
		last[u] = n
	}
	rest := append([]*ticket(nil), q.waiting...)
	starts := q.starts
	for pos := 1; len(rest) > 0; pos++ {
		x := pick(rest, last)
		slot := 0
		for i := range free {
			if free[i] < free[slot] {
				slot = i
			}
		}
		if x == t {
			eta := free[slot]
			if !known {
				eta = -1
			}
			return common.Place{Position: pos, Waiting: len(q.waiting), Running: len(q.running), ETA: eta}, true
		}
		free[slot] += length(x)
		starts++
		last[x.user] = starts
		q.remove(&rest, x)
	}
	return common.Place{}, false
}
