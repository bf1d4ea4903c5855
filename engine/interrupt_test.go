package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestInterruptedRunSaysSo: a run whose context is cancelled by a hang-up
// or SIGTERM (the cause engine.Interrupted) reports that, not "cancelled
// by the user"; a plain cancel still reads as the user's.
func TestInterruptedRunSaysSo(t *testing.T) {
	for _, c := range []struct {
		cause error
		want  string
	}{{&Interrupted{Signal: "terminated"}, "interrupted (terminated)"}, {nil, CancelledByUser}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(c.cause)
		b := &fakeBackend{lanes: 1, chunk: 10, compute: func(ctx context.Context, lane, first int, out []Metrics) error { return nil }}
		run, err := Sweep(ctx, b, sweepJob(), SweepOptions{})
		if !errors.Is(err, context.Canceled) || run.Status != StatusCancelled || !errors.Is(run.Err, context.Canceled) {
			t.Fatalf("%v: err %v, run %s %v", c.cause, err, run.Status, run.Err)
		}
		if got := ErrText(run.Err.Error()); !strings.Contains(got, c.want) {
			t.Errorf("%v: the run's error reads %q, want %q", c.cause, got, c.want)
		}
	}
}
