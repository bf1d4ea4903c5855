package engine

import (
	"context"
	"errors"
	"strings"
)

// CancelledByUser is how a cancel the user asked for reads in reports.
const CancelledByUser = "cancelled by the user"

// ErrText is the text of a live or stored error for a report: a cancel
// (context.Canceled, or its stored text "context canceled") reads
// "cancelled by the user", never Go's wording.
func ErrText(s string) string {
	if s == context.Canceled.Error() {
		return CancelledByUser
	}
	return strings.ReplaceAll(s, ": "+context.Canceled.Error(), ": "+CancelledByUser)
}

// Interrupted is the cause (context.Cause) a study's context is cancelled
// with when the process is told to stop by something other than its user:
// SIGHUP (the terminal or the SSH connection went away) or SIGTERM (a
// shutdown, a scheduler's kill). The sessions store records such a study
// as interrupted, which `sessions resume` completes, rather than cancelled,
// the user's own choice (Ctrl-C, esc). For errors.Is it is
// context.Canceled, so every path that handles a cancellation handles it.
type Interrupted struct {
	Signal string // "hangup", "terminated"
}

func (e *Interrupted) Error() string { return "interrupted (" + e.Signal + ")" }

// Is makes errors.Is(err, context.Canceled) true.
func (e *Interrupted) Is(target error) bool { return target == context.Canceled }

// Shown is the status run reads as in reports and results files:
// interrupted for a run cancelled by an *Interrupted (its Err), as the
// sessions store records it (`sessions resume` completes it), else Status.
func (run *Run) Shown() Status {
	var in *Interrupted
	if run.Status == StatusCancelled && errors.As(run.Err, &in) {
		return StatusInterrupted
	}
	return run.Status
}

// cancelCause is why ctx was cancelled, for a run's Err: its cause when
// that is a cancellation of its own (an *Interrupted: a hang-up, SIGTERM),
// else ctx.Err(). errors.Is(err, context.Canceled) holds either way.
func cancelCause(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil && c != ctx.Err() && errors.Is(c, context.Canceled) {
		return c
	}
	return ctx.Err()
}
