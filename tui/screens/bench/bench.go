// Package bench is the bench screen: the method ladder of `sweepbench
// bench` (enginebench.RunLadder) on the study the setup form describes, run in
// a goroutine of its own and drawn by the bench component. It owns the
// ladder's runner and its generation counter; it imports no other screen.
package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	enginebench "sweepbench/engine/bench"
	"sweepbench/tui/common"
	ladder "sweepbench/tui/components/bench"
)

// Config is what the screen needs of the workbench's configuration.
type Config struct {
	// Rungs builds the ladder (main's benchRungs); nil: the screen says
	// the bench is not available.
	Rungs func() []enginebench.Rung
	// Repeat is the timed runs per rung (0: the engine's 3).
	Repeat int
	// Study is the study the setup form describes, nil when it has none.
	Study func() *engine.Study
}

// Model is the bench screen.
type Model struct {
	ctx    *common.Context
	host   common.Host
	parent context.Context
	cfg    Config
	keys   KeyMap
	ladder *ladder.Model
	w, h   int

	run   *runner // the ladder computing, nil when none
	gen   int     // counts the ladders started: a stale runner's answers are dropped
	rungs []enginebench.Rung
}

var _ common.Screen = (*Model)(nil)

// New returns the bench screen; parent bounds the ladders it runs.
func New(ctx *common.Context, host common.Host, parent context.Context, cfg Config) *Model {
	return &Model{ctx: ctx, host: host, parent: parent, cfg: cfg, keys: newKeyMap(ctx.Keys), ladder: ladder.New(ctx)}
}

// Ladder is the bench component the screen draws.
func (m *Model) Ladder() *ladder.Model { return m.ladder }

// Running reports whether a ladder computes.
func (m *Model) Running() bool { return m.run != nil }

// SetSize implements common.Screen.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.ladder.SetSize(w-2, h-2)
}

// Shown implements common.Screen: on display, the screen says what enter
// would run (the form's study may have changed meanwhile).
func (m *Model) Shown(on bool) tea.Cmd {
	if on {
		_, plan, why := m.plan()
		m.ladder.SetPlan(plan, why, m.rungList(), m.cfg.Repeat)
	}
	return nil
}

// View implements common.Screen.
func (m *Model) View() string {
	return m.ctx.Theme.Pane(m.ladder.Title(), m.ladder.View(), m.w, m.h, true)
}

// Update implements common.Screen.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return m.key(msg)
	case spinner.TickMsg:
		if m.run != nil {
			return m.ladder.Update(msg)
		}
	case progressMsg:
		if m.run == nil || msg.gen != m.run.gen {
			return nil
		}
		if msg.res != nil {
			m.ladder.Result(*msg.res)
		} else {
			m.ladder.Progress(msg.id, msg.status)
		}
		return m.Next()
	case doneMsg:
		if m.run == nil || msg.gen != m.run.gen {
			return nil
		}
		m.run = nil
		// A cancel shows on the screen as a note (ladder.Done): it is not an error.
		m.ladder.Done(msg.res, msg.err)
	}
	return nil
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Back) && m.run != nil:
		m.run.cancel()
		m.ladder.SetCancelling()
	case key.Matches(msg, k.Back):
		return m.host.Do(common.BackMsg{})
	case key.Matches(msg, k.Run) && m.run == nil && m.host.Running():
		m.host.Do(common.ErrMsg{Err: errors.New("a study is computing: the ladder would time the machine it shares; run it once the study ends")})
	case key.Matches(msg, k.Run) && m.run == nil:
		return m.start()
	}
	return nil
}

func (m *Model) rungList() []enginebench.Rung {
	if m.rungs == nil && m.cfg.Rungs != nil {
		m.rungs = m.cfg.Rungs()
	}
	return m.rungs
}

// plan describes the ladder enter would run, or why it cannot.
func (m *Model) plan() (*engine.Study, string, string) {
	if m.cfg.Rungs == nil {
		return nil, "", "the bench is not available in this workbench (no method ladder was given)"
	}
	var s *engine.Study
	if m.cfg.Study != nil {
		s = m.cfg.Study()
	}
	if s == nil {
		return nil, "", "no valid study: choose a dataset and a grid on the Setup screen first (esc)"
	}
	grid := fmt.Sprintf("hma %s x hma3 %s", s.Grid.HMA, s.Grid.HMA3)
	if s.Grid.Strategy != nil {
		grid = s.Grid.Family() + " " + s.Grid.Text()
	}
	plan := fmt.Sprintf("%s, %s; grid %s = %s; %s", s.Dataset.Info.Name,
		common.Plural(s.Dataset.Bars.Len(), "bar"), grid, common.Plural(s.Grid.Len(), "combo"), s.Params.Mode)
	return s, plan, ""
}

func (m *Model) start() tea.Cmd {
	s, plan, why := m.plan()
	if s == nil {
		m.host.Do(common.ErrMsg{Err: errors.New(why)})
		return nil
	}
	rungs := m.rungList()
	m.gen++
	job := &engine.Job{Bars: &s.Dataset.Bars, Grid: s.Grid, Params: s.Params}
	m.run = startRunner(m.parent, m.gen, job, rungs, m.cfg.Repeat)
	m.host.Do(common.ErrMsg{})
	return tea.Batch(m.Next(), m.ladder.Start(plan, rungs, m.cfg.Repeat))
}

// Next is the re-armed read of the running ladder's next event, tagged
// for this screen; nil when no ladder runs.
func (m *Model) Next() tea.Cmd {
	if m.run == nil {
		return nil
	}
	return common.Tag(common.BenchScreen, m.run.next())
}

// Stop cancels a running ladder.
func (m *Model) Stop() {
	if m.run != nil {
		m.run.cancel()
		m.run = nil
	}
}
