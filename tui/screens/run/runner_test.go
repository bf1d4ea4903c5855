package run

import (
	"testing"
	"time"

	"sweepbench/engine"
)

// TestProgressThrottle feeds the runner's channel far faster than 20
// events a second and checks the UI gets at most one update per 50 ms,
// each with the latest event of its lane, then the done message.
func TestProgressThrottle(t *testing.T) {
	r := &runner{gen: 1, progress: make(chan engine.Progress, 64), done: make(chan doneMsg, 1)}
	const n = 400
	go func() {
		for i := 1; i <= n; i++ {
			select { // the engine's non-blocking send
			case r.progress <- engine.Progress{Precision: engine.FP64, Done: i, Total: n, Phase: "compute"}:
			default:
			}
			time.Sleep(2 * time.Millisecond)
		}
		r.done <- doneMsg{gen: 1}
	}()
	var stamps []time.Time
	last := 0
	for {
		msg := r.next()()
		if d, ok := msg.(doneMsg); ok {
			if len(d.ps) > 0 && d.ps[0].Done < last {
				t.Fatalf("done carried an older event (%d < %d)", d.ps[0].Done, last)
			}
			break
		}
		p := msg.(ProgressMsg)
		if len(p.ps) != 1 || p.ps[0].Done < last {
			t.Fatalf("update %d: %+v after %d", len(stamps), p.ps, last)
		}
		last = p.ps[0].Done
		stamps = append(stamps, time.Now())
	}
	for i := 2; i < len(stamps); i++ {
		if gap := stamps[i].Sub(stamps[i-1]); gap < progressEvery-5*time.Millisecond {
			t.Fatalf("updates %d and %d are %v apart, want >= %v", i-1, i, gap, progressEvery)
		}
	}
	if len(stamps) < 3 || len(stamps) > 40 {
		t.Fatalf("%d updates for a ~0.8 s run", len(stamps))
	}
}
