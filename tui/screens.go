package tui

import (
	"context"
	"encoding/json"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/robust"
	"sweepbench/tui/common"
)

// back leaves the sessions or bench screen for the one it was opened from.
func (m *Model) back() tea.Cmd {
	if m.run != nil {
		// A study computes: its screen.
		m.screen = screenRun
		m.layout()
		m.syncKeyContext()
		return nil
	}
	m.screen = m.prevScreen
	if m.screen == screenResults && m.ctx.Results == nil || m.screen == screenRun || m.screen == screenSessions || m.screen == screenBench {
		m.screen = screenSetup
	}
	m.layout()
	return m.focusSetup()
}

// showSession puts a saved session in the results panes. Without its
// dataset the crossover and combo panes say why their charts are missing.
func (m *Model) showSession(msg common.OpenedMsg) tea.Cmd {
	ss := msg.Session
	if msg.Study != nil {
		studiedWith(msg.Study, msg.Report.Robustness)
	}
	m.ctx.Study = msg.Study
	m.ctx.Note = ss.Note
	m.chartsWhy = ""
	if msg.Study == nil {
		why := "no dataset"
		if msg.Why != nil {
			why = msg.Why.Error()
		}
		m.chartsWhy = "charts unavailable: " + why
	}
	m.ctx.Backend, m.ctx.Device = ss.Backend, ""
	var err error
	cancelled := ss.Status == engine.StatusCancelled && (ss.Error == "" || common.ErrText(ss.Error) == common.CancelledByUser)
	switch {
	case cancelled:
		err = fmt.Errorf("session %d was %s: %w", ss.ID, common.CancelledByUser, context.Canceled)
	case ss.Status != engine.StatusComplete && ss.Error != "":
		err = fmt.Errorf("session %d is %s: %s", ss.ID, ss.Status, common.ErrText(ss.Error))
	case ss.Status != engine.StatusComplete:
		err = fmt.Errorf("session %d is %s", ss.ID, ss.Status)
	}
	m.setErr(nil)
	m.ctx.Warn, m.ctx.Info = "", ""
	m.ctx.Saved = fmt.Sprintf("session %d", ss.ID)
	// Another study on screen: the last one's table filter is not its
	// (issue 15, defect 3).
	m.metrics.ClearFilter()
	m.filterErr = ""
	cmd := m.showResults(msg.Report, ss.Precisions, err)
	m.setErr(nil) // the state of a saved session is not an error of now
	switch {
	case m.chartsWhy != "":
		m.ctx.Warn = m.chartsWhy
	case cancelled:
		// A cancel the user asked for is a note, not a warning.
		m.ctx.Info = fmt.Sprintf("session %d: %s (R in Sessions resumes)", ss.ID, common.CancelledByUser)
	case err != nil:
		m.ctx.Warn = err.Error() + " (R in Sessions resumes)"
	}
	return cmd
}

// studiedWith gives s the blocks and the walk-forward of its saved
// robustness summary: a session keeps them only there (its columns hold
// the rest of its Spec), so that the form (e), a rerun (r) and a resume
// describe the study as it was run. A summary that does not parse leaves s
// as it is (the Parity pane says what is wrong with it).
func studiedWith(s *engine.Study, js json.RawMessage) {
	var sm robust.Summary
	if len(js) == 0 || json.Unmarshal(js, &sm) != nil || sm.Blocks <= 0 {
		return
	}
	s.Blocks, s.Spec.Blocks = sm.Blocks, sm.Blocks
	if sm.WF != nil {
		s.Spec.WF = sm.WF.Spec
	}
}
