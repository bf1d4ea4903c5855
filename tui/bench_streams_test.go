package tui

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/bench"
)

// TestBenchStreams: each rung's row shows as soon as it is timed, while
// the ladder still runs; esc shows the interrupted rung as cancelled.
func TestBenchStreams(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var started atomic.Int32
	rungs := func() []bench.Rung {
		all := fakeRungs()
		return []bench.Rung{all[2], // M2, 30ms: 300 combos/s
			{ID: "M3", Method: "blocks until cancelled", Precision: engine.FP64,
				Run: func(ctx context.Context, job *engine.Job) (*engine.Run, time.Duration, error) {
					started.Add(1)
					select {
					case <-ctx.Done():
						return nil, 0, ctx.Err()
					case <-release:
						return nil, 0, errors.New("released")
					}
				}}}
	}
	cfg := Config{Registry: testRegistry(), Flags: smallFlags(), Rungs: rungs, BenchRepeat: 1}
	d := newStoreDriver(t, cfg, 80, 24)
	m := d.m
	d.key("esc", "B")         // out of the focused range: B is a key again
	m.Update(keyMsg("enter")) // its commands are followed by hand below
	if !m.bench.Running() {
		t.Fatalf("the ladder did not start (last error %q)", m.status.LastErr)
	}
	// M2 running, its row, M2 done, M3 running: then M3 holds.
	for range 4 {
		m.Update(m.bench.Next()())
	}
	if started.Load() == 0 || !m.bench.Running() {
		t.Fatal("M3 did not start")
	}
	v := m.View()
	if !strings.Contains(v, "M2") || !strings.Contains(v, "300") || !strings.Contains(v, "running") {
		t.Fatalf("M2's row is not shown while M3 runs:\n%s", v)
	}
	d.key("esc")
	m.Update(m.bench.Next()())
	if m.bench.Running() {
		t.Fatal("the ladder did not end")
	}
	v = m.View()
	if !strings.Contains(v, "cancelled") || strings.Contains(v, "failed") || strings.Contains(v, "error") ||
		strings.Contains(v, "context canceled") {
		t.Fatalf("the cancel:\n%s", v)
	}
	// The rows timed before the cancel stay (issue 15, defect 9).
	if !strings.Contains(v, "M2") || !strings.Contains(v, "300") {
		t.Fatalf("M2's row is gone after the cancel:\n%s", v)
	}
}
