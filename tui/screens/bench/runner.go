package bench

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
)

// The ladder's answers, tagged for the bench screen (common.Tag).
type (
	// progressMsg is a rung's state, or its row as soon as it is timed
	// (status "timed").
	progressMsg struct {
		gen        int
		id, status string
		res        *engine.RungResult
	}
	doneMsg struct {
		gen int
		res []engine.RungResult
		err error
	}
)

// runner is one RunLadder in its goroutine.
type runner struct {
	gen      int
	cancel   context.CancelFunc
	events   chan progressMsg
	done     chan doneMsg
	finished chan struct{}
}

func startRunner(parent context.Context, gen int, job *engine.Job, rungs []engine.Rung, repeat int) *runner {
	ctx, cancel := context.WithCancel(parent)
	b := &runner{gen: gen, cancel: cancel, events: make(chan progressMsg, 64), done: make(chan doneMsg, 1),
		finished: make(chan struct{})}
	go func() {
		var res []engine.RungResult
		var err error
		defer close(b.finished)
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("internal error in the bench: %v", x)
			}
			b.done <- doneMsg{gen, res, err}
		}()
		send := func(e progressMsg) {
			select {
			case b.events <- e:
			case <-ctx.Done():
			}
		}
		res, err = engine.RunLadder(ctx, job, rungs, engine.BenchOptions{Repeat: repeat,
			Progress: func(id, status string) { send(progressMsg{gen: gen, id: id, status: status}) },
			OnResult: func(r engine.RungResult) { send(progressMsg{gen: gen, id: r.ID, status: "timed", res: &r}) },
		})
	}()
	return b
}

// next waits for the next rung event or the end.
func (b *runner) next() tea.Cmd {
	return func() tea.Msg {
		select {
		case e := <-b.events:
			return e
		case d := <-b.done:
			return d
		}
	}
}
