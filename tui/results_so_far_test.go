package tui

import (
	"context"
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// TestResultsSoFar (issue 15, defect 5): while a sweep computes, enter on
// the run screen opens the results screen on the combos streamed so far
// (a snapshot of what the study's sink received), the study computing on
// behind it; its end replaces the snapshot with the whole report.
func TestResultsSoFar(t *testing.T) {
	m := newModel(context.Background(), Config{Registry: slowRegistry(), Flags: slowFlags()}, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	d.hold = true
	d.key("enter")
	if m.screen != common.RunScreen || !m.run.Running() {
		t.Fatalf("screen %d: the run did not start (last error %q)", m.screen, m.status.LastErr)
	}
	if !strings.Contains(m.View(), "results so far") {
		t.Errorf("the run screen does not offer the results so far:\n%s", m.View())
	}
	// The slow backend computes two chunks of at most 16 combos a lane, then
	// holds until cancelled: enter opens them once they have streamed.
	waitFor(t, "the first chunks", func() bool {
		d.key("enter")
		return m.screen == common.ResultsScreen
	})
	r := m.state.Results
	if r == nil || r.R64 == nil || r.Complete() {
		t.Fatalf("the results so far: %+v", r)
	}
	n := len(r.R64.Results)
	if n == 0 || n > 32 {
		t.Fatalf("the snapshot holds %d fp64 combos, want what two chunks of at most 16 hold", n)
	}
	for i := 1; i < n; i++ {
		if r.R64.Results[i].Index <= r.R64.Results[i-1].Index {
			t.Fatalf("the snapshot's combos are not in grid order at %d", i)
		}
	}
	if !m.run.Running() || !strings.Contains(m.status.Info, "the results so far") || m.status.LastErr != "" {
		t.Fatalf("running %v, info %q, last error %q", m.run.Running(), m.status.Info, m.status.LastErr)
	}
	v := m.View()
	if h := strings.SplitN(v, "\n", 2)[0]; !strings.Contains(h, "Run ") || !strings.Contains(h, "%") {
		t.Errorf("header %q: want the Run tab with the study's progress", h)
	}
	if title := m.results.Metrics().Title(); !strings.Contains(title, "of 2,500") || !strings.Contains(title, "still computing") {
		t.Errorf("metrics title %q: want the combos so far of the grid's 2,500, still computing", title)
	}
	if sum := strings.Join(m.results.Parity().Summary(), " "); !strings.Contains(sum, "computed once both lanes end") ||
		strings.Contains(sum, "never ran") {
		t.Errorf("the parity pane of the results so far: %q", sum)
	}
	// The panes work on it: the selected combo's detail is computed.
	d.settle()
	if in := m.state.Inspect; in == nil || in.Err != nil || in.D64 == nil {
		t.Fatalf("the selected combo of the snapshot: %+v", in)
	}
	// Back to the run (esc: the form; esc there: the run), cancel it: the
	// whole report (what completed) replaces the snapshot.
	d.key("esc", "esc")
	if m.screen != common.RunScreen {
		t.Fatalf("esc, esc from the results so far: screen %d, want the run", m.screen)
	}
	d.key("esc")
	d.drain()
	if m.run.Running() || m.screen != common.ResultsScreen || m.state.Results == r ||
		!errors.Is(m.state.Results.Err, context.Canceled) {
		t.Fatalf("after the cancel: running %v, screen %d, err %v", m.run.Running(), m.screen, m.state.Results.Err)
	}
	if got := m.state.Results.R64; got == nil || len(got.Results) < n || got.Status != engine.StatusCancelled {
		t.Fatalf("the final report holds fewer combos than the snapshot")
	}
}
