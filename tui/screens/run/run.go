// Package run is the run screen: the study that computes, with live
// progress per lane (the runview component), the study queued to start
// after it, and the results so far. The study runs in a goroutine whose
// progress and end come back tagged for this screen; its report goes to
// the root (common.ReportMsg), which hands it to the results screen.
package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/preflight"
	"sweepbench/engine/suite"
	"sweepbench/sessions"
	"sweepbench/tui/common"
	"sweepbench/tui/components/runview"
)

// Config is what the screen needs of the workbench's configuration.
type Config struct {
	// Store saves every study unless NoSave; nil: studies are not saved
	// (StoreErr says why, as a warning on each).
	Store    *sessions.Store
	StoreErr error
	NoSave   bool
	// Gate, when set, admits each study and resume (sweepbench serve's
	// queue); the screen shows the study's place while it waits.
	Gate common.Gate
	// Detachable offers K: the running study goes on computing when the
	// workbench ends (a dropped SSH connection); parent must then outlive
	// the workbench.
	Detachable bool
	// Preflight is how each study is checked before it starts
	// (preflight.PreflightStudy; Discard and Yes are the screen's): the zero
	// value calibrates with preflight.EstimateStudy at preflight.DefaultRates on
	// GOMAXPROCS cores, as run does. Tests inject the calibration, the
	// rates and the cores.
	Preflight preflight.PreflightOptions
}

// Model is the run screen.
type Model struct {
	ctx    *common.Context
	state  *common.RunState // the run, the root model\'s
	host   common.Host
	parent context.Context
	cfg    Config
	keys   KeyMap
	view   *runview.Model

	run      *runner         // the study computing, nil when none
	last     *runner         // the last runner started (Wait waits for it)
	gen      int             // counts the studies started: a stale runner's answers are dropped
	from     common.ScreenID // where a study that shows nothing returns to
	queued   *engine.Study   // the study to start when the running one ends
	check    *check          // the study the preflight holds: calibrating, or asking (preflight.go)
	checkGen int             // counts the checks: a stale calibration's answer is dropped
	said     string          // the running study's estimate, said over its lanes ("" none)

	queuedSuite []string // the datasets of the queued study when it is a suite
	queuedSaid  string   // the queued study's estimate

	place *common.Place // the running study's place in Config.Gate's queue while it waits
	keep  bool          // K: the running study goes on when the workbench ends
	w, h  int
}

var (
	_ common.Screen = (*Model)(nil)
	_ common.Taker  = (*Model)(nil) // its question takes the keys
)

// New returns the run screen; parent bounds the studies it runs.
func New(ctx *common.Context, state *common.RunState, host common.Host, parent context.Context, cfg Config) *Model {
	return &Model{ctx: ctx, state: state, host: host, parent: parent, cfg: cfg, keys: newKeyMap(ctx.Keys), view: runview.New(ctx, state)}
}

// Running reports whether a study computes.
func (m *Model) Running() bool { return m.run != nil }

// Queued is the study queued to start when the running one ends, or nil.
func (m *Model) Queued() *engine.Study { return m.queued }

// Started counts the studies started.
func (m *Model) Started() int { return m.gen }

// Fraction is how far the running study's lanes are, 0 to 1.
func (m *Model) Fraction() float64 {
	if m.run != nil && m.run.suite != nil {
		return m.run.suite.fraction(m.view.Fraction())
	}
	return m.view.Fraction()
}

// AskQuit shows (or takes back) the question a q during the sweep asks.
func (m *Model) AskQuit(ask bool) { m.view.AskQuit(ask) }

// SetSize implements common.Screen.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.view.SetSize(w, h-len(m.headLines()))
}

// headLines are the lines over the lanes: the check (its calibration or
// its question), the running study's place in the queue, the suite's
// dataset and the study's estimate.
func (m *Model) headLines() []string {
	lines := append(m.checkLines(), m.gateLines()...)
	lines = append(lines, m.suiteLines()...)
	if m.run != nil && m.said != "" {
		lines = append(lines, m.ctx.Theme.Subtle.Render(m.ctx.Theme.Truncate(m.said, m.w)))
	}
	return lines
}

// Shown implements common.Screen.
func (m *Model) Shown(bool) tea.Cmd { return nil }

// View implements common.Screen.
func (m *Model) View() string {
	lines := m.headLines()
	if m.run == nil && m.check != nil {
		// Nothing computes: the check alone (the lanes are the last study's).
		return m.ctx.Theme.Fit(strings.Join(lines, "\n"), m.w, m.h)
	}
	m.view.SetSize(m.w, m.h-len(lines))
	return strings.Join(append(lines, m.view.View()), "\n")
}

// Update implements common.Screen.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return m.key(msg)
	case spinner.TickMsg:
		if m.run != nil {
			return m.view.Update(msg)
		}
	case ProgressMsg:
		if m.run == nil || msg.gen != m.run.gen {
			return nil
		}
		m.view.Progress(m.lanes(msg.ps))
		return m.next()
	case PlaceMsg:
		if m.run == nil || msg.gen != m.run.gen {
			return nil
		}
		m.place = nil
		if !msg.admitted {
			m.place = &msg.place
		}
		return m.next()
	case preflightMsg:
		return m.preflighted(msg)
	case doneMsg:
		if m.run == nil || msg.gen != m.run.gen {
			return nil
		}
		m.view.Progress(m.lanes(msg.ps))
		return m.finish(msg)
	}
	return nil
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if m.check != nil {
		if cmd, ok := m.answer(msg); ok {
			return cmd
		}
	}
	if m.run == nil {
		return nil
	}
	switch {
	case key.Matches(msg, k.Back):
		m.run.cancel()
		m.view.SetCancelling()
	case key.Matches(msg, k.Edit):
		// The form, to queue the next study while this one computes.
		return m.host.Do(common.FormMsg{})
	case key.Matches(msg, k.SoFar):
		return m.showSoFar()
	case m.cfg.Detachable && key.Matches(msg, keepKey):
		m.keep = !m.keep
	}
	return nil
}

// showSoFar opens the results screen on what the study has streamed so
// far (issue 15, defect 5); enter on this screen again takes a newer
// snapshot, and the whole report replaces it when the study ends.
func (m *Model) showSoFar() tea.Cmd {
	rep, seen, kept := m.run.stream.snapshot(m.state.Study)
	if rep == nil {
		m.host.Do(common.ErrMsg{Err: errors.New("no combo has completed yet: the results so far show once a lane has completed a chunk (a resumed session's show when it ends)")})
		return nil
	}
	of := common.Thousands(m.state.Study.Grid.Len() * len(m.state.Study.Precisions))
	info := fmt.Sprintf("the results so far: %s of %s combos; the study computes on (the Run tab; enter there takes a newer snapshot)",
		common.Thousands(kept), of)
	if kept < seen {
		info = fmt.Sprintf("the results so far: the first %s of the %s combos streamed (of %s); the study computes on (the Run tab)",
			common.Thousands(kept), common.Thousands(seen), of)
	}
	cmd := m.host.Do(common.ReportMsg{Report: rep, Asked: m.state.Study.Precisions, Err: errRunning})
	m.host.Do(common.ErrMsg{})
	m.host.Do(common.InfoMsg{Text: info})
	return cmd
}

func (m *Model) next() tea.Cmd { return common.Tag(common.RunScreen, m.run.next()) }

// Start runs s, with live progress, once checked (preflight): a study
// that cannot fit is refused, one the CPU reference would take long over
// or that would take half the memory is asked about first (y starts it).
// While a study computes, s is queued to start when it ends.
func (m *Model) Start(s *engine.Study) tea.Cmd { return m.preflight(s, nil) }

// begin starts s (datasets: a suite of it), checked with p, or queues it
// while a study computes.
func (m *Model) begin(s *engine.Study, datasets []string, p preflight.Preflight) tea.Cmd {
	est := said(p, datasets)
	if m.run != nil {
		// A study computes: this one waits for it (issue 15, defect 5).
		m.queued, m.queuedSuite, m.queuedSaid = s, datasets, est
		info := fmt.Sprintf("queued: %s on %s starts when the running study ends (enter again replaces it)", s.Size(), s.Backend.Name())
		if datasets != nil {
			info = fmt.Sprintf("queued: a suite of %d datasets, %s each on %s, starts when the running study ends (enter again replaces it)",
				len(datasets), s.Size(), s.Backend.Name())
		}
		if est != "" {
			info += "; " + est
		}
		m.host.Do(common.InfoMsg{Text: info})
		return m.host.Do(common.ShowMsg{ID: common.RunScreen})
	}
	m.state.Note = s.Note
	var cmd tea.Cmd
	if datasets != nil {
		su := &suiteState{id: suite.SuiteID(s.Spec, datasets), n: len(datasets), name: datasets[0]}
		cmd = m.launch(s, suiteWork(s.Spec, datasets, m.cfg.Store, m.ctx, su))
		m.run.suite = su
	} else {
		var st *sessions.Store
		if !m.cfg.NoSave {
			st = m.cfg.Store
		}
		cmd = m.launch(s, studyWork(s, st, m.cfg.StoreErr, !m.cfg.NoSave))
	}
	m.said = est
	return cmd
}

// Resume computes what saved session id is missing, as study s.
func (m *Model) Resume(id int64, s *engine.Study) tea.Cmd {
	if m.cfg.Store == nil {
		return nil
	}
	return m.launch(s, resumeWork(m.cfg.Store, id, s))
}

// launch runs w (study s, or a session of it resumed) with live progress.
func (m *Model) launch(s *engine.Study, w work) tea.Cmd {
	m.Stop()
	m.gen++
	m.place, m.keep, m.said = nil, false, ""
	var places chan PlaceMsg
	if m.cfg.Gate != nil {
		places = make(chan PlaceMsg, 1)
		w = gatedWork(m.cfg.Gate, s, m.gen, places, w)
	}
	m.run = startRunner(m.parent, m.gen, w)
	m.run.places = places
	m.last = m.run
	m.from = common.SetupScreen
	if m.host.Screen() == common.SessionsScreen {
		m.from = common.SessionsScreen
	}
	m.host.Do(common.WarnMsg{})
	m.host.Do(common.SavedMsg{})
	m.host.Do(common.InfoMsg{})
	m.state.Study = s
	m.state.Backend = s.Backend.Name()
	m.state.Device = m.ctx.DeviceOf(s.Backend)
	m.host.Do(common.ErrMsg{})
	show := m.host.Do(common.ShowMsg{ID: common.RunScreen})
	return tea.Batch(m.next(), m.view.Start(s), show)
}

// finish shows the report of a study that ended (complete, cancelled or
// failed), then starts the study queued meanwhile, if any.
func (m *Model) finish(d doneMsg) tea.Cmd {
	cmd := m.finishRun(d)
	if q := m.queued; q != nil {
		// Checked (and confirmed) when it was queued.
		qs, est := m.queuedSuite, m.queuedSaid
		m.queued, m.queuedSuite, m.queuedSaid = nil, nil, ""
		info := m.host.Status().Info
		next := m.begin(q, qs, preflight.Preflight{})
		m.said = est
		m.host.Do(common.InfoMsg{Text: strings.TrimSuffix("the queued study started; the last one's results are on the Results screen; "+info, "; ")})
		return tea.Batch(cmd, next)
	}
	return cmd
}

func (m *Model) finishRun(d doneMsg) tea.Cmd {
	if m.run != nil {
		m.run.stream = nil // the results so far: the report replaces them (and their memory goes)
	}
	m.run = nil
	m.place, m.keep = nil, false
	rep, err := d.rep, d.err
	m.host.Do(common.WarnMsg{Text: d.warn})
	m.host.Do(common.SavedMsg{Text: d.saved})
	m.host.Do(common.InfoMsg{Text: d.info})
	if d.study != nil {
		m.state.Study = d.study // a suite's last dataset: the results read its siblings
	}
	done := 0
	if rep != nil {
		for _, r := range rep.Runs {
			done += r.Count()
		}
	}
	if rep == nil || done == 0 {
		if errors.Is(err, context.Canceled) {
			err = errors.New("cancelled before any combo completed")
		}
		m.host.Do(common.ErrMsg{Err: err})
		if m.from == common.SessionsScreen {
			return m.host.Do(common.ShowMsg{ID: common.SessionsScreen})
		}
		return m.host.Do(common.FormMsg{})
	}
	return m.host.Do(common.ReportMsg{Report: rep, Asked: m.state.Study.Precisions, Err: err, Session: d.id})
}

// Stop cancels a running study (its goroutine ends on its own) and the
// check of one that has not started.
func (m *Model) Stop() {
	m.dropCheck()
	if m.run != nil {
		m.run.cancel()
		m.run = nil
	}
}

// Wait waits up to d for the last study's goroutine to return (it saves
// the final state of its session before it does).
func (m *Model) Wait(d time.Duration) { m.last.wait(d) }
