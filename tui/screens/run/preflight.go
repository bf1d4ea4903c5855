package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/preflight"
	"sweepbench/tui/common"
)

// Before a study starts the screen checks it as `sweepbench run` does,
// through preflight.PreflightStudy (one rule for both front ends): a study
// that cannot fit is refused at once with run's message; one the CPU
// reference would take over preflight.ConfirmTime (from arithmetic alone, or
// the calibration), or whose memory forecast is over half the memory
// available, is said on this screen with its estimate and starts only on
// y (run's --yes); the estimate of any study over
// preflight.ShowEstimateOver is said over its lanes. The arithmetic is done
// at once; a calibration, when the study needs one, runs in a command off
// the UI goroutine (esc cancels it), its answer a preflightMsg.

// check is a study the preflight holds: while its calibration runs
// (cancel set), then while it waits for the user's y (ask set).
type check struct {
	gen      int
	s        *engine.Study
	datasets []string           // a suite's datasets; nil for one study
	cancel   context.CancelFunc // the calibration's, while it runs
	ask      string             // the question, once asked
	p        preflight.Preflight
}

// preflightMsg is the answer of a check's calibration.
type preflightMsg struct {
	gen int
	p   preflight.Preflight
	err error
}

// errProbe is the calibration of the check done at once: PreflightStudy
// calling it means the study needs the real one, off the UI goroutine.
var errProbe = errors.New("calibrated off the UI goroutine")

// Checking reports whether a study waits for its check: its calibration
// running, or the user's answer.
func (m *Model) Checking() bool { return m.check != nil }

// Asking reports whether a study waits for the user's y.
func (m *Model) Asking() bool { return m.check != nil && m.check.ask != "" }

// Takes implements common.Taker: the question takes every key (y starts
// the study, any other leaves it), so that q or S answer it too.
func (m *Model) Takes(tea.KeyMsg) bool { return m.Asking() }

// preflight checks s (datasets: a suite of it, else nil) and starts it
// when nothing is to be asked (begin); the question, or the calibration
// that comes first, holds it in m.check.
func (m *Model) preflight(s *engine.Study, datasets []string) tea.Cmd {
	m.dropCheck()
	m.checkGen++
	c := &check{gen: m.checkGen, s: s, datasets: datasets}
	opt := m.cfg.Preflight
	opt.Discard, opt.Yes = common.PagedGrid(s.Grid), false
	calibrate := opt.Calibrate
	probed := false
	opt.Calibrate = func(context.Context, *engine.Study) (preflight.Estimate, error) {
		probed = true
		return preflight.Estimate{}, errProbe
	}
	p, err := preflight.PreflightStudy(m.parent, s, opt)
	if !probed {
		return m.checked(c, p, err)
	}
	// The calibration: in a command, cancelled by esc or another study.
	ctx, cancel := context.WithCancel(m.parent)
	c.cancel = cancel
	m.check = c
	opt.Calibrate = calibrate
	m.host.Do(common.ErrMsg{})
	run := common.Guard(func() tea.Msg {
		p, err := preflight.PreflightStudy(ctx, s, opt)
		return preflightMsg{gen: c.gen, p: p, err: err}
	}, func(err error) tea.Msg { return preflightMsg{gen: c.gen, err: err} })
	return tea.Batch(common.Tag(common.RunScreen, run), m.host.Do(common.ShowMsg{ID: common.RunScreen}))
}

// preflighted takes a check's calibrated answer.
func (m *Model) preflighted(msg preflightMsg) tea.Cmd {
	c := m.check
	if c == nil || c.gen != msg.gen || c.cancel == nil {
		return nil // dropped (esc) or replaced meanwhile
	}
	c.cancel()
	c.cancel = nil
	return m.checked(c, msg.p, msg.err)
}

// checked acts on c's preflight: the question, the refusal, or the start.
func (m *Model) checked(c *check, p preflight.Preflight, err error) tea.Cmd {
	m.check = nil
	var ce *preflight.ConfirmError
	switch {
	case errors.As(err, &ce):
		c.p, c.ask = p, question(ce, len(c.datasets))
		m.check = c
		m.host.Do(common.ErrMsg{})
		return m.host.Do(common.ShowMsg{ID: common.RunScreen})
	case err != nil:
		m.host.Do(common.ErrMsg{Err: err}) // run's refusal, word for word
		if m.run == nil && m.host.Screen() == common.RunScreen {
			return m.host.Do(common.FormMsg{})
		}
		return nil
	}
	return m.begin(c.s, c.datasets, p)
}

// answer is the key pressed while m.check holds a study: y to a question
// starts it; esc, or any key but y to a question, leaves it (back to the
// form when no study computes).
func (m *Model) answer(msg tea.KeyMsg) (tea.Cmd, bool) {
	c := m.check
	switch {
	case c.ask != "" && key.Matches(msg, m.ctx.Keys.Confirm):
		m.check = nil
		return m.begin(c.s, c.datasets, c.p), true
	case c.ask != "" || key.Matches(msg, m.keys.Back):
		m.dropCheck()
		m.host.Do(common.InfoMsg{Text: "not started: " + c.s.Size()})
		if m.run == nil {
			return m.host.Do(common.FormMsg{}), true
		}
		return nil, true
	}
	return nil, false
}

// dropCheck forgets the study the preflight holds, its calibration
// cancelled.
func (m *Model) dropCheck() {
	if c := m.check; c != nil && c.cancel != nil {
		c.cancel()
	}
	m.check = nil
}

// question is the y/n question of ce (n datasets: a suite of them), in
// run's words with y for --yes.
func question(ce *preflight.ConfirmError, n int) string {
	var why []string
	if ce.Long {
		why = append(why, "on the CPU reference would take "+ce.Preflight.Describe())
	}
	if ce.Heavy {
		why = append(why, ce.Memory())
	}
	each := ""
	if n > 1 {
		each = fmt.Sprintf(" (on each of %d datasets)", n)
	}
	instead := "a GPU backend or a coarser grid"
	if ce.Precisions > 1 {
		instead = "a GPU backend, a coarser grid or one precision"
	}
	return fmt.Sprintf("%s%s %s: y runs it anyway; any other key leaves it (%s is quicker)",
		ce.Size, each, strings.Join(why, " and "), instead)
}

// said is the estimate said over a study's lanes (p.Show), "" none.
func said(p preflight.Preflight, datasets []string) string {
	if !p.Show() {
		return ""
	}
	s := "estimate " + p.Describe()
	if len(datasets) > 1 {
		s += fmt.Sprintf(", each of the %d datasets (the first's)", len(datasets))
	}
	return s
}

// checkLines are the lines of the check on the run screen: the
// calibration running, or the question.
func (m *Model) checkLines() []string {
	c := m.check
	if c == nil {
		return nil
	}
	t := m.ctx.Theme
	if c.ask != "" {
		return t.Wrap(t.Warning.Render(c.ask), m.w)
	}
	return t.Wrap(t.Subtle.Render(fmt.Sprintf("checking %s: timing it on the CPU reference%s (esc cancels)", c.s.Size(), t.Ellipsis)), m.w)
}
