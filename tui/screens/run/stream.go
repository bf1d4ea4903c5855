package run

import (
	"errors"
	"slices"
	"sync"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// streamCap bounds the combos a lane keeps for the results so far: a
// larger grid's snapshot holds its first streamCap combos to complete.
const streamCap = 250_000

// stream keeps the chunks of combos a study's lanes complete (the study's
// sink hands them over as they come), so that the results screen can show
// what has streamed so far while the study computes.
type stream struct {
	mu    sync.Mutex
	cap   int
	lanes map[engine.Precision][]engine.ComboResult
	seen  map[engine.Precision]int // combos streamed, kept or not
}

func newStream(cap int) *stream {
	return &stream{cap: cap, lanes: map[engine.Precision][]engine.ComboResult{}, seen: map[engine.Precision]int{}}
}

// add is the study's sink: it copies what it keeps of rs (the engine owns
// the slice) and never fails the study.
func (s *stream) add(p engine.Precision, rs []engine.ComboResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[p] += len(rs)
	if room := s.cap - len(s.lanes[p]); room > 0 {
		s.lanes[p] = append(s.lanes[p], rs[:min(room, len(rs))]...)
	}
	return nil
}

// A snapshot's runs are not complete: they are still computing.
var errRunning = errors.New("still computing")

// snapshot is the report of what study s has streamed so far: a run per
// lane that completed a chunk (its combos in grid order, status
// incomplete), no parity report (it is computed once both lanes end).
// seen counts the combos streamed, kept is what the snapshot holds (fewer
// when a lane passed the cap); nil when nothing has streamed yet.
func (s *stream) snapshot(st *engine.Study) (rep *engine.Report, seen, kept int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep = engine.NewReport(st)
	for _, p := range st.Precisions {
		rs := s.lanes[p]
		if len(rs) == 0 {
			continue
		}
		rs = slices.Clone(rs)
		slices.SortFunc(rs, func(a, b engine.ComboResult) int { return a.Index - b.Index })
		rep.Runs = append(rep.Runs, &engine.Run{Backend: st.Backend.Name(), Precision: p, WMA: st.WMA, Grid: st.Grid,
			Status: common.StatusRunning, Err: errRunning, Results: rs})
		seen, kept = seen+s.seen[p], kept+len(rs)
	}
	if len(rep.Runs) == 0 {
		return nil, 0, 0
	}
	return rep, seen, kept
}
