package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// TestCancelMidRun starts a sweep that cannot finish before esc (the slow
// backend computes a few chunks, then holds until cancelled, so a fast
// machine cannot finish it first), cancels it with esc through the real
// program loop, and checks the UI kept running and shows what completed,
// marked incomplete.
func TestCancelMidRun(t *testing.T) {
	m0 := newModel(context.Background(), Config{Registry: slowRegistry(), Flags: slowFlags()}, termenv.Ascii, true, true)
	tm := teatest.NewTestModel(t, m0, teatest.WithInitialTermSize(100, 30))
	waitOutput(t, tm, "5,000 bars, ") // the summary, not the list
	tm.Send(keyMsg("enter"))
	waitOutput(t, tm, "compute") // a lane past its first chunk
	tm.Send(keyMsg("esc"))
	waitOutput(t, tm, "cancelled")
	tm.Send(keyMsg("tab")) // the UI still answers
	waitOutput(t, tm, "[Parity]")
	tm.Send(keyMsg("q"))
	m := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
	r := m.state.Results
	if r == nil {
		t.Fatalf("no results after cancel (last error %q)", m.status.LastErr)
	}
	if r.Complete() {
		t.Fatal("a cancelled study reports complete")
	}
	if r.R64.Status != engine.StatusCancelled && (r.R32 == nil || r.R32.Status != engine.StatusCancelled) {
		t.Fatalf("no run marked cancelled: %s", r.R64.Status)
	}
	// A cancel the user asked for is a note, not an error.
	if m.status.LastErr != "" || !strings.Contains(m.status.Info, "cancelled: showing the") {
		t.Fatalf("status line: error %q, info %q", m.status.LastErr, m.status.Info)
	}
}

// TestCancelHeld does the same on the synchronous driver, pressing esc
// between two progress updates.
func TestCancelHeld(t *testing.T) {
	m := newModel(context.Background(), Config{Registry: slowRegistry(), Flags: slowFlags()}, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.hold = true
	d.key("enter")
	if d.m.screen != common.RunScreen || d.pending == nil {
		t.Fatalf("screen %d: the run did not start (last error %q)", d.m.screen, d.m.status.LastErr)
	}
	if v := d.m.View(); !strings.Contains(v, "Sweeping hma 2:100:2 x hma3 6:300:6") || !strings.Contains(v, "esc cancels") {
		t.Fatalf("run screen:\n%s", v)
	}
	d.key("esc")
	if !strings.Contains(d.m.View(), "cancelling") {
		t.Fatal("esc did not show the cancel")
	}
	d.drain()
	if d.m.screen == common.RunScreen {
		t.Fatal("still on the run screen after the study ended")
	}
	if d.m.state.Results != nil && d.m.state.Results.Complete() {
		t.Fatal("a cancelled study reports complete")
	}
}
