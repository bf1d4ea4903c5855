package run

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/preflight"
	"sweepbench/tui/common"
)

// TestCalibrationOffTheUIGoroutine: a study the slow rates say could take
// long is calibrated in the command Start returns, not in Start (which
// returns while the calibration is held); the screen says it is checking;
// esc cancels the calibration (its context ends) and its late answer
// starts nothing. Checked again, a calibration of 15 minutes asks, and y
// starts the study.
func TestCalibrationOffTheUIGoroutine(t *testing.T) {
	g := &fakeGate{admit: make(chan struct{}), asked: make(chan *engine.Study, 1), turn: &fakeTurn{}}
	m, s := newGated(t, g, false)
	entered, release := make(chan struct{}, 2), make(chan time.Duration, 2)
	cancelled := make(chan bool, 2)
	m.cfg.Preflight = preflight.PreflightOptions{Workers: 2,
		Rates: preflight.Rates{Fast: 1e-9, Slow: 1e9, SlowSeries: 1e9}, // always calibrated
		Calibrate: func(ctx context.Context, s *engine.Study) (preflight.Estimate, error) {
			entered <- struct{}{}
			select {
			case <-ctx.Done():
				cancelled <- true
				return preflight.Estimate{}, ctx.Err()
			case d := <-release:
				cancelled <- false
				return preflight.Estimate{Combos: s.Grid.Len(), Computed: s.Grid.Len(), Series: 4, Tiles: 1, Workers: 2, Total: d}, nil
			}
		}}
	cmd := m.Start(s) // returns with the calibration not even begun
	if cmd == nil || !m.Checking() || m.Asking() || m.Running() || len(entered) != 0 {
		t.Fatalf("Start: cmd %v, checking %v, asking %v, running %v, calibrations %d", cmd != nil, m.Checking(), m.Asking(), m.Running(), len(entered))
	}
	if v := m.View(); !strings.Contains(v, "checking 4 combos in 2 precisions: timing it on the CPU reference") {
		t.Fatalf("the screen does not say it checks:\n%s", v)
	}
	msgs := make(chan tea.Msg, 1)
	go func() { msgs <- runBatch(cmd) }()
	<-entered
	m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if m.Checking() || !<-cancelled {
		t.Fatal("esc did not cancel the calibration")
	}
	if msg := <-msgs; msg == nil {
		t.Fatal("the cancelled calibration sent nothing")
	} else if m.Update(msg); m.Checking() || m.Running() || m.Started() != 0 {
		t.Fatalf("the cancelled calibration's answer: checking %v, running %v", m.Checking(), m.Running())
	}

	cmd = m.Start(s)
	release <- 15 * time.Minute
	msg := runBatch(cmd)
	<-entered
	if <-cancelled {
		t.Fatal("the second calibration was cancelled")
	}
	m.Update(msg)
	want := "4 combos in 2 precisions on the CPU reference would take ~15m0s (4 combos a precision, 4 series, 2 cores): y runs it anyway"
	if !m.Asking() || !strings.Contains(strings.Join(strings.Fields(m.View()), " "), want) {
		t.Fatalf("asking %v; want %q:\n%s", m.Asking(), want, m.View())
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if !m.Running() || m.Checking() {
		t.Fatalf("y: running %v, checking %v", m.Running(), m.Checking())
	}
	<-g.asked
	if v := m.View(); !strings.Contains(v, "estimate ~15m0s (4 combos a precision, 4 series, 2 cores)") {
		t.Errorf("the running study does not say its estimate:\n%s", v)
	}
	m.Stop()
}

// runBatch runs cmd (a batch: each of its commands) and returns the run
// screen's message among their answers.
func runBatch(cmd tea.Cmd) tea.Msg {
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			if c == nil {
				continue
			}
			if sm, ok := c().(common.ScreenMsg); ok && sm.ID == common.RunScreen {
				return sm.Msg
			}
		}
		return nil
	}
	if sm, ok := msg.(common.ScreenMsg); ok {
		return sm.Msg
	}
	return nil
}
