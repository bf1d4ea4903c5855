// Package slurm is the Slurm screen: the state of a job folder of
// `sweepbench slurm` (its plan, each array task's state and shard, the
// merge job and the merged session), read by the slurm package's
// State.Status every few seconds while the screen is shown, a resubmit of
// the failed or missing tasks (State.Resubmit, after a y; refused while
// squeue fails and their states are unknown: see refused) and the merged
// session opened in the results screen (common.OpenedMsg). It runs
// Slurm's commands through the Runner it is given; without one (sweepbench
// serve) it says it is not available. It imports no other screen.
package slurm

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	store "sweepbench/sessions"
	cluster "sweepbench/slurm"
	"sweepbench/tui/common"
)

// placeholder is the folder field's when no folder is shown.
const placeholder = "a job folder of sweepbench slurm --out DIR"

// Every is how often the screen reads its folder again while shown.
const Every = 5 * time.Second

// Config is what the screen needs of the workbench's configuration.
type Config struct {
	// Runner runs Slurm's commands (slurm.Exec: on this machine); nil:
	// the screen is not available (Unavailable says why).
	Runner cluster.Runner
	// Unavailable is why there is no Runner, shown on the screen.
	Unavailable string
	// Dirs are the job folders given on the command line (tui
	// --slurm-dir); the first is shown.
	Dirs []string
	// Store is the workbench's sessions store: the merged session opens
	// when the merge saved it there. Load loads its dataset again.
	Store *store.Store
	Load  store.Loader
}

// Model is the Slurm screen.
type Model struct {
	ctx    *common.Context
	host   common.Host
	parent context.Context
	cfg    Config
	keys   KeyMap
	input  textinput.Model
	w, h   int

	// dirs are the folders known this session: the flags', then those
	// typed, each kept once it was read (a folder whose first read fails
	// leaves the list, and is shown as stray until another is).
	dirs  []string
	cur   int             // the one shown (index in dirs) unless stray is
	stray string          // the folder shown that was never read: not in dirs
	read  map[string]bool // the folders read at least once

	shown   bool
	editing bool // the folder field takes the keys
	// gen counts the reads of the folder (a stale answer is dropped),
	// tick the refresh timers armed (only the latest re-arms).
	gen, tick int
	loading   bool

	state  *cluster.State
	status *cluster.Status
	err    error     // the last read's error
	at     time.Time // when the last answer came

	confirm    []int  // the tasks a resubmit would submit, while it waits for y
	asking     bool   // a resubmit waits for y
	submitting bool   // a resubmit is on its way
	result     string // what the last resubmit did
	resultErr  error  // or why it failed
	openGen    int
	offset     int // the first task row in view
}

var (
	_ common.Screen = (*Model)(nil)
	_ common.Taker  = (*Model)(nil) // its text fields take the keys
)

// New returns the Slurm screen; parent bounds the Slurm commands it runs.
func New(ctx *common.Context, host common.Host, parent context.Context, cfg Config) *Model {
	in := textinput.New()
	in.Prompt = "folder: "
	in.Placeholder = placeholder
	in.Cursor.SetMode(cursor.CursorStatic) // no blink: an idle workbench sends nothing
	m := &Model{ctx: ctx, host: host, parent: parent, cfg: cfg, keys: newKeyMap(ctx.Keys), input: in, read: map[string]bool{}}
	for _, d := range cfg.Dirs {
		m.add(d)
	}
	m.cur = 0
	return m
}

// add makes dir the folder shown, appended to those known unless it is
// one of them.
func (m *Model) add(dir string) {
	dir = filepath.Clean(dir)
	m.stray = ""
	if i := slices.Index(m.dirs, dir); i >= 0 {
		m.cur = i
		return
	}
	m.dirs = append(m.dirs, dir)
	m.cur = len(m.dirs) - 1
}

// Dir is the folder shown, "" when none.
func (m *Model) Dir() string {
	if m.stray != "" {
		return m.stray
	}
	if m.cur < len(m.dirs) {
		return m.dirs[m.cur]
	}
	return ""
}

// Confirming reports whether a resubmit waits for its answer.
func (m *Model) Confirming() bool { return m.asking }

// Takes implements common.Taker: the folder field takes every key, and
// while a resubmit waits for y every key is its answer.
func (m *Model) Takes(tea.KeyMsg) bool { return m.editing || m.asking }

// SetSize implements common.Screen.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.input.Width = max(w-4-len(m.input.Prompt), 1)
}

// Shown implements common.Screen: on display the folder is read at once
// and then every few seconds (the timer runs only while it is shown);
// off display the timer stops and a question waiting is dropped.
func (m *Model) Shown(on bool) tea.Cmd {
	m.shown = on
	m.tick++ // a timer armed before is stale now
	if !on {
		m.asking, m.confirm = false, nil
		return nil
	}
	if m.cfg.Runner == nil {
		return nil
	}
	if m.Dir() == "" {
		m.editing = true
		return m.input.Focus()
	}
	return m.refresh()
}

// refresh reads the folder shown again.
func (m *Model) refresh() tea.Cmd {
	dir := m.Dir()
	if m.cfg.Runner == nil || dir == "" {
		return nil
	}
	m.gen++
	m.loading = true
	return common.Tag(common.SlurmScreen, statusCmd(m.parent, m.gen, m.cfg.Runner, dir))
}

// Update implements common.Screen.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return m.key(msg)
	case statusMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.loading = false
		m.state, m.status, m.err, m.at = msg.state, msg.status, msg.err, msg.at
		m.keep(msg.dir, msg.err == nil)
		if m.asking && m.status != nil {
			m.confirm = m.status.Redo() // the question names what y would submit now
			var ue *cluster.UnknownError
			if errors.As(m.status.Refusal(), &ue) { // y would be refused: say why instead
				m.asking, m.confirm, m.resultErr = false, nil, refused(m.Dir(), ue)
			}
		}
		if m.status != nil && m.offset > max(len(m.status.Tasks)-1, 0) {
			m.offset = 0
		}
		if !m.shown {
			return nil
		}
		m.tick++
		return common.Tag(common.SlurmScreen, tickCmd(m.tick, Every))
	case tickMsg:
		if msg.gen != m.tick || !m.shown || m.loading {
			return nil
		}
		return m.refresh()
	case resubmittedMsg:
		m.submitting = false
		m.result, m.resultErr = "", msg.err
		if msg.err == nil {
			m.result = resubmitted(msg)
		}
		if msg.dir == m.Dir() {
			return m.refresh()
		}
	case openedMsg:
		if msg.gen != m.openGen {
			return nil
		}
		m.result = ""
		if msg.err != nil {
			m.host.Do(common.ErrMsg{Err: msg.err})
			return nil
		}
		return m.host.Do(msg.o)
	}
	return nil
}

// keep records the answer of a read of dir: a folder read is kept among
// those left/right cycles through; one whose reads never succeeded leaves
// them (it is shown, stray, with its error until another folder is).
func (m *Model) keep(dir string, ok bool) {
	if ok {
		m.read[dir] = true
		if m.stray == dir {
			m.add(dir)
		}
		return
	}
	i := slices.Index(m.dirs, dir)
	if m.read[dir] || i < 0 {
		return
	}
	m.dirs = slices.Delete(m.dirs, i, i+1)
	if m.cur >= i && m.cur > 0 {
		m.cur--
	}
	m.stray = dir
}

// cycles reports whether left/right have another folder to show.
func (m *Model) cycles() bool {
	return len(m.dirs) > 1 || (m.stray != "" && len(m.dirs) > 0)
}

// step is the folder left (-1) or right (+1) shows: from a stray one, the
// folder shown before it.
func (m *Model) step(d int) int {
	if m.stray != "" {
		return m.cur
	}
	return (m.cur + d + len(m.dirs)) % len(m.dirs)
}

// resubmitted says what a resubmit did, as sweepbench slurm resubmit
// says it.
func resubmitted(msg resubmittedMsg) string {
	return msg.res.Summary(msg.dir, msg.first, msg.shards)
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if m.editing {
		return m.editKey(msg)
	}
	if m.asking {
		m.asking = false
		if !key.Matches(msg, k.Confirm) {
			m.confirm = nil
			m.result = "resubmit cancelled"
			return nil
		}
		m.submitting = true
		m.result, m.resultErr = "", nil
		return common.Tag(common.SlurmScreen, resubmitCmd(m.parent, m.cfg.Runner, m.Dir()))
	}
	switch {
	case key.Matches(msg, k.Back):
		return m.host.Do(common.BackMsg{})
	case m.cfg.Runner == nil:
		return nil
	case key.Matches(msg, k.Folder):
		// Empty, the folder shown as its placeholder: what is typed
		// replaces it (enter on nothing keeps it).
		m.editing = true
		m.input.SetValue("")
		m.input.Placeholder = placeholder
		if d := m.Dir(); d != "" {
			m.input.Placeholder = d
		}
		return m.input.Focus()
	case key.Matches(msg, k.Refresh):
		return m.refresh()
	case key.Matches(msg, k.Left) && m.cycles():
		return m.switchTo(m.step(-1))
	case key.Matches(msg, k.Right) && m.cycles():
		return m.switchTo(m.step(+1))
	case key.Matches(msg, k.Up):
		m.offset = max(m.offset-1, 0)
	case key.Matches(msg, k.Down):
		m.offset++
	case key.Matches(msg, k.PageUp):
		m.offset = max(m.offset-max(m.rows(), 1), 0)
	case key.Matches(msg, k.PageDown):
		m.offset += max(m.rows(), 1)
	case key.Matches(msg, k.Top):
		m.offset = 0
	case key.Matches(msg, k.Bottom):
		m.offset = 1 << 30
	case key.Matches(msg, k.Resubmit):
		return m.askResubmit()
	case key.Matches(msg, k.Open):
		return m.openMerged()
	}
	return nil
}

// editKey is a key in the folder field: enter shows the folder typed,
// esc leaves the field as it was.
func (m *Model) editKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEsc:
		m.editing = false
		m.input.Blur()
		if m.Dir() == "" {
			return m.host.Do(common.BackMsg{})
		}
		return nil
	case tea.KeyEnter:
		dir := strings.TrimSpace(m.input.Value())
		if dir == "" {
			if m.Dir() != "" { // the folder shown stays
				m.editing = false
				m.input.Blur()
			}
			return nil
		}
		m.editing = false
		m.input.Blur()
		m.add(dir)
		return m.show()
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// switchTo shows folder i of those known.
func (m *Model) switchTo(i int) tea.Cmd {
	m.cur, m.stray = i, ""
	return m.show()
}

// show forgets what the screen showed of the previous folder and reads
// the current one.
func (m *Model) show() tea.Cmd {
	m.state, m.status, m.err, m.offset = nil, nil, nil, 0
	m.result, m.resultErr, m.confirm = "", nil, nil
	return m.refresh()
}

// askResubmit asks for a y before resubmitting the tasks the status
// shown says failed or are missing; while their states are unknown
// (squeue failed: Status.Refusal) it refuses and says why.
func (m *Model) askResubmit() tea.Cmd {
	switch {
	case m.submitting:
		m.resultErr = errors.New("a resubmit is on its way: wait for its answer")
		return nil
	case m.state == nil || m.status == nil:
		m.resultErr = fmt.Errorf("no job folder read yet: nothing to resubmit")
		return nil
	}
	var ue *cluster.UnknownError
	if errors.As(m.status.Refusal(), &ue) {
		m.result, m.resultErr = "", refused(m.Dir(), ue)
		return nil
	}
	redo := m.status.Redo()
	switch {
	case len(redo) == 0 && m.status.Complete():
		m.result, m.resultErr = cluster.NothingLeft(m.Dir()), nil
		return nil
	case len(redo) == 0 && (m.status.Merged || m.status.Counts().Active() > 0 || m.status.MergeLive()):
		m.result, m.resultErr = "no task failed or is missing: nothing to resubmit", nil
		return nil
	}
	m.asking, m.confirm = true, redo
	m.result, m.resultErr = "", nil
	return nil
}

// openMerged opens the merged session in the results screen, when the
// merge saved it in the workbench's sessions database.
func (m *Model) openMerged() tea.Cmd {
	id, why := m.merged()
	if why != "" {
		m.host.Do(common.ErrMsg{Err: errors.New(why)})
		return nil
	}
	if m.host.Running() {
		m.host.Do(common.ErrMsg{Err: errors.New("a study is computing: open the merged session once it ends (esc goes back to it)")})
		return nil
	}
	m.openGen++
	m.result = fmt.Sprintf("opening session %d%s", id, m.ctx.Theme.Ellipsis)
	return common.Tag(common.SlurmScreen, openCmd(m.openGen, m.cfg.Store, m.cfg.Load, m.ctx.Registry, id))
}

// merged is the merged session enter opens, or why there is none to
// open here.
func (m *Model) merged() (int64, string) {
	s := m.status
	switch {
	case s == nil:
		return 0, "no job folder read yet"
	case s.Saved == nil || len(s.Saved.Sessions) == 0:
		if s.Merged {
			return 0, "merged.json is written but the merge recorded no session (--no-save, or a job folder of an older sweepbench): see sweepbench sessions"
		}
		return 0, "not merged yet: the merge job saves the session when every shard is there"
	case m.cfg.Store == nil:
		return 0, fmt.Sprintf("the merged session is in %s, and this workbench has no sessions database", s.Saved.DB)
	case !sameFile(s.Saved.DB, m.cfg.Store.Path()):
		return 0, fmt.Sprintf("the merged session %d is in %s, not in this workbench's database: open it with sweepbench tui --db %s",
			s.Saved.Sessions[0], s.Saved.DB, s.Saved.DB)
	}
	return s.Saved.Sessions[0], ""
}
