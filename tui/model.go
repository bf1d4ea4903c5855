package tui

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/components/helpview"
	"sweepbench/tui/components/statusbar"
	"sweepbench/tui/keys"
	benchscreen "sweepbench/tui/screens/bench"
	"sweepbench/tui/screens/results"
	"sweepbench/tui/screens/run"
	sessionscreen "sweepbench/tui/screens/sessions"
	"sweepbench/tui/screens/setup"
	slurmscreen "sweepbench/tui/screens/slurm"
	"sweepbench/tui/theme"
)

// Minimum terminal size the layout is designed for.
const minW, minH = 60, 16

// Model is the root model: it owns the terminal's size, the screen on
// display, the tab bar and the status line around it, and the help
// overlay; it routes keys to the screen on display and each screen's
// answers (common.ScreenMsg) to that screen, and carries out what the
// screens ask of each other (common.Host). It owns the run's state,
// which it hands to the screens that show it, and the status line's,
// which the screens change by message (common.ErrMsg, InfoMsg...). The
// screens (tui/screens/*) hold everything else.
type Model struct {
	ctx    *common.Context
	state  *common.RunState // the current run: the setup, run and results screens'
	status common.Status    // the status line's error, warning and note
	bar    *statusbar.Model

	screen    common.ScreenID
	prev      common.ScreenID // where esc from the sessions, bench or Slurm screen goes back to
	showHelp  bool
	quitAsked bool // q during a sweep: a second q quits, any other key goes on
	quitting  bool // the last frame is empty: nothing is left behind

	setup    *setup.Model
	run      *run.Model
	results  *results.Model
	sessions *sessionscreen.Model
	bench    *benchscreen.Model
	slurm    *slurmscreen.Model
	screens  [common.NumScreens]common.Screen
}

var _ common.Host = (*Model)(nil)

// newModel builds the root model. deterministic masks timings and machine
// facts (tests).
func newModel(parent context.Context, cfg Config, profile termenv.Profile, dark, deterministic bool) *Model {
	ctx := &common.Context{
		Theme:         theme.New(profile, dark),
		Keys:          keys.Default(),
		Registry:      cfg.Registry,
		DataAllowed:   cfg.DataAllowed,
		DataRoots:     cfg.DataRoots,
		Deterministic: deterministic,
	}
	m := &Model{ctx: ctx, state: common.NewRunState()}
	m.bar = statusbar.New(ctx, m.state, &m.status)
	m.setup = setup.New(ctx, m.state, m, cfg.Flags.Spec, cfg.Flags.DataGiven)
	if len(cfg.Flags.Datasets) > 0 {
		m.setup.SetData(cfg.Flags.Datasets)
	}
	studies := parent
	if cfg.Background != nil {
		studies = cfg.Background
	}
	m.run = run.New(ctx, m.state, m, studies, run.Config{Store: cfg.Sessions, StoreErr: cfg.StoreErr, NoSave: cfg.NoSave,
		Gate: cfg.Gate, Detachable: cfg.Background != nil, Preflight: cfg.Preflight})
	m.results = results.New(ctx, m.state, m, cfg.Sessions, cfg.LoadSession)
	m.sessions = sessionscreen.New(ctx, m, sessionscreen.Config{Store: cfg.Sessions, StoreErr: cfg.StoreErr, Load: cfg.LoadSession})
	m.bench = benchscreen.New(ctx, m, parent, benchscreen.Config{Rungs: cfg.Rungs, Repeat: cfg.BenchRepeat,
		Study: func() *engine.Study { s, _, _ := m.setup.Build(); return s }})
	m.slurm = slurmscreen.New(ctx, m, parent, slurmscreen.Config{Runner: cfg.SlurmRunner, Dirs: cfg.SlurmDirs,
		Store: cfg.Sessions, Load: cfg.LoadSession,
		Unavailable: "The Slurm screen is not available in this workbench: it reads job folders and runs sbatch, squeue and sacct " +
			"on the machine it runs on, which over sweepbench serve is the server's. Follow a job folder where you submit to the " +
			"cluster: sweepbench tui --slurm-dir DIR, or sweepbench slurm status DIR."})
	m.screens = [common.NumScreens]common.Screen{
		common.SetupScreen: m.setup, common.RunScreen: m.run, common.ResultsScreen: m.results,
		common.SessionsScreen: m.sessions, common.BenchScreen: m.bench, common.SlurmScreen: m.slurm,
	}
	if len(cfg.SlurmDirs) > 0 && cfg.SlurmRunner != nil {
		m.screen, m.prev = common.SlurmScreen, common.SetupScreen // tui --slurm-dir: the folder first
	}
	return m
}

// Init loads the dataset named on the command line, if any, and reads
// the job folder when the workbench opens on the Slurm screen.
func (m *Model) Init() tea.Cmd {
	if m.screen == common.SlurmScreen {
		return tea.Batch(m.setup.Init(), m.slurm.Shown(true))
	}
	return m.setup.Init()
}

// Update routes a message. A panic in any component is turned into an
// error on the status line: the workbench keeps running.
func (m *Model) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			m.status.SetErr(fmt.Errorf("internal error: %v (%s)", r, firstFrames(debug.Stack())))
			cmd = nil
		}
	}()
	return m, m.update(msg)
}

func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i, l := range lines {
		if strings.Contains(l, "panic(") && i+3 < len(lines) {
			return strings.TrimSpace(lines[i+3])
		}
	}
	return ""
}

// MaxWidth and MaxHeight bound the screen the workbench draws: a terminal
// larger than that (a client may claim 65535x65535) gets it in its top
// left corner, so the size a client sends cannot take the memory a screen
// of that size would.
const (
	MaxWidth  = 1000
	MaxHeight = 500
)

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.ctx.Width, m.ctx.Height = min(msg.Width, MaxWidth), min(msg.Height, MaxHeight)
		m.layout()
	case tea.KeyMsg:
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !m.filterTyping() {
			// Characters that arrive together (lag, a paste) come as one
			// message: each acts as its own key, in order. A pasted one
			// keeps Paste, so it types into a text field but never acts as
			// a binding.
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				if m.quitting {
					break
				}
				one := msg
				one.Runes = []rune{r}
				cmds = append(cmds, m.update(one))
			}
			return tea.Sequence(cmds...)
		}
		before, errBefore, infoBefore, seq := m.screen, m.status.LastErr, m.status.Info, m.status.ErrSeq()
		cmd := m.key(msg)
		// An error the user has had a key since steps aside for the key
		// hints (raised again, it is said again); a bad flag found at
		// start stays until a run.
		if errBefore != "" && m.status.ErrSeq() == seq && errBefore != m.status.StartErr {
			m.status.ErrAside = true
		}
		// An error or a note that was on the screen the user leaves is
		// stale there: it goes (one raised by this key stays).
		if m.screen != before && errBefore != "" && m.status.LastErr == errBefore && errBefore != m.status.StartErr {
			m.status.SetErr(nil)
		}
		if m.screen != before && infoBefore != "" && m.status.Info == infoBefore {
			m.status.Info = ""
		}
		return cmd
	case common.ScreenMsg:
		if msg.ID >= 0 && msg.ID < common.NumScreens {
			return m.screens[msg.ID].Update(msg.Msg)
		}
	case spinner.TickMsg:
		// Each spinner ticks only while it is shown (its screen says), so
		// an idle workbench sends nothing over the wire.
		var cmds []tea.Cmd
		for _, s := range m.screens {
			cmds = append(cmds, s.Update(msg))
		}
		return tea.Batch(cmds...)
	case common.ErrMsg, common.StartErrMsg, common.InfoMsg, common.WarnMsg, common.SavedMsg:
		m.status.Apply(msg)
	case common.RunMsg:
		return m.Do(msg)
	case common.SelectMsg, common.MetricMsg:
		return m.results.Update(msg)
	default:
		// The form's and the dataset pane's messages, and the file
		// picker's reads of directories.
		return m.setup.Update(msg)
	}
	return nil
}

// filterTyping reports whether the metrics filter's text field takes the
// keys (it takes several characters at once as they came).
func (m *Model) filterTyping() bool {
	return !m.showHelp && m.screen == common.ResultsScreen && m.results.Editing()
}

// key handles a key press: the workbench's own keys (quit, help, the
// sessions and bench screens) unless a text field takes it, then the
// screen's.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.ctx.Keys
	if key.Matches(msg, k.ForceQuit) {
		return m.quit()
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Help), key.Matches(msg, k.Back), key.Matches(msg, k.HelpAnywhere):
			m.showHelp = false
		case key.Matches(msg, k.Quit):
			return m.quit()
		}
		return nil
	}
	if !m.run.Running() && m.quitAsked { // the sweep ended meanwhile
		m.quitAsked = false
		m.run.AskQuit(false)
	}
	if key.Matches(msg, k.HelpAnywhere) && !m.quitAsked {
		m.showHelp = true // in a text field too, where ? is text
		return nil
	}
	scr := m.screens[m.screen]
	if t, ok := scr.(common.Taker); ok && t.Takes(msg) {
		return scr.Update(msg) // in a text field keys are text
	}
	switch {
	case key.Matches(msg, k.Quit) && m.run.Running() && !m.quitAsked:
		// A sweep computes: ask first (what completed is saved).
		m.quitAsked = true
		m.run.AskQuit(true)
		return nil
	case key.Matches(msg, k.Quit):
		return m.quit()
	case m.quitAsked:
		m.quitAsked = false // any other key: go on
		m.run.AskQuit(false)
		return nil
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return nil
	}
	// The sessions, bench and Slurm screens, except while a removal waits
	// for its answer (a resubmit's question takes every key: Takes). A
	// study that computes goes on meanwhile (issue 15, defect 5): esc
	// there comes back to it.
	if !(m.screen == common.SessionsScreen && m.sessions.Confirming()) {
		switch {
		case key.Matches(msg, k.Sessions) && m.screen != common.SessionsScreen:
			return m.open(common.SessionsScreen)
		case key.Matches(msg, k.Bench) && m.screen != common.BenchScreen:
			return m.open(common.BenchScreen)
		case key.Matches(msg, k.Slurm) && m.screen != common.SlurmScreen:
			return m.open(common.SlurmScreen)
		}
	}
	return scr.Update(msg)
}

func (m *Model) quit() tea.Cmd {
	if !m.run.Kept() { // K on the run screen (sweepbench serve): it computes on
		m.run.Stop()
	}
	m.bench.Stop()
	m.quitting = true
	return tea.Quit
}

// Do implements common.Host: the screens' intents, carried out at once.
func (m *Model) Do(intent tea.Msg) tea.Cmd {
	if m.status.Apply(intent) { // a status line message
		return nil
	}
	switch msg := intent.(type) {
	case common.ShowMsg:
		if msg.ID == common.RunScreen {
			m.showHelp = false // a study that starts is shown over the help
		}
		return m.show(msg.ID)
	case common.BackMsg:
		return m.back()
	case common.FormMsg:
		cmd := m.setup.Edit(msg.FromStudy)
		return tea.Batch(cmd, m.show(common.SetupScreen))
	case common.RunMsg:
		s := msg.Study
		if s == nil {
			if s = m.setup.Submit(); s == nil {
				return nil // the form says why
			}
		}
		if ds := m.setup.Suite(); msg.Study == nil && len(ds) > 1 {
			return m.run.StartSuite(s, ds)
		}
		return m.run.Start(s)
	case common.ReportMsg:
		return m.report(msg)
	case common.OpenedMsg:
		cmd := m.results.ShowSession(msg)
		return tea.Batch(cmd, m.show(common.ResultsScreen))
	case common.ResumeMsg:
		m.state.Note = msg.Note
		return m.run.Resume(msg.ID, msg.Study)
	}
	return nil
}

// Screen implements common.Host.
func (m *Model) Screen() common.ScreenID { return m.screen }

// Running implements common.Host.
func (m *Model) Running() bool { return m.run.Running() }

// Status implements common.Host.
func (m *Model) Status() common.Status { return m.status }

// report shows a study's report on the results screen, unless the user
// browses the sessions or the bench: then the results wait on their
// screen (esc goes there) and the screen in use stays.
func (m *Model) report(msg common.ReportMsg) tea.Cmd {
	away := m.browsing(m.screen)
	cmd := m.results.Show(msg.Report, msg.Asked, msg.Err, msg.Session)
	if !away {
		return tea.Batch(cmd, m.show(common.ResultsScreen))
	}
	m.prev = common.ResultsScreen
	m.status.Info = strings.TrimSuffix("the study finished: esc shows its results; "+m.status.Info, "; ")
	m.layout()
	if m.screen == common.SessionsScreen {
		cmd = tea.Batch(cmd, m.sessions.Refresh()) // its session is no longer running
	}
	return cmd
}

// show puts screen id on display: the screen left is told, the screen
// shown too (even when it is on display already: it reads its data
// again), and every screen is sized again.
func (m *Model) show(id common.ScreenID) tea.Cmd {
	from := m.screen
	m.screen = id
	m.layout()
	var cmds []tea.Cmd
	if from != id {
		cmds = append(cmds, m.screens[from].Shown(false))
	}
	cmds = append(cmds, m.screens[id].Shown(true))
	return tea.Batch(cmds...)
}

// browsing reports whether id is a screen a global key opens (sessions,
// bench, Slurm), which esc leaves for the screen in use before.
func (m *Model) browsing(id common.ScreenID) bool {
	return id == common.SessionsScreen || id == common.BenchScreen || id == common.SlurmScreen
}

// open shows the sessions, the bench or the Slurm screen from a key: esc
// there goes back to the screen in use before.
func (m *Model) open(id common.ScreenID) tea.Cmd {
	if !m.browsing(m.screen) {
		m.prev = m.screen
	}
	m.showHelp = false
	return m.show(id)
}

// back leaves the sessions, bench or Slurm screen for the one it was
// opened from; while a study computes, for the run screen.
func (m *Model) back() tea.Cmd {
	if m.run.Running() {
		return m.show(common.RunScreen)
	}
	to := m.prev
	if to == common.ResultsScreen && m.state.Results == nil || to == common.RunScreen || m.browsing(to) {
		to = common.SetupScreen
	}
	return m.show(to)
}

// layout sizes every screen for the terminal: the body between the tab
// bar and the status line.
func (m *Model) layout() {
	W, H := m.ctx.Width, m.ctx.Height
	m.bar.SetWidth(W)
	for _, s := range m.screens {
		s.SetSize(W, H-2)
	}
}

// View draws the screen. A panic while drawing shows as an error screen.
func (m *Model) View() (out string) {
	t := m.ctx.Theme
	defer func() {
		if r := recover(); r != nil {
			out = t.Fit(t.Error.Render(fmt.Sprintf("internal error while drawing: %v", r))+
				"\n\nq quits; the terminal is restored on exit.", m.ctx.Width, m.ctx.Height)
		}
	}()
	W, H := m.ctx.Width, m.ctx.Height
	if W == 0 || H == 0 || m.quitting {
		return ""
	}
	if W < minW || H < minH {
		msg := fmt.Sprintf("sweepbench needs at least %dx%d (this terminal is %dx%d); q quits", minW, minH, W, H)
		return t.Sanitize(t.Fit(strings.Join(t.Wrap(msg, W), "\n"), W, H))
	}
	bodyH := H - 2
	km := m.keyMap()
	var body string
	if m.showHelp {
		body = helpview.View(m.ctx, km, W, bodyH)
	} else {
		body = m.screens[m.screen].View()
	}
	m.bar.SetKeys(km)
	return t.Sanitize(m.header(W) + "\n" + t.Fit(body, W, bodyH) + "\n" + m.bar.View())
}

// header is the tab bar: the screens (the one on display marked), the
// results' panes when they show one at a time, else the study's grid.
func (m *Model) header(W int) string {
	t := m.ctx.Theme
	tab := func(name string, active bool) string {
		if active {
			if t.Plain {
				return "[" + name + "]"
			}
			return t.TabActive.Render(name)
		}
		return t.Tab.Render(name)
	}
	names := make([]string, common.NumScreens)
	for id := range common.NumScreens {
		names[id] = id.String()
	}
	if m.run.Running() && m.screen != common.RunScreen {
		// A study computes behind the screen in use: how far it is.
		names[common.RunScreen] = fmt.Sprintf("Run %.0f%%", 100*m.run.Fraction())
	}
	// tabs names the product (title), the first n screens and the
	// current one.
	tabs := func(n int, title bool) string {
		s := ""
		if title {
			s = t.Title.Render(" sweepbench ")
		}
		for id := range common.NumScreens {
			if int(id) < n || id == m.screen {
				s += " " + tab(names[id], id == m.screen)
			}
		}
		return s
	}
	s := tabs(len(names), true)
	if panes, focus, ok := m.results.PaneTabs(); ok && m.screen == common.ResultsScreen && !m.showHelp {
		p := t.Subtle.Render("  |")
		for i, name := range panes {
			p += " " + tab(name, i == focus)
		}
		// The pane tabs matter more than the other screens' names, and
		// those more than the product's; Setup (where esc goes) goes last.
		for n := len(names) - 1; n >= 1 && ansi.StringWidth(s+p) > W; n-- {
			s = tabs(n, true)
		}
		for _, n := range []int{1, 0} {
			if ansi.StringWidth(s+p) > W {
				s = tabs(n, false)
			}
		}
		s += p
	} else if st := m.state.Study; st != nil && (m.screen == common.RunScreen || m.screen == common.ResultsScreen) {
		if st.Grid.Strategy != nil {
			s += t.Subtle.Render("   " + st.Grid.Family() + " " + st.Grid.Text())
		} else {
			s += t.Subtle.Render(fmt.Sprintf("   hma %s x hma3 %s", st.Grid.HMA, st.Grid.HMA3))
		}
	}
	return t.Fit(s, W, 1)
}

// keyMap is the key map of the screen on display under the workbench's
// own keys: the status line's short help and the help overlay come from it.
func (m *Model) keyMap() help.KeyMap { return screenKeys{m.ctx.Keys, m.screens[m.screen]} }

// screenKeys is a screen's key map under the workbench's global keys.
type screenKeys struct {
	global *keys.KeyMap
	screen help.KeyMap
}

func (k screenKeys) ShortHelp() []key.Binding { return k.screen.ShortHelp() }

func (k screenKeys) FullHelp() [][]key.Binding {
	g := k.global
	return append([][]key.Binding{{g.Help, g.HelpAnywhere, g.Quit, g.ForceQuit, g.Sessions, g.Bench, g.Slurm}}, k.screen.FullHelp()...)
}
