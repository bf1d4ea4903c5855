package bench

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	enginebench "sweepbench/engine/bench"
)

// The ladder's answers, tagged for the bench screen (common.Tag).
type (
	// progressMsg is a rung's state, or its row as soon as it is timed
	// (status "timed").
	progressMsg struct {
		gen        int
		id, status string
		res        *enginebench.RungResult
	}
	doneMsg struct {
		gen int
		res []enginebench.RungResult
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

func startRunner(parent context.Context, gen int, job *engine.Job, rungs []enginebench.Rung, repeat int) *runner {
	ctx, cancel := context.WithCancel(parent)
	b := &runner{gen: gen, cancel: cancel, events: make(chan progressMsg, 64), done: make(chan doneMsg, 1),
		finished: make(chan struct{})}
	go func() {
		var res []enginebench.RungResult
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
		res, err = enginebench.RunLadder(ctx, job, rungs, enginebench.BenchOptions{Repeat: repeat,
			Progress: func(id, status string) { send(progressMsg{gen: gen, id: id, status: status}) },
			OnResult: func(r enginebench.RungResult) { send(progressMsg{gen: gen, id: r.ID, status: "timed", res: &r}) },
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
