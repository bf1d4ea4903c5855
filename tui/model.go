package tui

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/sessions"
	"sweepbench/tui/common"
	"sweepbench/tui/components/crossover"
	"sweepbench/tui/components/datasets"
	"sweepbench/tui/components/detail"
	"sweepbench/tui/components/form"
	"sweepbench/tui/components/heatmap"
	"sweepbench/tui/components/helpview"
	"sweepbench/tui/components/metrics"
	"sweepbench/tui/components/parity"
	"sweepbench/tui/components/robustness"
	"sweepbench/tui/components/runview"
	"sweepbench/tui/components/statusbar"
	"sweepbench/tui/keys"
	benchscreen "sweepbench/tui/screens/bench"
	sessionscreen "sweepbench/tui/screens/sessions"
	"sweepbench/tui/theme"
)

type screen = common.ScreenID

const (
	screenSetup    = common.SetupScreen
	screenRun      = common.RunScreen
	screenResults  = common.ResultsScreen
	screenSessions = common.SessionsScreen
	screenBench    = common.BenchScreen
)

// pane is a results pane, in tab order.
type pane int

const (
	paneMetrics pane = iota
	paneParity
	paneHeatmap
	paneCrossover
	paneDetail
	paneRobust
	nPanes
)

var paneNames = [nPanes]string{"Metrics", "Parity", "Heatmap", "Crossover", "Combo", "Robustness"}

// Minimum terminal size the layout is designed for.
const minW, minH = 60, 16

// Model is the root model: it owns the screen size, the screen and the
// focused pane, routes messages to the components and runs the engine
// through commands.go.
type Model struct {
	ctx    *common.Context
	cfg    Config
	parent context.Context
	// confirmRun names the large CPU study the user was last asked to
	// confirm (engine.Study.NeedsConfirmation): a second r for it runs it.
	confirmRun string

	screen     screen
	setupFocus int // 0 dataset pane, 1 form
	focus      pane
	selectFrom pane // the pane enter opened the crossover from (esc returns there)
	showHelp   bool

	datasets *datasets.Model
	form     *form.Model
	runv     *runview.Model
	metrics  *metrics.Model
	parity   *parity.Model
	heat     *heatmap.Model
	cross    *crossover.Model
	detail   *detail.Model
	robust   *robustness.Model
	status   *statusbar.Model
	sessions *sessionscreen.Model
	bench    *benchscreen.Model
	screens  [common.NumScreens]common.Screen

	// The sessions and bench screens.
	prevScreen screen  // where esc goes back to
	rawSpec    string  // the spec the loaded dataset came from
	loadSpec   string  // the spec last asked to load (loaded or not)
	loadedWith string  // loadKey of the form when it was asked
	chartsWhy  string  // why an opened session has no charts
	lastRunner *runner // the last runner started (Run waits for it)
	runFrom    screen  // where a run that shows nothing returns to

	run                *runner
	runGen, loadGen    int
	estGen, inspectGen int
	estimate           string
	deriveKey          string
	deriveErr          error
	rects              [nPanes]rect
	single             bool // results show one pane at a time
	devices            map[string]string
	lastEstKey         string
	startErr           string        // a bad flag found at start (kept until a run)
	formErr            string        // the form's error last put on the status line
	filterErr          string        // the metrics filter's error last put on the status line
	quitting           bool          // the last frame is empty: nothing is left behind
	quitAsked          bool          // q during a sweep: a second q quits, any other key goes on
	queued             *engine.Study // the study to start when the running one ends
	browsing           screen        // the screen in use when a study ended elsewhere
	// editOf is the results the form was last filled from (e, esc): the
	// form keeps its edits while the same results are on screen.
	editOf *common.Results
}

type rect struct{ w, h int }

// newModel builds the root model. deterministic masks timings and machine
// facts (tests).
func newModel(parent context.Context, cfg Config, profile termenv.Profile, dark, deterministic bool) *Model {
	ctx := &common.Context{
		Theme:         theme.New(profile, dark),
		Keys:          keys.Default(),
		Registry:      cfg.Registry,
		Deterministic: deterministic,
		Selected:      -1,
		Metric:        "sharpe",
	}
	f := cfg.Flags
	m := &Model{ctx: ctx, cfg: cfg, parent: parent, devices: map[string]string{}}
	m.datasets = datasets.New(ctx, f.Data)
	m.form = form.New(ctx, m.formSpecs())
	m.runv = runview.New(ctx)
	m.metrics = metrics.New(ctx)
	ctx.Keep = m.metrics.Keeps
	m.parity = parity.New(ctx)
	m.heat = heatmap.New(ctx)
	m.cross = crossover.New(ctx)
	m.detail = detail.New(ctx)
	m.robust = robustness.New(ctx)
	m.status = statusbar.New(ctx)
	m.sessions = sessionscreen.New(ctx, m, sessionscreen.Config{Store: cfg.Sessions, StoreErr: cfg.StoreErr, Load: cfg.LoadSession})
	m.screens[common.SessionsScreen] = m.sessions
	m.bench = benchscreen.New(ctx, m, parent, benchscreen.Config{Rungs: cfg.Rungs, Repeat: cfg.BenchRepeat,
		Study: func() *engine.Study { s, _, _ := m.buildStudy(); return s }})
	m.screens[common.BenchScreen] = m.bench
	return m
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// formSpecs lists the form's fields, prefilled from the flags.
func (m *Model) formSpecs() []form.Spec {
	f := m.cfg.Flags
	opts := func(vals ...string) []form.Option {
		out := make([]form.Option, len(vals))
		for i, v := range vals {
			out[i] = form.Option{Value: v, Label: v}
		}
		return out
	}
	tfs := []form.Option{{Value: "", Label: "as loaded"}}
	for _, tf := range data.Timeframes() {
		tfs = append(tfs, form.Option{Value: tf, Label: tf})
	}
	bes := []form.Option{{Value: "auto", Label: "auto"}}
	for _, b := range m.ctx.Registry.All() {
		o := form.Option{Value: b.Name(), Label: b.Name()}
		if err := b.Available(); err != nil {
			o.Disabled = err.Error()
		}
		bes = append(bes, o)
	}
	leanOpts := []form.Option{{Value: "", Label: "from the path"}}
	for _, a := range data.LEANAssets() {
		leanOpts = append(leanOpts, form.Option{Value: a, Label: a})
	}
	// The objective: any metric of SPEC, sharpe first (the default).
	objs := opts("sharpe")
	for _, n := range engine.MetricNames {
		if n != "sharpe" {
			objs = append(objs, form.Option{Value: n, Label: n})
		}
	}
	v := formValues(f.Spec)
	return []form.Spec{
		{Key: form.HMA, Label: "HMA range", Value: v[form.HMA]},
		{Key: form.HMA3, Label: "HMA3 range", Value: v[form.HMA3]},
		{Key: form.Fee, Label: "fee/side", Value: v[form.Fee]},
		{Key: form.Mode, Label: "mode", Value: v[form.Mode], Options: opts("long-short", "long-only")},
		{Key: form.Source, Label: "source", Value: v[form.Source], Options: opts("close", "hl2", "hlc3", "ohlc4")},
		{Key: form.Timeframe, Label: "timeframe", Value: v[form.Timeframe], Options: tfs},
		{Key: form.Head, Label: "head bars", Value: v[form.Head]},
		{Key: form.Backend, Label: "backend", Value: v[form.Backend], Options: bes},
		{Key: form.Precision, Label: "precision", Value: v[form.Precision], Options: opts("both", "fp64", "fp32")},
		{Key: form.WMA, Label: "WMA (fp32)", Value: v[form.WMA], Options: opts("direct", "prefix")},
		{Key: form.Borderline, Label: "borderline", Value: v[form.Borderline]},
		{Key: form.BarsPerYear, Label: "bars/year", Value: v[form.BarsPerYear]},
		{Key: form.TZ, Label: "time zone", Value: v[form.TZ], Free: true},
		{Key: form.LEANAsset, Label: "LEAN asset", Value: v[form.LEANAsset], Options: leanOpts},
		// The window of bars, robustness, the objective and its
		// constraints: rows of their own under the sweep's.
		{Key: form.From, Label: "from", Value: v[form.From], Free: true, Placeholder: "first bar", Group: 1},
		{Key: form.To, Label: "to", Value: v[form.To], Free: true, Placeholder: "last bar", Group: 1},
		{Key: form.Blocks, Label: "blocks", Value: v[form.Blocks], Group: 1},
		{Key: form.WF, Label: "walk-forward", Value: v[form.WF], Free: true, Placeholder: "off", Group: 1},
		{Key: form.Objective, Label: "objective", Value: v[form.Objective], Options: objs, Group: 1},
		{Key: form.MinTrades, Label: "min trades", Value: v[form.MinTrades], Group: 1},
		{Key: form.MaxDrawdown, Label: "max drawdown", Value: v[form.MaxDrawdown], Group: 1},
	}
}

// formValues is spec as the form's field values (the inverse of spec()),
// empty fields at engine.DefaultSpec's values.
func formValues(s engine.Spec) map[string]string {
	d := engine.DefaultSpec()
	tol := s.Borderline
	if tol == 0 {
		tol = d.Borderline
	}
	return map[string]string{
		form.HMA: orDefault(s.HMA, d.HMA), form.HMA3: orDefault(s.HMA3, d.HMA3), form.Fee: engine.FormatFloat(s.Fee),
		form.Mode: orDefault(s.Mode, d.Mode), form.Source: orDefault(s.Source, d.Source),
		form.Timeframe: s.Timeframe, form.Head: fmt.Sprint(s.Head),
		form.Backend: orDefault(s.Backend, d.Backend), form.Precision: orDefault(s.Precision, d.Precision),
		form.WMA: orDefault(s.WMA, d.WMA), form.Borderline: engine.FormatFloat(tol),
		form.BarsPerYear: engine.FormatFloat(s.BarsPerYear), form.TZ: s.TZ, form.LEANAsset: s.LEANAsset,
		form.From: s.From, form.To: s.To, form.Blocks: fmt.Sprint(s.Blocks), form.WF: s.WF,
		form.Objective: orDefault(strings.ToLower(strings.TrimSpace(s.Objective)), "sharpe"),
		form.MinTrades: fmt.Sprint(s.MinTrades), form.MaxDrawdown: engine.FormatFloat(s.MaxDrawdown),
	}
}

// formFromStudy makes the form describe the study on screen (an opened
// or resumed session's, or the last run's), so that editing it and enter
// run that study changed, not the form's earlier one: its Spec becomes the
// form's values, and its dataset is loaded when the form has another.
func (m *Model) formFromStudy() tea.Cmd {
	s := m.ctx.Study
	if s == nil || s.Spec.Data == "" {
		return nil
	}
	if m.editOf == m.ctx.Results && m.ctx.Results != nil {
		// The form was filled from these results already and may hold
		// edits since (esc went back to look at them): keep them.
		return m.validate()
	}
	m.editOf = m.ctx.Results
	m.cfg.Flags.Spec = s.Spec
	m.form.SetValues(formValues(s.Spec))
	if s.Spec.Data != m.rawSpec {
		return m.load(s.Spec.Data)
	}
	return m.validate()
}

// Init loads the dataset named on the command line, if any.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if b := m.cfg.Flags.Backend; b != "" && b != "auto" {
		if _, _, err := m.ctx.Registry.Lookup(b); err != nil {
			m.setErr(errors.New(m.form.Describe(err)))
			m.startErr = m.ctx.LastErr
		}
	}
	if m.cfg.Flags.DataGiven && m.cfg.Flags.Data != "" {
		m.setupFocus = 1
		cmds = append(cmds, m.load(m.cfg.Flags.Data))
	}
	cmds = append(cmds, m.focusSetup())
	m.validate()
	return tea.Batch(cmds...)
}

// load reads the dataset spec names with the form's loading fields (time
// zone, LEAN asset) over the flags'.
func (m *Model) load(spec string) tea.Cmd {
	m.loadGen++
	f := m.cfg.Flags.Spec
	if m.form != nil {
		cur, _ := m.spec()
		f.TZ, f.LEANAsset = cur.TZ, cur.LEANAsset
	}
	m.loadSpec, m.loadedWith = spec, loadKey(f)
	return tea.Batch(m.datasets.Loading(spec), loadCmd(m.loadGen, spec, f))
}

// loadKey is what of a Spec decides how its file is read (besides the
// file): a change reloads it.
func loadKey(s engine.Spec) string { return s.TZ + "\x00" + s.LEANAsset }

// reloadIfNeeded loads the last dataset asked for again when the form's
// time zone or LEAN asset changed since, and both are valid.
func (m *Model) reloadIfNeeded() tea.Cmd {
	if m.loadSpec == "" {
		return nil
	}
	cur, _ := m.spec()
	if loadKey(cur) == m.loadedWith {
		return nil
	}
	if _, err := cur.LoadOptions(); err != nil {
		return nil // the form marks the field
	}
	return m.load(m.loadSpec)
}

func (m *Model) setErr(err error) {
	if err == nil {
		m.ctx.LastErr = ""
		return
	}
	m.ctx.LastErr = strings.ReplaceAll(err.Error(), "\n", " ")
}

// Update routes a message. A panic in any component is turned into an
// error on the status line: the workbench keeps running.
func (m *Model) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			m.setErr(fmt.Errorf("internal error: %v (%s)", r, firstFrames(debug.Stack())))
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

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.ctx.Width, m.ctx.Height = msg.Width, msg.Height
		m.layout()
		return nil
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
		before, errBefore, infoBefore := m.screen, m.ctx.LastErr, m.ctx.Info
		cmd := m.key(msg)
		// An error or a note that was on the screen the user leaves is
		// stale there: it goes (one raised by this key stays).
		if m.screen != before && errBefore != "" && m.ctx.LastErr == errBefore && errBefore != m.startErr {
			m.setErr(nil)
		}
		if m.screen != before && infoBefore != "" && m.ctx.Info == infoBefore {
			m.ctx.Info = ""
		}
		return cmd
	case spinner.TickMsg:
		// Each spinner ticks only while it is shown, so an idle
		// workbench sends nothing over the wire.
		cmd := m.datasets.Update(msg)
		if m.run != nil {
			cmd = tea.Batch(cmd, m.runv.Update(msg))
		}
		return tea.Batch(cmd, m.bench.Update(msg))
	case common.ScreenMsg:
		if s := m.screens[msg.ID]; s != nil {
			return s.Update(msg.Msg)
		}
	case common.ErrMsg:
		m.setErr(msg.Err)
	case common.LoadMsg:
		return m.load(msg.Spec)
	case loadedMsg:
		if msg.gen != m.loadGen {
			return nil
		}
		m.datasets.Loaded(msg.err)
		if msg.err != nil {
			m.setErr(msg.err)
			return nil
		}
		m.ctx.Raw, m.deriveKey, m.rawSpec = msg.ds, "", msg.spec
		if m.ctx.LastErr != m.startErr {
			m.setErr(nil) // what went wrong before is resolved; a bad flag stays
		}
		m.setupFocus = 1
		return tea.Batch(m.focusSetup(), m.validate())
	case common.FormChangedMsg:
		return tea.Batch(m.validate(), m.reloadIfNeeded())
	case estimateTickMsg:
		if msg.gen != m.estGen {
			return nil
		}
		if s, _, _ := m.buildStudy(); s != nil {
			return estimateCmd(msg.gen, s)
		}
	case estimateMsg:
		if msg.gen != m.estGen {
			return nil
		}
		if msg.err != nil {
			m.estimate = "estimate: " + msg.err.Error()
		} else if m.ctx.Deterministic {
			m.estimate = "estimate: - (timings masked)"
		} else {
			m.estimate = fmt.Sprintf("estimate ~%s on the CPU reference, %d cores (calibrated in %s)",
				common.FormatDuration(msg.est.Total), msg.est.Workers, common.FormatDuration(msg.est.Calibrate))
			if m.ctx.Backend != "reference" {
				m.estimate = fmt.Sprintf("estimate at most ~%s (the CPU reference's time; %s should be faster)",
					common.FormatDuration(msg.est.Total), m.ctx.Backend)
			}
		}
		m.validate()
	case common.RunMsg:
		return m.startRun(nil)
	case progressMsg:
		if m.run == nil || msg.gen != m.run.gen {
			return nil
		}
		m.runv.Progress(msg.ps)
		return m.run.next()
	case doneMsg:
		if m.run == nil || msg.gen != m.run.gen {
			return nil
		}
		m.runv.Progress(msg.ps)
		return m.finish(msg)
	case common.SelectMsg:
		return m.selectCombo(msg.Index)
	case common.MetricMsg:
		m.ctx.Metric = msg.Name
		m.metrics.Reload()
	case inspectTickMsg:
		if msg.gen == m.inspectGen && m.ctx.Study != nil && m.ctx.Selected >= 0 {
			return m.inspectCmd(msg.gen)
		}
	case inspectMsg:
		if msg.gen != m.inspectGen {
			return nil
		}
		m.ctx.Inspect = msg.ins
		if msg.ins.Err != nil {
			m.setErr(msg.ins.Err)
		}
		m.cross.Reload()
		m.detail.Reload()
	default:
		// The file picker reads directories through its own messages.
		if m.datasets.Picking() {
			return m.datasets.Update(msg)
		}
	}
	return nil
}

// filterTyping reports whether the metrics filter's text field takes the
// keys (it takes several characters at once as they came).
func (m *Model) filterTyping() bool {
	return !m.showHelp && m.screen == screenResults && m.metrics.Editing()
}

// key handles a key press: global keys first, then the screen's, then the
// focused component's.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.ctx.Keys
	if key.Matches(msg, k.ForceQuit) {
		return m.quit()
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Help), key.Matches(msg, k.Back):
			m.showHelp = false
		case key.Matches(msg, k.Quit):
			return m.quit()
		}
		return nil
	}
	// A text field takes every key but the ones that leave it.
	if m.screen == screenResults && m.metrics.Editing() {
		cmd := m.metrics.Update(msg)
		switch err := m.metrics.Err(); {
		case err != nil:
			m.setErr(err)
			m.filterErr = m.ctx.LastErr
		case m.filterErr != "" && m.ctx.LastErr == m.filterErr:
			m.setErr(nil) // the filter was fixed, or given up
			m.filterErr = ""
		}
		return cmd
	}
	typing := m.screen == screenSetup && m.setupFocus == 1 && m.form.Takes(msg)
	picking := m.screen == screenSetup && m.datasets.Picking()
	if m.run == nil && m.quitAsked { // the sweep ended meanwhile
		m.quitAsked = false
		m.runv.AskQuit(false)
	}
	if !typing && !picking {
		switch {
		case key.Matches(msg, k.Quit) && m.run != nil && !m.quitAsked:
			// A sweep computes: ask first (what completed is saved).
			m.quitAsked = true
			m.runv.AskQuit(true)
			return nil
		case key.Matches(msg, k.Quit):
			return m.quit()
		case m.quitAsked:
			m.quitAsked = false // any other key: go on
			m.runv.AskQuit(false)
			return nil
		case key.Matches(msg, k.Help):
			m.showHelp = true
			return nil
		}
		// The screens' keys, except while a removal waits for its answer.
		// A study that computes goes on while the sessions or the bench
		// screen is open (issue 15, defect 5): esc there comes back to it.
		free := !(m.screen == screenSessions && m.sessions.Confirming())
		switch {
		case free && key.Matches(msg, k.Sessions) && m.screen != screenSessions:
			return m.open(screenSessions)
		case free && key.Matches(msg, k.Bench) && m.screen != screenBench:
			return m.open(screenBench)
		}
	}
	switch m.screen {
	case screenSessions:
		return m.sessions.Update(msg)
	case screenBench:
		return m.bench.Update(msg)
	case screenSetup:
		return m.setupKey(msg, typing, picking)
	case screenRun:
		switch {
		case key.Matches(msg, k.Back) && m.run != nil:
			m.run.cancel()
			m.runv.SetCancelling()
		case key.Matches(msg, k.Edit) && m.run != nil:
			// The form, to queue the next study while this one computes.
			m.screen, m.setupFocus = screenSetup, 1
			m.layout()
			m.syncKeyContext()
			return m.focusSetup()
		}
		return nil
	}
	return m.resultsKey(msg)
}

func (m *Model) setupKey(msg tea.KeyMsg, typing, picking bool) tea.Cmd {
	k := m.ctx.Keys
	if picking {
		return m.datasets.Update(msg)
	}
	switch {
	case key.Matches(msg, k.NextPane), key.Matches(msg, k.PrevPane):
		m.setupFocus = 1 - m.setupFocus
		return m.focusSetup()
	case key.Matches(msg, k.Back) && m.run != nil:
		// A study computes: back to it.
		m.screen = screenRun
		m.layout()
		m.syncKeyContext()
		return m.form.Focus(false)
	case key.Matches(msg, k.Back):
		if m.ctx.Results != nil {
			m.screen = screenResults
			m.layout()
			return m.focusSetup()
		}
		if m.setupFocus == 1 {
			m.setupFocus = 0
			return m.focusSetup()
		}
		return nil
	case !typing && key.Matches(msg, k.Rerun):
		return m.startRun(nil)
	}
	if m.setupFocus == 0 {
		return m.datasets.Update(msg)
	}
	return m.form.Update(msg)
}

func (m *Model) focusSetup() tea.Cmd {
	m.syncKeyContext()
	return m.form.Focus(m.screen == screenSetup && m.setupFocus == 1)
}

func (m *Model) resultsKey(msg tea.KeyMsg) tea.Cmd {
	k := m.ctx.Keys
	switch {
	case key.Matches(msg, k.NextPane):
		m.setFocus((m.focus + 1) % nPanes)
	case key.Matches(msg, k.PrevPane):
		m.setFocus((m.focus + nPanes - 1) % nPanes)
	case key.Matches(msg, k.Back) && m.focus != paneMetrics:
		// Back from a pane goes to the pane enter came from (or the
		// table), not past the results: keys typed next are not form edits.
		to := m.selectFrom
		if to == m.focus || to >= nPanes {
			to = paneMetrics
		}
		m.selectFrom = paneMetrics
		m.setFocus(to)
	case key.Matches(msg, k.Back), key.Matches(msg, k.Edit):
		load := m.formFromStudy()
		m.screen = screenSetup
		m.setupFocus = 1
		m.layout()
		return tea.Batch(load, m.focusSetup())
	case key.Matches(msg, k.Filter) && m.focus != paneMetrics:
		// The filter belongs to the table: / from any pane opens it there,
		// so what is typed next is a filter, not a string of commands.
		m.setFocus(paneMetrics)
		return m.metrics.Update(msg)
	case key.Matches(msg, k.Rerun):
		return m.startRun(m.ctx.Study)
	case key.Matches(msg, k.NextMetric), key.Matches(msg, k.PrevMetric):
		cols := common.Columns()
		if m.ctx.Results.Report.Parity == nil {
			cols = engine.MetricNames
		}
		i := 0
		for j, c := range cols {
			if c == m.ctx.Metric {
				i = j
			}
		}
		d := 1
		if key.Matches(msg, k.PrevMetric) {
			d = len(cols) - 1
		}
		m.ctx.Metric = cols[(i+d)%len(cols)]
		m.metrics.Reload()
	case key.Matches(msg, k.Precision):
		if m.ctx.Prec == engine.FP64 && m.ctx.Results.R32 != nil {
			m.ctx.Prec = engine.FP32
		} else if m.ctx.Results.R64 != nil {
			m.ctx.Prec = engine.FP64
		}
		m.metrics.Reload() // the table follows p, as the heatmap does
	case key.Matches(msg, k.NextFlip), key.Matches(msg, k.PrevFlip):
		return m.cross.Update(msg)
	case key.Matches(msg, k.Columns):
		m.metrics.ToggleLayout() // the compact or the full metrics table
	case key.Matches(msg, k.HeatScale, k.HeatZoom, k.HeatValues):
		// The heatmap's view, from any pane (it is on screen beside them).
		return m.heat.Update(msg)
	case key.Matches(msg, k.Select) && m.focus <= paneHeatmap:
		m.selectFrom = m.focus
		m.setFocus(paneCrossover)
	case key.Matches(msg, k.Robustness) && m.focus != paneRobust:
		m.selectFrom = m.focus // esc goes back there
		m.setFocus(paneRobust)
	default:
		return m.pane(m.focus).Update(msg)
	}
	return nil
}

// pane is results pane p as the root lays it out and routes keys to it.
func (m *Model) pane(p pane) common.Pane {
	return [nPanes]common.Pane{paneMetrics: m.metrics, paneParity: m.parity, paneHeatmap: m.heat,
		paneCrossover: m.cross, paneDetail: m.detail, paneRobust: m.robust}[p]
}

func (m *Model) setFocus(p pane) {
	m.focus = p
	for q := range nPanes {
		if f, ok := m.pane(q).(common.Focuser); ok {
			f.Focus(q == p)
		}
	}
	m.layout()
}

func (m *Model) syncKeyContext() {
	k := m.ctx.Keys
	switch {
	case m.screen == screenRun:
		k.Context = keys.Running
	case m.screen == screenResults:
		k.Context = keys.Results
	case m.setupFocus == 1 && m.form.Typing():
		k.Context = keys.SetupTyping
	case m.setupFocus == 1:
		k.Context = keys.SetupChoice
	default:
		k.Context = keys.Setup
	}
}

func (m *Model) quit() tea.Cmd {
	m.stopRun()
	m.bench.Stop()
	m.quitting = true
	return tea.Quit
}

// stopRun cancels a running study (its goroutine ends on its own).
func (m *Model) stopRun() {
	if m.run != nil {
		m.run.cancel()
		m.run = nil
	}
}

// validate rebuilds the study from the form and shows the engine's verdict
// on it; a valid study gets a (debounced) time estimate.
func (m *Model) validate() tea.Cmd {
	s, perField, general := m.buildStudy()
	var info, notes []string
	var cmd tea.Cmd
	if s != nil {
		note := s.Note
		m.ctx.Backend = s.Backend.Name()
		m.ctx.Device = m.deviceOf(s.Backend)
		m.ctx.Note = note
		info = append(info, fmt.Sprintf("grid %d x %d = %s x %s on %s bars",
			s.Grid.HMA.Len(), s.Grid.HMA3.Len(), common.Plural(s.Grid.Len(), "combo"), common.Plural(len(s.Precisions), "precision"),
			common.Thousands(s.Dataset.Bars.Len())))
		key := fmt.Sprintf("%p|%v|%v|%v|%v|%v", s.Dataset, s.Grid, s.Params, s.Precisions, s.WMA, s.Backend.Name())
		if key != m.lastEstKey {
			m.lastEstKey = key
			m.estGen++
			m.estimate = "estimate: calibrating" + m.ctx.Theme.Ellipsis
			if m.ctx.Deterministic {
				m.estimate = "estimate: - (timings masked)"
			}
			gen := m.estGen
			cmd = tea.Tick(250*time.Millisecond, func(time.Time) tea.Msg { return estimateTickMsg{gen} })
		}
		info = append(info, m.estimate)
		// What auto picked, a fee that looks like a percentage, a lane on
		// the fallback; why other backends cannot run is listed below.
		notes = append(notes, common.NoteLines(note, m.ctx.Deterministic)...)
	} else {
		m.lastEstKey = ""
	}
	for _, b := range m.ctx.Registry.All() {
		if err := b.Available(); err != nil {
			notes = append(notes, fmt.Sprintf("%s unavailable: %v", b.Name(), err))
		}
	}
	m.form.SetErrors(perField, general, info, notes)
	// An error the form put on the status line goes once it is fixed (a
	// bad --backend flag stays until a run: the form shows auto instead).
	if m.formErr != "" && m.ctx.LastErr == m.formErr {
		still := general != nil && m.form.Describe(general) == m.formErr
		for _, e := range perField {
			still = still || m.form.Describe(e) == m.formErr
		}
		if !still {
			m.setErr(nil)
		}
	}
	return cmd
}

func (m *Model) deviceOf(b engine.Backend) string {
	if d, ok := m.devices[b.Name()]; ok {
		return d
	}
	d := ""
	if devs, err := b.Devices(); err == nil && len(devs) > 0 {
		d = devs[0].Name
	}
	m.devices[b.Name()] = d
	return d
}

// startRun starts s, or the study the form describes when s is nil.
func (m *Model) startRun(s *engine.Study) tea.Cmd {
	if s == nil {
		var perField map[string]error
		var general error
		s, perField, general = m.buildStudy()
		if s == nil {
			m.form.SetErrors(perField, general, nil, nil)
			err := general
			for _, f := range []string{form.HMA, form.HMA3, form.Fee, form.Timeframe, form.Head, form.Backend, form.Borderline,
				form.BarsPerYear, form.TZ, form.From, form.To, form.Blocks, form.WF, form.Objective, form.MinTrades, form.MaxDrawdown} {
				if perField[f] != nil {
					err = perField[f]
					break
				}
			}
			if err != nil {
				m.setErr(errors.New(m.form.Describe(err)))
				m.formErr = m.ctx.LastErr // cleared once the form no longer has it
			}
			return nil
		}
	}
	if s.NeedsConfirmation() {
		// A grid the CPU would take long over: said, with the estimate,
		// and run when asked again (enter, or r outside a text field) for
		// the same study.
		if key := confirmKey(s); m.confirmRun != key {
			m.confirmRun = confirmKey(s)
			est := m.estimate
			if est == "" {
				est = "estimate not ready yet"
			}
			m.setErr(fmt.Errorf("%s on the CPU reference (%s): press enter again to run it, or use a GPU backend, a coarser grid or one precision",
				s.Size(), est))
			return nil
		}
	}
	m.confirmRun = ""
	if m.run != nil {
		// A study computes: this one waits for it (issue 15, defect 5).
		m.queued = s
		m.ctx.Info = fmt.Sprintf("queued: %s on %s starts when the running study ends (enter again replaces it)", s.Size(), s.Backend.Name())
		m.screen = screenRun
		m.layout()
		m.syncKeyContext()
		return m.form.Focus(false)
	}
	m.ctx.Note = s.Note
	var st *sessions.Store
	if !m.cfg.NoSave {
		st = m.cfg.Sessions
	}
	return m.launch(s, studyWork(s, st, m.cfg.StoreErr, !m.cfg.NoSave))
}

// launch runs w (study s, or a session of it resumed) with live progress.
func (m *Model) launch(s *engine.Study, w work) tea.Cmd {
	m.stopRun()
	m.runGen++
	m.run = startRunner(m.parent, m.runGen, w)
	m.lastRunner = m.run
	m.runFrom = screenSetup
	if m.screen == screenSessions {
		m.runFrom = screenSessions
	}
	m.ctx.Warn, m.ctx.Saved, m.ctx.Info = "", "", ""
	m.ctx.Study = s
	m.ctx.Backend = s.Backend.Name()
	m.ctx.Device = m.deviceOf(s.Backend)
	m.setErr(nil)
	m.screen = screenRun
	m.showHelp = false
	m.layout()
	m.syncKeyContext()
	return tea.Batch(m.run.next(), m.runv.Start(s), m.form.Focus(false))
}

// finish shows the report of a study that ended (complete, cancelled or
// failed), then starts the study queued meanwhile, if any.
func (m *Model) finish(d doneMsg) tea.Cmd {
	cmd := m.finishRun(d)
	if q := m.queued; q != nil {
		m.queued = nil
		info := m.ctx.Info
		m.confirmRun = confirmKey(q) // confirmed when it was queued
		next := m.startRun(q)
		m.ctx.Info = strings.TrimSuffix("the queued study started; the last one's results are on the Results screen; "+info, "; ")
		return tea.Batch(cmd, next)
	}
	return cmd
}

func (m *Model) finishRun(d doneMsg) tea.Cmd {
	m.run = nil
	rep, err := d.rep, d.err
	cancelled := errors.Is(err, context.Canceled)
	m.ctx.Warn, m.ctx.Saved, m.ctx.Info = d.warn, d.saved, d.info
	done := 0
	if rep != nil {
		for _, r := range rep.Runs {
			done += len(r.Results)
		}
	}
	if rep == nil || done == 0 {
		if cancelled {
			err = errors.New("cancelled before any combo completed")
		}
		m.setErr(err)
		if m.runFrom == screenSessions {
			return m.show(screenSessions)
		}
		m.screen, m.setupFocus = screenSetup, 1
		m.layout()
		return m.focusSetup()
	}
	m.chartsWhy = ""
	away := m.screen == screenSessions || m.screen == screenBench
	m.browsing = m.screen
	cmd := m.showResults(rep, m.ctx.Study.Precisions, err)
	if away {
		// The user browses the sessions or the bench: the results wait on
		// their screen (esc goes there), the screen in use stays.
		m.screen, m.prevScreen = m.browsing, screenResults
		m.ctx.Info = strings.TrimSuffix("the study finished: esc shows its results; "+m.ctx.Info, "; ")
		m.layout()
		m.syncKeyContext()
		if m.screen == screenSessions {
			cmd = tea.Batch(cmd, m.sessions.Refresh()) // its session is no longer running
		}
	}
	return cmd
}

// showResults shows rep in the results panes; err says why it is not
// complete (a cancel, a failure), if it is not; asked are the precisions
// the study asked for.
func (m *Model) showResults(rep *engine.Report, asked []engine.Precision, err error) tea.Cmd {
	cancelled := errors.Is(err, context.Canceled)
	for _, r := range rep.Runs {
		if r.Device != "" {
			m.ctx.Device = r.Device
		}
	}
	m.ctx.Results = common.NewResults(rep, err)
	m.ctx.Results.Asked = asked
	switch {
	case cancelled:
		// A cancel the user asked for is not an error: a note says what
		// the panes hold.
		m.setErr(nil)
		m.ctx.Info = strings.TrimSuffix("cancelled: showing "+completed(m.ctx.Results)+" that completed; "+m.ctx.Info, "; ")
	default:
		m.setErr(err)
	}
	if m.ctx.Results.R64 == nil {
		m.ctx.Prec = engine.FP32
	} else {
		m.ctx.Prec = engine.FP64
	}
	// A study with an objective of its own starts the table and the
	// heatmap on its metric.
	if o := m.ctx.Results.Objective; o != (engine.Objective{}) {
		m.ctx.Metric = o.Name()
	}
	m.screen = screenResults
	m.metrics.Reload()
	m.parity.Reload()
	m.robust.Reload()
	m.setFocus(m.focus)
	m.syncKeyContext()
	// Start on the worst combo of the parity report (the crossover pane
	// then shows its worst flip), else on the best combo.
	sel := m.parity.Worst()
	if sel < 0 {
		sel = m.ctx.Results.Top(m.ctx.Prec, m.ctx.Results.Indexes())
	}
	m.ctx.Inspect = nil
	m.cross.Reload()
	m.detail.Reload()
	if sel < 0 {
		return nil
	}
	return m.selectCombo(sel)
}

// completed says how many combos each run holds: "the 9 combos", or
// "2,500 fp64 + 812 fp32 combos" when the runs differ.
func completed(r *common.Results) string {
	var parts []string
	n := -1
	same := true
	for _, run := range []*engine.Run{r.R64, r.R32} {
		if run == nil {
			continue
		}
		if n >= 0 && n != len(run.Results) {
			same = false
		}
		n = len(run.Results)
		parts = append(parts, common.Thousands(len(run.Results))+" "+run.Precision.String())
	}
	if same {
		return "the " + common.Thousands(max(n, 0)) + " combos"
	}
	return strings.Join(parts, " + ") + " combos"
}

// selectCombo makes idx the selected combo in every pane and recomputes
// its detail after a short pause (so holding an arrow key does not queue
// an InspectCombo per step).
func (m *Model) selectCombo(idx int) tea.Cmd {
	if m.ctx.Results == nil || idx < 0 || idx >= m.ctx.Results.Grid.Len() {
		return nil
	}
	m.ctx.Selected = idx
	m.metrics.Sync()
	m.parity.Sync()
	m.heat.Sync()
	if m.ctx.Study == nil {
		// A saved session whose dataset could not be loaded again: the
		// panes that recompute the combo say why they cannot.
		why := m.chartsWhy
		if why == "" {
			why = "charts unavailable: no dataset"
		}
		m.ctx.Inspect = &common.Inspection{Index: idx, Combo: m.ctx.Results.Grid.At(idx), Err: errors.New(why)}
		m.cross.Reload()
		m.detail.Reload()
		return nil
	}
	m.inspectGen++
	gen := m.inspectGen
	if m.ctx.Inspect == nil {
		return m.inspectCmd(gen)
	}
	return tea.Tick(80*time.Millisecond, func(time.Time) tea.Msg { return inspectTickMsg{gen} })
}

// inspectCmd recomputes the selected combo in the precisions whose run
// computed it.
func (m *Model) inspectCmd(gen int) tea.Cmd {
	idx := m.ctx.Selected
	var missing map[engine.Precision]string
	if r := m.ctx.Results; r != nil {
		for _, p := range m.ctx.Study.Precisions {
			if why := r.Missing(idx, p); why != "" {
				if missing == nil {
					missing = map[engine.Precision]string{}
				}
				missing[p] = why
			}
		}
	}
	return inspectCmd(gen, m.ctx.Study, idx, missing)
}

// layout sizes every component for the current screen.
func (m *Model) layout() {
	W, H := m.ctx.Width, m.ctx.Height
	bodyH := H - 2
	m.status.SetWidth(W)
	m.runv.SetSize(W, bodyH)
	// Setup: side by side when wide, else stacked.
	if W >= 110 {
		dw := W * 45 / 100
		m.datasets.SetSize(dw-2, bodyH-2)
		m.form.SetSize(W-dw-2, bodyH-2)
	} else {
		dh := m.setupDatasetHeight(bodyH)
		m.datasets.SetSize(W-2, dh-2)
		m.form.SetSize(W-2, bodyH-dh-2)
	}
	// Results: a grid of panes when there is room, else one at a time.
	m.single = W < 120 || H < 30
	if m.single {
		for p := range nPanes {
			m.rects[p] = rect{W, bodyH}
		}
	} else {
		lw := W * 45 / 100
		rw := W - lw
		// The table needs no more than its rows; the parity pane gets the rest.
		mh := bodyH * 55 / 100
		if r := m.ctx.Results; r != nil {
			mh = max(10, min(mh, r.Grid.Len()+5))
		}
		hh := max(8, min(m.heat.Want()+3, bodyH*35/100))
		ch := (bodyH - hh) * 58 / 100
		m.rects[paneMetrics] = rect{lw, mh}
		m.rects[paneParity] = rect{lw, bodyH - mh}
		m.rects[paneHeatmap] = rect{rw, hh}
		m.rects[paneCrossover] = rect{rw, ch}
		m.rects[paneDetail] = rect{rw, bodyH - hh - ch}
		// Robustness takes the right column while it has the focus.
		m.rects[paneRobust] = rect{rw, bodyH}
	}
	in := func(p pane) (int, int) { return m.rects[p].w - 2, m.rects[p].h - 2 }
	for p := range nPanes {
		m.pane(p).SetSize(in(p))
	}
	for _, s := range m.screens {
		if s != nil {
			s.SetSize(W, bodyH)
		}
	}
}

// setupDatasetHeight is the dataset pane's height (border included) when
// the setup panes are stacked: its three items, a blank line and the
// three lines of the summary (9), or without the blank line (8) when the
// form would otherwise get fewer than setupFormRows. The form, 14 rows
// (border included) at 80x24, then shows its seven rows of fields, the
// grid, the estimate, the run button and two notes (cuda and metal
// unavailable, on Linux without a GPU) without its own blank line.
func (m *Model) setupDatasetHeight(bodyH int) int {
	if m.datasets.Picking() {
		return bodyH - 3
	}
	if bodyH-9 < setupFormRows {
		return min(8, bodyH/2)
	}
	return min(9, bodyH/2)
}

// setupFormRows is the form's height (border included) with every line
// it shows on a machine without a GPU: 7 rows of fields, a blank line,
// the grid, the estimate, the run button and two notes, and its border.
const setupFormRows = 7 + 1 + 3 + 2 + 2

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
	m.syncKeyContext()
	if m.screen == screenSetup {
		m.layout() // the dataset pane grows while the file picker is open
	}
	bodyH := H - 2
	var body string
	switch {
	case m.showHelp:
		body = helpview.View(m.ctx, m.keyMap(), W, bodyH)
	case m.screen == screenSetup:
		body = m.setupView(W, bodyH)
	case m.screen == screenRun:
		body = t.Fit(m.runv.View(), W, bodyH)
	case m.screens[m.screen] != nil:
		body = m.screens[m.screen].View()
	default:
		body = m.resultsView(W, bodyH)
	}
	m.status.SetKeys(m.keyMap())
	return t.Sanitize(m.header(W) + "\n" + t.Fit(body, W, bodyH) + "\n" + m.status.View())
}

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
	screens := []struct {
		name string
		s    screen
	}{{"Setup", screenSetup}, {"Run", screenRun}, {"Results", screenResults}, {"Sessions", screenSessions}, {"Bench", screenBench}}
	// tabs names the first n screens, and the current one.
	if m.run != nil && m.screen != screenRun {
		// A study computes behind the screen in use: how far it is.
		screens[1].name = fmt.Sprintf("Run %.0f%%", 100*m.runv.Fraction())
	}
	tabs := func(n int) string {
		s := t.Title.Render(" sweepbench ")
		for i, sc := range screens {
			if i < n || sc.s == m.screen {
				s += " " + tab(sc.name, sc.s == m.screen)
			}
		}
		return s
	}
	s := tabs(len(screens))
	if m.screen == screenResults && m.single && !m.showHelp {
		panes := t.Subtle.Render("  |")
		for p := range nPanes {
			panes += " " + tab(paneNames[p], p == m.focus)
		}
		// The pane tabs matter more than the other screens' names.
		for n := len(screens) - 1; n >= 0 && ansi.StringWidth(s+panes) > W; n-- {
			s = tabs(n)
		}
		s += panes
	} else if st := m.ctx.Study; st != nil && (m.screen == screenRun || m.screen == screenResults) {
		s += t.Subtle.Render(fmt.Sprintf("   hma %s x hma3 %s", st.Grid.HMA, st.Grid.HMA3))
	}
	return t.Fit(s, W, 1)
}

func (m *Model) setupView(W, H int) string {
	t := m.ctx.Theme
	dsFocus, formFocus := m.setupFocus == 0, m.setupFocus == 1
	if W >= 110 {
		dw := W * 45 / 100
		left := t.Pane(m.datasets.Title(), m.datasets.View(), dw, H, dsFocus)
		right := t.Pane("Parameters", m.form.View(), W-dw, H, formFocus)
		return joinH(left, right)
	}
	dh := m.setupDatasetHeight(H)
	return t.Pane(m.datasets.Title(), m.datasets.View(), W, dh, dsFocus) + "\n" +
		t.Pane("Parameters", m.form.View(), W, H-dh, formFocus)
}

func (m *Model) paneView(p pane) string {
	t := m.ctx.Theme
	r := m.rects[p]
	// The body first: a title may say which of its lines are shown
	// (the robustness pane's).
	body := m.pane(p).View()
	return t.Pane(m.pane(p).Title(), body, r.w, r.h, p == m.focus)
}

func (m *Model) resultsView(W, H int) string {
	if m.ctx.Results == nil {
		return ""
	}
	if m.single {
		return m.paneView(m.focus)
	}
	left := m.paneView(paneMetrics) + "\n" + m.paneView(paneParity)
	right := m.paneView(paneHeatmap) + "\n" + m.paneView(paneCrossover) + "\n" + m.paneView(paneDetail)
	if m.focus == paneRobust {
		right = m.paneView(paneRobust)
	}
	return joinH(left, right)
}

// joinH puts two blocks of equal height side by side.
func joinH(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	n := max(len(al), len(bl))
	w := 0
	for _, l := range al {
		w = max(w, ansi.StringWidth(l))
	}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte('\n')
		}
		l := ""
		if i < len(al) {
			l = al[i]
		}
		sb.WriteString(l + strings.Repeat(" ", max(0, w-ansi.StringWidth(l))))
		if i < len(bl) {
			sb.WriteString(bl[i])
		}
	}
	return sb.String()
}

// confirmKey identifies a study for the confirmation of a large CPU grid:
// asking again for the same one runs it.
func confirmKey(s *engine.Study) string {
	return fmt.Sprintf("%v %v %s %v", s.Grid, s.Precisions, s.Backend.Name(), s.Dataset.Info.SHA256)
}

// Do implements common.Host: the screens' intents, handled at once.
func (m *Model) Do(intent tea.Msg) tea.Cmd {
	switch msg := intent.(type) {
	case common.ShowMsg:
		return m.show(msg.ID)
	case common.BackMsg:
		return m.back()
	case common.OpenedMsg:
		return m.showSession(msg)
	case common.ResumeMsg:
		if m.cfg.Sessions == nil {
			return nil
		}
		m.ctx.Note = msg.Note
		return m.launch(msg.Study, resumeWork(m.cfg.Sessions, msg.ID, msg.Study))
	}
	return nil
}

// Screen implements common.Host.
func (m *Model) Screen() common.ScreenID { return m.screen }

// Running implements common.Host.
func (m *Model) Running() bool { return m.run != nil }

// show puts screen id on display: the screen left and the screen shown
// are told, and every screen is sized again.
func (m *Model) show(id common.ScreenID) tea.Cmd {
	from := m.screen
	m.screen = id
	m.layout()
	m.syncKeyContext()
	var cmds []tea.Cmd
	if s := m.screens[from]; s != nil && from != id {
		cmds = append(cmds, s.Shown(false))
	}
	if s := m.screens[id]; s != nil {
		cmds = append(cmds, s.Shown(true))
	}
	return tea.Batch(cmds...)
}

// open shows the sessions or the bench screen from a key: esc there goes
// back to the screen in use before.
func (m *Model) open(id common.ScreenID) tea.Cmd {
	if m.screen != screenSessions && m.screen != screenBench {
		m.prevScreen = m.screen
	}
	m.showHelp = false
	return tea.Batch(m.form.Focus(false), m.show(id))
}

// keyMap is the key map of the screen on display, with the workbench's
// own keys: the status line's short help and the help overlay come from it.
func (m *Model) keyMap() help.KeyMap {
	if s := m.screens[m.screen]; s != nil {
		return screenKeys{m.ctx.Keys, s}
	}
	return m.ctx.Keys
}

// screenKeys is a screen's key map under the workbench's global keys.
type screenKeys struct {
	global *keys.KeyMap
	screen help.KeyMap
}

func (k screenKeys) ShortHelp() []key.Binding { return k.screen.ShortHelp() }

func (k screenKeys) FullHelp() [][]key.Binding {
	g := k.global
	return append([][]key.Binding{{g.Help, g.Quit, g.ForceQuit, g.Sessions, g.Bench}}, k.screen.FullHelp()...)
}
