package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/robust"
	"sweepbench/tui/common"
)

// The answers of the screen's commands, tagged for it (common.Tag); gen
// is the selection they answer.
type (
	inspectTickMsg struct{ gen int }
	inspectMsg     struct {
		gen int
		ins *common.Inspection
	}
)

// Show puts the report of a study that ended in the panes (the root puts
// the screen on display); err says why it is not complete (a cancel, a
// failure), if it is not; asked are the precisions the study asked for;
// session is the session it was saved as (0: not saved), which paged
// results read their pages from.
func (m *Model) Show(rep *engine.Report, asked []engine.Precision, err error, session int64) tea.Cmd {
	m.chartsWhy = ""
	m.leaveAll()
	cmd := m.show(rep, asked, err, session)
	spec := ""
	if s := m.state.Study; s != nil && session != 0 {
		spec = s.Spec.Suite // its siblings are read from the store
	}
	cmd = tea.Batch(cmd, m.setSuite(spec))
	m.attach()
	return cmd
}

// show puts rep in the panes; paged results open their session's pagers
// (then read the pages the panes need).
func (m *Model) show(rep *engine.Report, asked []engine.Precision, err error, session int64) tea.Cmd {
	cancelled := errors.Is(err, context.Canceled)
	for _, r := range rep.Runs {
		if r.Device != "" {
			m.state.Device = r.Device
		}
	}
	m.state.Results = common.NewResults(rep, err)
	m.state.Results.Asked = asked
	m.state.Results.Session = session // the export key names its files after it
	var open tea.Cmd
	if m.state.Results.Paged() {
		open = m.openPagers(m.state.Results)
	}
	m.picking = -1
	switch {
	case cancelled:
		// A cancel the user asked for is not an error: a note says what
		// the panes hold.
		m.host.Do(common.ErrMsg{})
		m.host.Do(common.InfoMsg{Text: strings.TrimSuffix("cancelled: showing "+completed(m.state.Results)+" that completed; "+m.host.Status().Info, "; ")})
	default:
		m.host.Do(common.ErrMsg{Err: err})
	}
	if m.state.Results.R64 == nil {
		m.state.Prec = engine.FP32
	} else {
		m.state.Prec = engine.FP64
	}
	// A study with an objective of its own starts the table and the
	// heatmap on its metric.
	if o := m.state.Results.Objective; o != (engine.Objective{}) {
		m.state.Metric = o.Name()
	}
	if common.IsParityColumn(m.state.Metric) && !m.state.Results.HasParityRows() {
		m.state.Metric = m.state.Results.Objective.Name() // paged results have no parity column
	}
	m.metrics.Reload()
	m.parity.Reload()
	m.robust.Reload()
	m.SetFocus(m.focus)
	// Start on the worst combo of the parity report (the crossover pane
	// then shows its worst flip), else on the best combo.
	sel := m.parity.Worst()
	if sel < 0 {
		sel = m.state.Results.Best(m.state.Prec)
	}
	m.state.Inspect = nil
	m.cross.Reload()
	m.detail.Reload()
	m.heat.Reload()
	if sel < 0 {
		return open
	}
	return tea.Batch(open, m.selectCombo(sel))
}

// ShowSession puts a saved session in the panes (msg.Study nil: its
// dataset could not be loaded again, and the crossover and combo panes say
// why their charts are missing).
func (m *Model) ShowSession(msg common.OpenedMsg) tea.Cmd {
	ss := msg.Session
	m.leaveAll()
	if msg.Study != nil {
		studiedWith(msg.Study, msg.Report.Robustness)
	}
	m.state.Study = msg.Study
	m.state.Note = ss.Note
	m.chartsWhy = ""
	if msg.Study == nil {
		why := "no dataset"
		if msg.Why != nil {
			why = msg.Why.Error()
		}
		m.chartsWhy = "charts unavailable: " + why
	}
	m.state.Backend, m.state.Device = ss.Backend, ""
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
	m.host.Do(common.ErrMsg{})
	m.host.Do(common.WarnMsg{})
	m.host.Do(common.InfoMsg{})
	m.host.Do(common.SavedMsg{Text: fmt.Sprintf("session %d", ss.ID)})
	// Another study on screen: the last one's table filter is not its
	// (issue 15, defect 3).
	m.metrics.ClearFilter()
	m.filterErr = ""
	cmd := m.show(msg.Report, ss.Precisions, err, ss.ID)
	cmd = tea.Batch(cmd, m.setSuite(ss.Spec.Suite))
	m.attach()
	m.host.Do(common.ErrMsg{}) // the state of a saved session is not an error of now
	switch {
	case m.chartsWhy != "":
		m.host.Do(common.WarnMsg{Text: m.chartsWhy})
	case cancelled:
		// A cancel the user asked for is a note, not a warning.
		m.host.Do(common.InfoMsg{Text: fmt.Sprintf("session %d: %s (R in Sessions resumes)", ss.ID, common.CancelledByUser)})
	case err != nil:
		m.host.Do(common.WarnMsg{Text: err.Error() + " (R in Sessions resumes)"})
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

// selectCombo makes idx the selected combo in every pane and recomputes
// its detail after a short pause (so holding an arrow key does not queue
// an InspectCombo per step).
func (m *Model) selectCombo(idx int) tea.Cmd {
	if m.state.Results == nil || idx < 0 || idx >= m.state.Results.Grid.Len() {
		return nil
	}
	m.state.Selected = idx
	m.metrics.Sync()
	m.parity.Sync()
	m.heat.Sync()
	m.agg.Sync()
	if m.state.Study == nil {
		// A saved session whose dataset could not be loaded again: the
		// panes that recompute the combo say why they cannot.
		why := m.chartsWhy
		if why == "" {
			why = "charts unavailable: no dataset"
		}
		m.state.Inspect = &common.Inspection{Index: idx, Combo: m.state.Results.Grid.At(idx), Err: errors.New(why)}
		m.cross.Reload()
		m.detail.Reload()
		return nil
	}
	m.inspectGen++
	gen := m.inspectGen
	if m.state.Inspect == nil {
		return m.Inspect()
	}
	return common.Tag(common.ResultsScreen, tea.Tick(80*time.Millisecond, func(time.Time) tea.Msg { return inspectTickMsg{gen} }))
}

// Inspect is the command that recomputes the selected combo now, in the
// precisions whose run computed it (a selection waits a short pause first).
func (m *Model) Inspect() tea.Cmd {
	idx := m.state.Selected
	var missing map[engine.Precision]string
	if r := m.state.Results; r != nil {
		for _, p := range m.state.Study.Precisions {
			if why := r.Missing(idx, p); why != "" {
				if missing == nil {
					missing = map[engine.Precision]string{}
				}
				missing[p] = why
			}
		}
	}
	return common.Tag(common.ResultsScreen, inspectCmd(m.inspectGen, m.state.Study, idx, missing))
}

// inspectCmd recomputes combo idx of s in each of its precisions but the
// ones in missing (a run that never computed it: the panes say so rather
// than show numbers the run did not produce).
func inspectCmd(gen int, s *engine.Study, idx int, missing map[engine.Precision]string) tea.Cmd {
	c := s.Grid.At(idx)
	if s.Grid.Strategy != nil {
		// engine.InspectCombo recomputes hull's combos only.
		return common.Guard(func() tea.Msg { return inspectMsg{gen, inspectStrategy(s, idx, missing)} },
			func(err error) tea.Msg { return inspectMsg{gen, &common.Inspection{Index: idx, Err: err}} })
	}
	return common.Guard(func() tea.Msg {
		ins := &common.Inspection{Index: idx, Combo: c, Missing: missing}
		for _, p := range s.Precisions {
			if missing[p] != "" {
				continue
			}
			d, err := engine.InspectCombo(context.Background(), &s.Dataset.Bars, c, s.Params, p, s.WMA)
			if err != nil {
				ins.Err = err
				break
			}
			if p == engine.FP32 {
				ins.D32 = d
			} else {
				ins.D64 = d
			}
		}
		return inspectMsg{gen, ins}
	}, func(err error) tea.Msg { return inspectMsg{gen, &common.Inspection{Index: idx, Combo: c, Err: err}} })
}
