package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/tui/common"
	"sweepbench/tui/internal/tuitest"
	"sweepbench/tui/keys"
	"sweepbench/tui/theme"
)

// fakeGate holds a study at a place until admit is closed, or refuses it.
type fakeGate struct {
	place  common.Place
	admit  chan struct{}
	refuse error
	asked  chan *engine.Study
	turn   *fakeTurn
}

type fakeTurn struct{ events, done int }

func (f *fakeTurn) Progress(engine.Progress) { f.events++ }
func (f *fakeTurn) Done()                    { f.done++ }

func (g *fakeGate) Admit(ctx context.Context, s *engine.Study, place func(common.Place)) (common.Turn, error) {
	g.asked <- s
	if g.refuse != nil {
		return nil, g.refuse
	}
	place(g.place)
	select {
	case <-g.admit:
		return g.turn, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func newGated(t *testing.T, g common.Gate, detachable bool) (*Model, *engine.Study) {
	t.Helper()
	reg := &engine.Registry{}
	reg.Register(reference.New())
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.Backend = "embedded:btcusdt-1m", 2000, "10:20:10", "12:24:12", "reference"
	s, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true), Keys: keys.Default(), Registry: reg, Deterministic: true}
	m := New(ctx, common.NewRunState(), &tuitest.Host{ID: common.RunScreen}, t.Context(), Config{Gate: g, Detachable: detachable})
	m.SetSize(100, 30)
	return m, s
}

// TestGateQueuedPlace: a study the gate holds shows its place and ETA over
// the lanes; K keeps it (the line says so, Kept reports it) and K again
// undoes it; once admitted the place goes and the study computes to its
// report.
func TestGateQueuedPlace(t *testing.T) {
	g := &fakeGate{place: common.Place{Position: 2, Waiting: 3, Running: 1, ETA: 90 * time.Second},
		admit: make(chan struct{}), asked: make(chan *engine.Study, 1), turn: &fakeTurn{}}
	m, s := newGated(t, g, true)
	m.Start(s)
	if got := <-g.asked; got != s {
		t.Fatal("the gate was asked about another study")
	}
	msg := m.run.next()()
	if p, ok := msg.(PlaceMsg); !ok || p.admitted || p.place != g.place {
		t.Fatalf("first message %#v, want the place", msg)
	}
	m.Update(msg)
	v := m.View()
	for _, want := range []string{"queued: position 2 of 3 waiting (1 computing on this server) | starts in about -",
		"K: keep this study computing if you disconnect"} {
		if !strings.Contains(v, want) {
			t.Errorf("run screen lacks %q:\n%s", want, v)
		}
	}
	if n := strings.Count(v, "\n") + 1; n != 30 {
		t.Errorf("the screen is %d lines, want 30", n)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("K")})
	if !m.Kept() || !strings.Contains(m.View(), "kept: this study computes on if you disconnect or quit") {
		t.Fatalf("K: kept %v:\n%s", m.Kept(), m.View())
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("K")})
	if m.Kept() {
		t.Fatal("K again: still kept")
	}
	close(g.admit)
	for {
		msg := m.run.next()()
		if d, ok := msg.(doneMsg); ok {
			if d.err != nil || d.rep == nil || len(d.rep.Runs) != 2 {
				t.Fatalf("the admitted study: err %v, report %v", d.err, d.rep != nil)
			}
			if g.turn.done != 1 || g.turn.events == 0 {
				t.Fatalf("the gate's turn: %d progress events, ended %d times; want some, once", g.turn.events, g.turn.done)
			}
			break
		}
		m.Update(msg)
		if p, ok := msg.(PlaceMsg); ok && (!p.admitted || m.place != nil || strings.Contains(m.View(), "queued:")) {
			t.Fatalf("admitted: %#v, place %v", p, m.place)
		}
	}
}

// TestGateRefusal: a study the gate refuses computes nothing; its error is
// the run's (the form says it), and without Detachable there is no K.
func TestGateRefusal(t *testing.T) {
	refusal := errors.New("server limit: too many")
	g := &fakeGate{refuse: refusal, asked: make(chan *engine.Study, 1)}
	m, s := newGated(t, g, false)
	m.Start(s)
	<-g.asked
	if strings.Contains(m.View(), "K:") {
		t.Error("K offered without Detachable")
	}
	msg := m.run.next()()
	d, ok := msg.(doneMsg)
	if !ok || !errors.Is(d.err, refusal) || d.rep != nil {
		t.Fatalf("refused study: %#v, want done with the refusal and no report", msg)
	}
	m.Update(msg)
	if m.Running() || m.host.Status().LastErr != refusal.Error() {
		t.Fatalf("after the refusal: running %v, status %q", m.Running(), m.host.Status().LastErr)
	}
}
