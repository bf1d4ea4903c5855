package tui

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	"sweepbench/tui/screens/results"
)

// The golden files (testdata/TestGolden/*) are the screens as a user at
// an 80x24, 120x40 or 160x48 terminal without colour sees them, on the issue's
// small real study (embedded BTC/USDT 1m, first 5,000 bars, hma 10:30:10 x
// hma3 12:36:12, reference backend). Timings and the device are masked, so
// they are the same on every machine. Refresh with: go test ./tui -run
// TestGolden -update, and review the diff.

func waitOutput(t *testing.T, tm *teatest.TestModel, what string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
		teatest.WithDuration(90*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// checkSize asserts the view fills exactly w x h cells.
func checkSize(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Fatalf("view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n != w {
			t.Fatalf("line %d is %d cells wide, want %d: %q", i, n, w, l)
		}
	}
}

func requireGolden(t *testing.T, name, view string, w, h int) {
	t.Run(name, func(t *testing.T) {
		checkSize(t, view, w, h)
		for i := 0; i < len(view); i++ {
			if view[i] >= 0x80 {
				t.Fatalf("non-ASCII byte %#x at %d in a plain view", view[i], i)
			}
		}
		golden.RequireEqual(t, []byte(view))
	})
}

func TestGolden(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {160, 48}} {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			// The setup screen once the dataset is loaded.
			tm := teatest.NewTestModel(t, newTestModel(smallFlags()), teatest.WithInitialTermSize(w, h))
			waitOutput(t, tm, "5,000 bars")
			tm.Send(keyMsg("ctrl+c")) // q would be typed into the focused range
			fm := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
			fm.quitting = false // look at it as it was before the quit
			requireGolden(t, "setup", fm.View(), w, h)

			// Run it and wait for the results.
			tm = teatest.NewTestModel(t, newTestModel(smallFlags()), teatest.WithInitialTermSize(w, h))
			waitOutput(t, tm, "5,000 bars")
			tm.Send(keyMsg("enter"))
			waitOutput(t, tm, "Metrics: 9 of 9")
			tm.Send(keyMsg("q"))
			fm = tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
			fm.quitting = false
			d := &driver{t: t, m: fm}
			d.settle()
			if fm.state.Results == nil || !fm.state.Results.Complete() {
				t.Fatal("the study did not complete")
			}
			requireGolden(t, "results", fm.View(), w, h)
			for _, name := range []string{"parity", "heatmap", "crossover", "combo", "robustness"} {
				d.key("tab")
				if w >= 120 && name != "crossover" && name != "robustness" {
					continue // every pane is on screen already
				}
				requireGolden(t, name, fm.View(), w, h)
			}
		})
	}
}

// TestGoldenRobustness: the Robustness pane at 80x24 and 120x40 on the
// small real study with 8 blocks and a rolling:4 walk-forward (tui
// --blocks 8 --wf rolling:4): its top (PBO, the logit histogram, the DSR)
// and its end (the folds, the stitched out-of-sample equity chart), and
// the heatmap with the plateau best marked. Every number whole at both
// sizes: the lines wrap, the pane scrolls.
func TestGoldenRobustness(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			tm := teatest.NewTestModel(t, newTestModel(robustFlags()), teatest.WithInitialTermSize(w, h))
			waitOutput(t, tm, "5,000 bars")
			tm.Send(keyMsg("enter"))
			waitOutput(t, tm, "Metrics: 9 of 9")
			tm.Send(keyMsg("q"))
			fm := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
			fm.quitting = false
			d := &driver{t: t, m: fm}
			d.settle()
			if fm.state.Results == nil || fm.state.Results.Robust == nil {
				t.Fatal("the study has no robustness section")
			}
			d.key("o")
			requireGolden(t, "robustness", fm.View(), w, h)
			d.key("G")
			requireGolden(t, "robustness-end", fm.View(), w, h)
			d.key("esc")
			fm.results.SetFocus(results.HeatmapPane)
			requireGolden(t, "heatmap", fm.View(), w, h)
		})
	}
}

// TestGoldenSessions: the sessions screen at 80x24 on a store seeded with
// three sessions (two complete, one cancelled), then a compare of session
// 2 (fee 0.1%) against session 1. Dates and the database path are masked.
func TestGoldenSessions(t *testing.T) {
	st := tempStore(t)
	seedStore(t, st)
	tm := teatest.NewTestModel(t, newModel(context.Background(), storeConfig(smallFlags(), st), termenv.Ascii, true, true),
		teatest.WithInitialTermSize(80, 24))
	waitOutput(t, tm, "5,000 bars")
	tm.Send(keyMsg("esc")) // out of the focused range: S is a key again
	tm.Send(keyMsg("S"))
	waitOutput(t, tm, "Sessions: 3")
	tm.Send(keyMsg("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
	fm.quitting = false
	requireGolden(t, "list", fm.View(), 80, 24)

	d := &driver{t: t, m: fm}
	d.key("down", "down", " ", "up", " ")
	requireGolden(t, "marked", fm.View(), 80, 24)
	d.key("c")
	requireGolden(t, "compare", fm.View(), 80, 24)
}

// TestGoldenBench: the bench screen at 80x24 after a ladder of fake rungs
// with fixed wall times (deterministic combos/s, speedups and parity).
func TestGoldenBench(t *testing.T) {
	cfg := Config{Registry: testRegistry(), Flags: smallFlags(), Rungs: fakeRungs, BenchRepeat: 1}
	tm := teatest.NewTestModel(t, newModel(context.Background(), cfg, termenv.Ascii, true, true), teatest.WithInitialTermSize(80, 24))
	waitOutput(t, tm, "5,000 bars")
	tm.Send(keyMsg("esc")) // out of the focused range: B is a key again
	tm.Send(keyMsg("B"))
	waitOutput(t, tm, "enter runs the ladder")
	tm.Send(keyMsg("enter"))
	waitOutput(t, tm, "method ladder, combos/s") // the final chart (the live one has "log scale" too)
	tm.Send(keyMsg("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
	fm.quitting = false
	requireGolden(t, "ladder", fm.View(), 80, 24)
	// Live: M0's row as it arrives (OnResult: no speedups or parity yet),
	// M1 running.
	m0 := fm.bench.Ladder().Results()[0]
	m0.SpeedupVsM0, m0.SpeedupVsM3, m0.Parity = 0, 0, nil
	fm.bench.Ladder().Start("btcusdt-1m, 5,000 bars", fakeRungs(), 1)
	fm.bench.Ladder().Progress("M0", "running")
	fm.bench.Ladder().Result(m0)
	fm.bench.Ladder().Progress("M0", "done")
	fm.bench.Ladder().Progress("M1", "running")
	requireGolden(t, "live", fm.View(), 80, 24)
}
