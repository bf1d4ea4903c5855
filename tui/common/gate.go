package common

import (
	"context"
	"time"

	"sweepbench/engine"
)

// Gate admits the workbench's studies when it is one of several front ends
// sharing one machine's backends (sweepbench serve: one GPU, many users).
// The run screen asks it before each study (and each resume) computes and
// shows the study's place while it waits. Nil in a Config: every study
// starts at once.
type Gate interface {
	// Admit blocks until s may compute or ctx ends (then it returns
	// ctx's error and s leaves the queue). While s waits, place is called
	// with its place whenever that changes (and about once a second, for
	// the ETA); place must not block. A study the gate refuses (a limit)
	// returns an error at once. The Turn of an admitted study hears its
	// progress and must be ended (Done) once the study has ended: the next
	// study starts then.
	Admit(ctx context.Context, s *engine.Study, place func(Place)) (Turn, error)
}

// Turn is an admitted study's time on the gate's backends.
type Turn interface {
	// Progress is the study's latest event of a lane (the gate estimates
	// the waiting studies' ETA from it). It must not block.
	Progress(engine.Progress)
	// Done ends the turn.
	Done()
}

// Place is a waiting study's place in a Gate's queue.
type Place struct {
	Position int // 1 = the next to start
	Waiting  int // studies waiting, every user's
	Running  int // studies computing now, every user's
	// ETA is the estimated wait until the study starts; negative when no
	// estimate can be made yet (no study has finished on that backend).
	ETA time.Duration
}
