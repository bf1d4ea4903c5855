// Package sessions is the sessions screen: the browser of the sessions
// store (list, mark, compare two runs, remove, open, resume). The store
// is read in commands whose answers come back tagged for this screen; an
// opened session and a resume go to the root (common.OpenedMsg,
// common.ResumeMsg), which hands them to the results and run screens.
package sessions

import (
	"errors"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	store "sweepbench/sessions"
	"sweepbench/tui/common"
	"sweepbench/tui/components/compare"
	"sweepbench/tui/components/sessionlist"
)

// Config is what the screen needs of the workbench's configuration.
type Config struct {
	// Store is the sessions store; nil: the screen says why (StoreErr
	// when the database could not be opened).
	Store    *store.Store
	StoreErr error
	// Load loads a saved session's dataset again (opening a session with
	// its charts, comparing with flips, resuming).
	Load store.Loader
}

// Model is the sessions screen.
type Model struct {
	ctx  *common.Context
	host common.Host
	cfg  Config
	keys KeyMap
	list *sessionlist.Model
	cmp  *compare.Model
	w, h int

	comparing bool // the compare pane covers the list
	// listGen counts the list's reads, reqGen the requests that make the
	// browser busy (open, compare, remove, resume): a stale answer is dropped.
	listGen, reqGen int
}

var _ common.Screen = (*Model)(nil)

// New returns the sessions screen.
func New(ctx *common.Context, host common.Host, cfg Config) *Model {
	return &Model{ctx: ctx, host: host, cfg: cfg, keys: newKeyMap(ctx.Keys), list: sessionlist.New(ctx), cmp: compare.New(ctx)}
}

// List is the sessions list component.
func (m *Model) List() *sessionlist.Model { return m.list }

// Compare is the compare pane.
func (m *Model) Compare() *compare.Model { return m.cmp }

// Comparing reports whether the compare pane is shown.
func (m *Model) Comparing() bool { return m.comparing }

// Confirming reports whether a removal waits for its answer (then the
// keys that leave the screen do not).
func (m *Model) Confirming() bool { return m.list.Confirming() != 0 }

// SetSize implements common.Screen.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.list.SetSize(w-2, h-2)
	m.cmp.SetSize(w-2, h-2)
}

// Shown implements common.Screen: on display, the list is read again (a
// study may have been saved meanwhile), without a compare or a question.
func (m *Model) Shown(on bool) tea.Cmd {
	if !on {
		return nil
	}
	m.comparing = false
	m.list.Confirm(0)
	return m.Refresh()
}

// View implements common.Screen.
func (m *Model) View() string {
	t := m.ctx.Theme
	if m.comparing {
		return t.Pane(m.cmp.Title(), m.cmp.View(), m.w, m.h, true)
	}
	return t.Pane(m.list.Title(), m.list.View(), m.w, m.h, true)
}

// Refresh reads the list again.
func (m *Model) Refresh() tea.Cmd {
	st := m.cfg.Store
	if st == nil {
		m.list.SetUnavailable(m.storeWhy())
		return nil
	}
	m.listGen++
	return common.Tag(common.SessionsScreen, listCmd(m.listGen, st))
}

// storeWhy says why there is no sessions store.
func (m *Model) storeWhy() string {
	if m.cfg.StoreErr != nil {
		return "no sessions database: " + m.cfg.StoreErr.Error()
	}
	return "no sessions database in this workbench (start it with sweepbench tui; --db names the file)"
}

// Update implements common.Screen.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return m.key(msg)
	case listedMsg:
		if msg.gen != m.listGen {
			return nil
		}
		path := ""
		if m.cfg.Store != nil {
			path = m.cfg.Store.Path()
		}
		m.list.SetList(msg.list, path, msg.err)
	case openedMsg:
		if !m.answer(msg.gen, msg.err) {
			return nil
		}
		return m.host.Do(msg.opened)
	case diffMsg:
		if !m.answer(msg.gen, msg.err) {
			return nil
		}
		m.host.Do(common.ErrMsg{})
		m.cmp.SetDiff(msg.d, nil)
		m.comparing = true
	case deletedMsg:
		// A removal is done whatever was asked since: its answer counts.
		if !m.answer(m.reqGen, msg.err) {
			return nil
		}
		m.host.Do(common.ErrMsg{})
		m.host.Do(common.InfoMsg{Text: fmt.Sprintf("removed session %d", msg.id)})
		if m.host.Status().Saved == fmt.Sprintf("session %d", msg.id) {
			m.host.Do(common.SavedMsg{Text: ""})
		}
		return m.Refresh()
	case resumeReadyMsg:
		if !m.answer(msg.gen, msg.err) || m.cfg.Store == nil {
			return nil
		}
		return m.host.Do(common.ResumeMsg{ID: msg.id, Study: msg.study, Note: msg.note})
	}
	return nil
}

// answer takes the store's answer to the browser's request gen: a stale
// one (a later request was made) is dropped; otherwise the browser is no
// longer busy and an error goes to the status line. It reports whether
// the answer is to be acted on.
func (m *Model) answer(gen int, err error) bool {
	if gen != m.reqGen {
		return false
	}
	m.list.SetBusy("")
	if err != nil {
		m.host.Do(common.ErrMsg{Err: err})
		m.list.SetRefusal(err) // whole under the list: the status bar has room for its start
		return false
	}
	return true
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	m.list.SetRefusal(nil) // read: a key after it
	if id := m.list.Confirming(); id != 0 {
		m.list.Confirm(0)
		if key.Matches(msg, k.Confirm) && m.cfg.Store != nil {
			m.list.SetBusy(fmt.Sprintf("removing session %d%s", id, m.ctx.Theme.Ellipsis))
			return common.Tag(common.SessionsScreen, deleteCmd(m.cfg.Store, id))
		}
		return nil
	}
	if m.comparing {
		if key.Matches(msg, k.Back) {
			m.comparing = false
			return nil
		}
		return m.cmp.Update(msg)
	}
	st := m.cfg.Store
	cur := m.list.Current()
	switch {
	case key.Matches(msg, k.Back):
		return m.host.Do(common.BackMsg{})
	case st == nil || cur == nil:
		return m.list.Update(msg)
	case m.host.Running() && (key.Matches(msg, k.Select) || key.Matches(msg, k.Resume) || key.Matches(msg, k.Delete)):
		m.host.Do(common.ErrMsg{Err: errors.New("a study is computing: open, resume or remove sessions once it ends (esc goes back to it; esc there cancels it)")})
		return nil
	case key.Matches(msg, k.Select):
		m.reqGen++
		m.list.SetBusy(fmt.Sprintf("opening session %d%s", cur.ID, m.ctx.Theme.Ellipsis))
		return common.Tag(common.SessionsScreen, openCmd(m.reqGen, st, m.cfg.Load, m.ctx.Registry, cur.ID))
	case key.Matches(msg, k.Mark):
		err := m.list.ToggleMark()
		m.host.Do(common.ErrMsg{Err: err})
		m.list.SetRefusal(err)
	case key.Matches(msg, k.Compare):
		marks := m.list.Marks()
		if len(marks) != 2 {
			err := fmt.Errorf("compare needs two marked runs (%d marked): space marks one", len(marks))
			m.host.Do(common.ErrMsg{Err: err})
			m.list.SetRefusal(err)
			return nil
		}
		m.reqGen++
		m.list.SetBusy(fmt.Sprintf("comparing %s against %s%s", marks[1], marks[0], m.ctx.Theme.Ellipsis))
		return common.Tag(common.SessionsScreen, diffCmd(m.reqGen, st, m.cfg.Load, marks[0], marks[1]))
	case key.Matches(msg, k.Delete):
		if st.ReadOnly() {
			m.host.Do(common.ErrMsg{Err: errors.New("the sessions database is read-only: nothing can be removed")})
			return nil
		}
		m.list.Confirm(cur.ID)
	case key.Matches(msg, k.Resume):
		if cur.Status == engine.StatusComplete {
			m.host.Do(common.ErrMsg{Err: fmt.Errorf("session %d is %w", cur.ID, store.ErrComplete)})
			return nil
		}
		m.reqGen++
		m.list.SetBusy(fmt.Sprintf("loading the data of session %d to resume it%s", cur.ID, m.ctx.Theme.Ellipsis))
		return common.Tag(common.SessionsScreen, resumeReadyCmd(m.reqGen, st, m.cfg.Load, m.ctx.Registry, cur.ID))
	default:
		return m.list.Update(msg)
	}
	return nil
}
