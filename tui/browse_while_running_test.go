package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

// gated is the reference backend whose lanes, after their first chunk,
// wait for release (or a cancel): a study that is still computing while a
// test acts, and that ends once released.
type gated struct {
	engine.Backend
	release chan struct{}
}

func (gated) Name() string { return "gated" }

func (g gated) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	k, err := g.Backend.Prepare(ctx, job)
	if err != nil {
		return nil, err
	}
	return &gatedKernel{Kernel: k, release: g.release}, nil
}

type gatedKernel struct {
	engine.Kernel
	release chan struct{}
}

func (k *gatedKernel) ChunkSize() int { return min(k.Kernel.ChunkSize(), 16) }

func (k *gatedKernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	if first > 0 {
		select {
		case <-k.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return k.Kernel.Compute(ctx, lane, first, out)
}

// TestBrowseWhileRunning (issue 15, defect 5): while a study computes, S
// opens the sessions browser and B the bench screen, the study going on
// (the header's Run tab says how far); what would compete with it (open,
// resume, remove a session; run the ladder) is refused with the reason;
// esc comes back to the run screen; a tab pressed there is not kept for
// later. When the study ends while the user browses, the screen in use
// stays and esc shows the results.
func TestBrowseWhileRunning(t *testing.T) {
	st := tempStore(t)
	seedStore(t, st)
	release := make(chan struct{})
	f := slowFlags()
	f.Backend = "gated"
	cfg := storeConfig(f, st)
	cfg.Registry = testRegistry()
	cfg.Registry.Register(gated{reference.New(), release})
	m := newModel(t.Context(), cfg, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	d.hold = true
	d.key("enter")
	if m.screen != common.RunScreen || d.pending == nil {
		t.Fatalf("screen %d: the run did not start (last error %q)", m.screen, m.status.LastErr)
	}
	d.key("tab") // nothing on the run screen, nor later
	d.key("S")
	if m.screen != common.SessionsScreen || !m.run.Running() {
		t.Fatalf("S during the run: screen %d, running %v", m.screen, m.run.Running())
	}
	if h := strings.SplitN(m.View(), "\n", 2)[0]; !strings.Contains(h, "Run ") || !strings.Contains(h, "%") {
		t.Errorf("header %q: want the Run tab with the study's progress", h)
	}
	d.key("enter")
	if !strings.Contains(m.status.LastErr, "a study is computing") || m.screen != common.SessionsScreen {
		t.Fatalf("opening a session during the run: screen %d, last error %q", m.screen, m.status.LastErr)
	}
	d.key("esc")
	if m.screen != common.RunScreen {
		t.Fatalf("esc from the sessions during the run: screen %d, want the run", m.screen)
	}
	d.key("B", "enter")
	if m.screen != common.BenchScreen || m.bench.Running() || !strings.Contains(m.status.LastErr, "a study is computing") {
		t.Fatalf("the ladder during the run: screen %d, bench running %v, last error %q", m.screen, m.bench.Running(), m.status.LastErr)
	}
	d.key("S")
	close(release)
	d.drain() // the study ends while the sessions are on screen
	if m.run.Running() || m.screen != common.SessionsScreen || !strings.Contains(m.status.Info, "the study finished") {
		t.Fatalf("after the study: running %v, screen %d, info %q", m.run.Running(), m.screen, m.status.Info)
	}
	// The list knows the study ended: its session complete, not running.
	if c := m.sessions.List().Current(); c == nil || m.sessions.List().Len() != 4 || strings.Contains(m.sessions.List().View(), "running") {
		t.Fatalf("the sessions list after the study:\n%s", m.sessions.List().View())
	}
	d.key("esc")
	if m.screen != common.ResultsScreen || m.state.Results == nil || !m.state.Results.Complete() {
		t.Fatalf("esc after the study: screen %d, results %v", m.screen, m.state.Results != nil)
	}
	if m.results.Focus() != results.MetricsPane {
		t.Errorf("focus %s: the tab pressed during the run changed the pane", results.PaneNames[m.results.Focus()])
	}
}
