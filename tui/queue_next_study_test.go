package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/reference"
	"sweepbench/tui/common"
)

// TestQueueNextStudy (issue 15, defect 5): while a study computes, e opens
// the form and enter queues its study (said, the run screen back); esc
// from the form comes back to the run too; the queued study starts when
// the running one ends, and its results follow.
func TestQueueNextStudy(t *testing.T) {
	release := make(chan struct{})
	f := slowFlags()
	f.Backend = "gated"
	cfg := Config{Registry: testRegistry(), Flags: f}
	cfg.Registry.Register(gated{reference.New(), release})
	m := newModel(t.Context(), cfg, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	d.hold = true
	d.key("enter")
	first := m.run.Started()
	if m.screen != common.RunScreen || !m.run.Running() {
		t.Fatalf("screen %d: the run did not start (last error %q)", m.screen, m.status.LastErr)
	}
	d.key("e")
	if m.screen != common.SetupScreen || m.run.Started() != first {
		t.Fatalf("e during the run: screen %d, running %v", m.screen, m.run.Started() == first)
	}
	d.key("esc")
	if m.screen != common.RunScreen || m.run.Queued() != nil {
		t.Fatalf("esc from the form during the run: screen %d, queued %v", m.screen, m.run.Queued() != nil)
	}
	d.key("e", "enter")
	if m.screen != common.RunScreen || m.run.Queued() == nil || m.run.Started() != first || !strings.Contains(m.status.Info, "queued:") {
		t.Fatalf("enter in the form during the run: screen %d, queued %v, info %q", m.screen, m.run.Queued() != nil, m.status.Info)
	}
	gen := m.run.Started()
	close(release)
	d.drain() // the first ends, the queued one starts and (released) ends too
	if m.run.Started() != gen+1 || m.run.Running() || m.run.Queued() != nil || m.screen != common.ResultsScreen || m.state.Results == nil || !m.state.Results.Complete() {
		t.Fatalf("after both studies: runs started %d (want 1 more), running %v, queued %v, screen %d", m.run.Started()-gen, m.run.Running(), m.run.Queued() != nil, m.screen)
	}
}
