package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/robust"
	"sweepbench/sessions"
	"sweepbench/tui/common"
)

// The sessions screen and the bench screen: the root model's side of
// them (the store and the ladder run in commands, never in Update).

type (
	sessionsListedMsg struct {
		gen  int
		list []sessions.Session
		err  error
	}
	sessionOpenedMsg struct {
		gen   int
		id    int64
		rep   *engine.Report
		ss    *sessions.Session
		study *engine.Study // nil when the dataset could not be loaded again
		why   error         // why study is nil
		err   error
	}
	diffMsg struct {
		gen int
		d   *sessions.Diff
		err error
	}
	deletedMsg struct {
		id  int64
		err error
	}
	resumeReadyMsg struct {
		gen   int
		id    int64
		study *engine.Study
		note  string
		err   error
	}
	benchProgressMsg struct {
		gen        int
		id, status string
		res        *engine.RungResult // a rung's row as soon as it is timed (status "timed")
	}
	benchDoneMsg struct {
		gen int
		res []engine.RungResult
		err error
	}
)

// sessionStudy rebuilds the study of a saved session (sessions.Rebuild:
// its Spec, its dataset loaded again and refused when its bars changed,
// auto when its backend cannot run here; the note says so).
func sessionStudy(ctx context.Context, ss *sessions.Session, load sessions.Loader, reg *engine.Registry) (*engine.Study, string, error) {
	s, err := sessions.Rebuild(ctx, ss, reg, "", load)
	if err != nil {
		return nil, "", err
	}
	return s, s.Note, nil
}

func listCmd(gen int, st *sessions.Store) tea.Cmd {
	return guard(func() tea.Msg {
		list, err := st.List(context.Background(), sessions.ListOptions{})
		return sessionsListedMsg{gen, list, err}
	}, func(err error) tea.Msg { return sessionsListedMsg{gen: gen, err: err} })
}

func openSessionCmd(gen int, st *sessions.Store, load sessions.Loader, reg *engine.Registry, id int64) tea.Cmd {
	return guard(func() tea.Msg {
		ctx := context.Background()
		rep, err := st.Open(ctx, id)
		if err != nil {
			return sessionOpenedMsg{gen: gen, id: id, err: err}
		}
		ss, err := st.Get(ctx, id)
		if err != nil {
			return sessionOpenedMsg{gen: gen, id: id, err: err}
		}
		s, _, why := sessionStudy(ctx, ss, load, reg)
		return sessionOpenedMsg{gen: gen, id: id, rep: rep, ss: ss, study: s, why: why}
	}, func(err error) tea.Msg { return sessionOpenedMsg{gen: gen, id: id, err: err} })
}

func diffCmd(gen int, st *sessions.Store, load sessions.Loader, a, b sessions.RunRef) tea.Cmd {
	return guard(func() tea.Msg {
		d, err := st.Diff(context.Background(), a, b, load)
		return diffMsg{gen, d, err}
	}, func(err error) tea.Msg { return diffMsg{gen: gen, err: err} })
}

func deleteCmd(st *sessions.Store, id int64) tea.Cmd {
	return guard(func() tea.Msg {
		return deletedMsg{id, st.Delete(context.Background(), id, false)}
	}, func(err error) tea.Msg { return deletedMsg{id, err} })
}

func resumeReadyCmd(gen int, st *sessions.Store, load sessions.Loader, reg *engine.Registry, id int64) tea.Cmd {
	return guard(func() tea.Msg {
		ctx := context.Background()
		ss, err := st.Get(ctx, id)
		if err != nil {
			return resumeReadyMsg{gen: gen, id: id, err: err}
		}
		if ss.Status == engine.StatusComplete {
			return resumeReadyMsg{gen: gen, id: id, err: fmt.Errorf("session %d is %w", id, sessions.ErrComplete)}
		}
		s, note, err := sessionStudy(ctx, ss, load, reg)
		if err != nil {
			err = fmt.Errorf("session %d cannot be resumed: %w", id, err)
		}
		return resumeReadyMsg{gen: gen, id: id, study: s, note: note, err: err}
	}, func(err error) tea.Msg { return resumeReadyMsg{gen: gen, id: id, err: err} })
}

// storeWhy says why there is no sessions store.
func (m *Model) storeWhy() string {
	if m.cfg.StoreErr != nil {
		return "no sessions database: " + m.cfg.StoreErr.Error()
	}
	return "no sessions database in this workbench (start it with sweepbench tui; --db names the file)"
}

// openSessions shows the sessions screen and reads the list again.
func (m *Model) openSessions() tea.Cmd {
	if m.screen != screenSessions && m.screen != screenBench {
		m.prevScreen = m.screen
	}
	m.screen = screenSessions
	m.cmpShown = false
	m.sess.Confirm(0)
	m.showHelp = false
	m.layout()
	m.syncKeyContext()
	return tea.Batch(m.form.Focus(false), m.listSessions())
}

func (m *Model) listSessions() tea.Cmd {
	st := m.cfg.Sessions
	if st == nil {
		m.sess.SetUnavailable(m.storeWhy())
		return nil
	}
	m.listGen++
	return listCmd(m.listGen, st)
}

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

func (m *Model) sessionsKey(msg tea.KeyMsg) tea.Cmd {
	k := m.ctx.Keys
	m.sess.SetRefusal(nil) // read: a key after it
	if id := m.sess.Confirming(); id != 0 {
		m.sess.Confirm(0)
		if key.Matches(msg, k.Confirm) && m.cfg.Sessions != nil {
			m.sess.SetBusy(fmt.Sprintf("removing session %d%s", id, m.ctx.Theme.Ellipsis))
			return deleteCmd(m.cfg.Sessions, id)
		}
		return nil
	}
	if m.cmpShown {
		if key.Matches(msg, k.Back) {
			m.cmpShown = false
			m.layout()
			return nil
		}
		return m.cmp.Update(msg)
	}
	st := m.cfg.Sessions
	cur := m.sess.Current()
	switch {
	case key.Matches(msg, k.Back):
		return m.back()
	case st == nil || cur == nil:
		return m.sess.Update(msg)
	case m.run != nil && (key.Matches(msg, k.Select) || key.Matches(msg, k.Resume) || key.Matches(msg, k.Delete)):
		m.setErr(errors.New("a study is computing: open, resume or remove sessions once it ends (esc goes back to it; esc there cancels it)"))
		return nil
	case key.Matches(msg, k.Select):
		m.sessGen++
		m.sess.SetBusy(fmt.Sprintf("opening session %d%s", cur.ID, m.ctx.Theme.Ellipsis))
		return openSessionCmd(m.sessGen, st, m.cfg.LoadSession, m.ctx.Registry, cur.ID)
	case key.Matches(msg, k.Mark):
		err := m.sess.ToggleMark()
		m.setErr(err)
		m.sess.SetRefusal(err)
	case key.Matches(msg, k.Compare):
		marks := m.sess.Marks()
		if len(marks) != 2 {
			err := fmt.Errorf("compare needs two marked runs (%d marked): space marks one", len(marks))
			m.setErr(err)
			m.sess.SetRefusal(err)
			return nil
		}
		m.sessGen++
		m.sess.SetBusy(fmt.Sprintf("comparing %s against %s%s", marks[1], marks[0], m.ctx.Theme.Ellipsis))
		return diffCmd(m.sessGen, st, m.cfg.LoadSession, marks[0], marks[1])
	case key.Matches(msg, k.Delete):
		if st.ReadOnly() {
			m.setErr(errors.New("the sessions database is read-only: nothing can be removed"))
			return nil
		}
		m.sess.Confirm(cur.ID)
	case key.Matches(msg, k.Resume):
		if cur.Status == engine.StatusComplete {
			m.setErr(fmt.Errorf("session %d is %w", cur.ID, sessions.ErrComplete))
			return nil
		}
		m.sessGen++
		m.sess.SetBusy(fmt.Sprintf("loading the data of session %d to resume it%s", cur.ID, m.ctx.Theme.Ellipsis))
		return resumeReadyCmd(m.sessGen, st, m.cfg.LoadSession, m.ctx.Registry, cur.ID)
	default:
		return m.sess.Update(msg)
	}
	return nil
}

// sessionMsg handles the store's answers.
func (m *Model) sessionMsg(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case sessionsListedMsg:
		if msg.gen != m.listGen {
			return nil
		}
		path := ""
		if m.cfg.Sessions != nil {
			path = m.cfg.Sessions.Path()
		}
		m.sess.SetList(msg.list, path, msg.err)
	case sessionOpenedMsg:
		if !m.sessionAnswer(msg.gen, msg.err) {
			return nil
		}
		return m.showSession(msg)
	case diffMsg:
		if !m.sessionAnswer(msg.gen, msg.err) {
			return nil
		}
		m.setErr(nil)
		m.cmp.SetDiff(msg.d, nil)
		m.cmpShown = true
		m.layout()
	case deletedMsg:
		if !m.sessionAnswer(m.sessGen, msg.err) {
			return nil
		}
		m.setErr(nil)
		m.ctx.Info = fmt.Sprintf("removed session %d", msg.id)
		if m.ctx.Saved == fmt.Sprintf("session %d", msg.id) {
			m.ctx.Saved = ""
		}
		return m.listSessions()
	case resumeReadyMsg:
		if !m.sessionAnswer(msg.gen, msg.err) || m.cfg.Sessions == nil {
			return nil
		}
		m.ctx.Note = msg.note
		return m.launch(msg.study, resumeWork(m.cfg.Sessions, msg.id, msg.study))
	}
	return nil
}

// sessionAnswer takes an answer of the store to the browser's request gen:
// a stale one (a later request was made) is dropped; otherwise the browser
// is no longer busy and an error goes to the status line. It reports
// whether the answer is to be acted on.
func (m *Model) sessionAnswer(gen int, err error) bool {
	if gen != m.sessGen {
		return false
	}
	m.sess.SetBusy("")
	if err != nil {
		m.setErr(err)
		m.sess.SetRefusal(err) // whole under the list: the status bar has room for its start
		return false
	}
	return true
}

// showSession puts a saved session in the results panes. Without its
// dataset the crossover and combo panes say why their charts are missing.
func (m *Model) showSession(msg sessionOpenedMsg) tea.Cmd {
	ss := msg.ss
	if msg.study != nil {
		studiedWith(msg.study, msg.rep.Robustness)
	}
	m.ctx.Study = msg.study
	m.ctx.Note = ss.Note
	m.chartsWhy = ""
	if msg.study == nil {
		why := "no dataset"
		if msg.why != nil {
			why = msg.why.Error()
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
	cmd := m.showResults(msg.rep, ss.Precisions, err)
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

// The bench screen.

// benchRunner is one RunLadder in its goroutine.
type benchRunner struct {
	gen      int
	cancel   context.CancelFunc
	events   chan benchProgressMsg
	done     chan benchDoneMsg
	finished chan struct{}
}

func startBenchRunner(parent context.Context, gen int, job *engine.Job, rungs []engine.Rung, repeat int) *benchRunner {
	ctx, cancel := context.WithCancel(parent)
	b := &benchRunner{gen: gen, cancel: cancel, events: make(chan benchProgressMsg, 64), done: make(chan benchDoneMsg, 1),
		finished: make(chan struct{})}
	go func() {
		var res []engine.RungResult
		var err error
		defer close(b.finished)
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("internal error in the bench: %v", x)
			}
			b.done <- benchDoneMsg{gen, res, err}
		}()
		send := func(e benchProgressMsg) {
			select {
			case b.events <- e:
			case <-ctx.Done():
			}
		}
		res, err = engine.RunLadder(ctx, job, rungs, engine.BenchOptions{Repeat: repeat,
			Progress: func(id, status string) { send(benchProgressMsg{gen: gen, id: id, status: status}) },
			OnResult: func(r engine.RungResult) { send(benchProgressMsg{gen: gen, id: r.ID, status: "timed", res: &r}) },
		})
	}()
	return b
}

// next waits for the next rung event or the end.
func (b *benchRunner) next() tea.Cmd {
	return func() tea.Msg {
		select {
		case e := <-b.events:
			return e
		case d := <-b.done:
			return d
		}
	}
}

func (m *Model) rungs() []engine.Rung {
	if m.benchRungs == nil && m.cfg.Rungs != nil {
		m.benchRungs = m.cfg.Rungs()
	}
	return m.benchRungs
}

// benchPlan describes the ladder enter would run, or why it cannot.
func (m *Model) benchPlan() (*engine.Study, string, string) {
	if m.cfg.Rungs == nil {
		return nil, "", "the bench is not available in this workbench (no method ladder was given)"
	}
	s, _, _ := m.buildStudy()
	if s == nil {
		return nil, "", "no valid study: choose a dataset and a grid on the Setup screen first (esc)"
	}
	plan := fmt.Sprintf("%s, %s; grid hma %s x hma3 %s = %s; %s", s.Dataset.Info.Name,
		common.Plural(s.Dataset.Bars.Len(), "bar"), s.Grid.HMA, s.Grid.HMA3, common.Plural(s.Grid.Len(), "combo"), s.Params.Mode)
	return s, plan, ""
}

func (m *Model) openBench() tea.Cmd {
	if m.screen != screenSessions && m.screen != screenBench {
		m.prevScreen = m.screen
	}
	m.screen = screenBench
	m.showHelp = false
	_, plan, why := m.benchPlan()
	m.bench.SetPlan(plan, why, m.rungs(), m.cfg.BenchRepeat)
	m.layout()
	m.syncKeyContext()
	return m.form.Focus(false)
}

func (m *Model) benchKey(msg tea.KeyMsg) tea.Cmd {
	k := m.ctx.Keys
	switch {
	case key.Matches(msg, k.Back) && m.benchRun != nil:
		m.benchRun.cancel()
		m.bench.SetCancelling()
	case key.Matches(msg, k.Back):
		return m.back()
	case key.Matches(msg, k.Run) && m.benchRun == nil && m.run != nil:
		m.setErr(errors.New("a study is computing: the ladder would time the machine it shares; run it once the study ends"))
		return nil
	case key.Matches(msg, k.Run) && m.benchRun == nil:
		return m.startBench()
	}
	return nil
}

func (m *Model) startBench() tea.Cmd {
	s, plan, why := m.benchPlan()
	if s == nil {
		m.setErr(errors.New(why))
		return nil
	}
	rungs := m.rungs()
	m.benchGen++
	job := &engine.Job{Bars: &s.Dataset.Bars, Grid: s.Grid, Params: s.Params}
	m.benchRun = startBenchRunner(m.parent, m.benchGen, job, rungs, m.cfg.BenchRepeat)
	m.setErr(nil)
	m.syncKeyContext()
	return tea.Batch(m.benchRun.next(), m.bench.Start(plan, rungs, m.cfg.BenchRepeat))
}

// stopBench cancels a running ladder.
func (m *Model) stopBench() {
	if m.benchRun != nil {
		m.benchRun.cancel()
		m.benchRun = nil
	}
}

func (m *Model) benchMsg(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case benchProgressMsg:
		if m.benchRun == nil || msg.gen != m.benchRun.gen {
			return nil
		}
		if msg.res != nil {
			m.bench.Result(*msg.res)
		} else {
			m.bench.Progress(msg.id, msg.status)
		}
		return m.benchRun.next()
	case benchDoneMsg:
		if m.benchRun == nil || msg.gen != m.benchRun.gen {
			return nil
		}
		m.benchRun = nil
		// A cancel shows on the screen as a note (bench.Done): it is not an error.
		m.bench.Done(msg.res, msg.err)
		m.syncKeyContext()
	}
	return nil
}
