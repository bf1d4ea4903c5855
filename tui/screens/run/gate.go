package run

import (
	"context"
	"fmt"

	"github.com/charmbracelet/bubbles/key"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// PlaceMsg is a queued study's place in the gate's queue (Config.Gate);
// Admitted once it computes.
type PlaceMsg struct {
	gen      int
	place    common.Place
	admitted bool
}

// placeLatest keeps only the latest place on ch (capacity 1): the gate
// never blocks on the screen.
func placeLatest(ch chan PlaceMsg, m PlaceMsg) {
	for {
		select {
		case ch <- m:
			return
		default:
		}
		select {
		case <-ch: // drop the older place
		default:
		}
	}
}

// gatedWork runs w once g admits s; the study's place is posted on places
// while it waits, and its progress goes to the gate too while it computes.
// A refusal is the outcome's error (nothing computed).
func gatedWork(g common.Gate, s *engine.Study, gen int, places chan PlaceMsg, w work) work {
	return func(ctx context.Context, progress chan<- engine.Progress, str *stream) outcome {
		turn, err := g.Admit(ctx, s, func(p common.Place) { placeLatest(places, PlaceMsg{gen: gen, place: p}) })
		if err != nil {
			return outcome{err: err}
		}
		defer turn.Done()
		placeLatest(places, PlaceMsg{gen: gen, admitted: true})
		// The lanes' events reach the gate and the screen alike; neither
		// blocks the engine (a full channel drops the event, as before).
		tee, stop, stopped := make(chan engine.Progress, cap(progress)), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			for {
				select {
				case p := <-tee:
					if p.Phase == phaseDataset { // a suite's next dataset: never dropped
						select {
						case progress <- p:
						case <-ctx.Done():
						}
						continue
					}
					turn.Progress(p)
					select {
					case progress <- p:
					default:
					}
				case <-stop:
					return
				}
			}
		}()
		out := w(ctx, tee, str)
		close(stop)
		<-stopped
		for len(tee) > 0 { // the last events, in order
			p := <-tee
			if p.Phase != phaseDataset {
				turn.Progress(p)
			}
			select {
			case progress <- p:
			default:
			}
		}
		return out
	}
}

// keepKey is the run screen's K (Config.Detachable): the study goes on
// computing when the connection ends.
var keepKey = key.NewBinding(key.WithKeys("K"), key.WithHelp("K", "keep computing if you disconnect"))

// Kept reports whether the user asked the running study to go on when the
// workbench ends (K, Config.Detachable).
func (m *Model) Kept() bool { return m.run != nil && m.keep }

// gateLines are the lines over the progress lanes: the study's place in
// the queue while it waits, and whether it is kept on a disconnect.
func (m *Model) gateLines() []string {
	if m.run == nil {
		return nil
	}
	t := m.ctx.Theme
	var lines []string
	if p := m.place; p != nil {
		eta := "ETA unknown until a study has finished on this backend"
		if p.ETA >= 0 {
			eta = "starts in about " + m.ctx.Duration(p.ETA)
		}
		lines = append(lines, t.Wrap(t.Warning.Render(fmt.Sprintf("queued: position %d of %d waiting (%d computing on this server)%s%s",
			p.Position, p.Waiting, p.Running, t.Sep, eta)), m.w)...)
	}
	if m.cfg.Detachable {
		s := "K: keep this study computing if you disconnect"
		if m.keep {
			s = "kept: this study computes on if you disconnect or quit; it is in your sessions when you return (K undoes)"
		}
		lines = append(lines, t.Subtle.Render(t.Truncate(s, m.w)))
	}
	return lines
}
