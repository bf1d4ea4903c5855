// Package results is the results screen: the panes over a study's report
// (metrics table, parity report, heatmap, crossover, combo detail and the
// robustness pane), laid out as a grid when the terminal has room, else
// one at a time. It owns the focused pane, the selected combo's detail
// (recomputed in a command whose answer comes back tagged for this
// screen) and the metrics table's filter as the status line shows it.
package results

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/sessions"
	"sweepbench/tui/common"
	"sweepbench/tui/components/aggregate"
	"sweepbench/tui/components/crossover"
	"sweepbench/tui/components/detail"
	"sweepbench/tui/components/heatmap"
	"sweepbench/tui/components/metrics"
	"sweepbench/tui/components/parity"
	"sweepbench/tui/components/robustness"
)

// Pane is a results pane, in tab order.
type Pane int

const (
	MetricsPane Pane = iota
	ParityPane
	HeatmapPane
	CrossoverPane
	ComboPane
	RobustnessPane
	NumPanes
)

// PaneNames are the panes' names in the tab bar.
var PaneNames = [NumPanes]string{"Metrics", "Parity", "Heatmap", "Crossover", "Combo", "Robustness"}

// Model is the results screen.
type Model struct {
	ctx   *common.Context
	state *common.RunState // the run, the root model\'s
	host  common.Host
	keys  KeyMap

	metrics *metrics.Model
	parity  *parity.Model
	heat    *heatmap.Model
	cross   *crossover.Model
	detail  *detail.Model
	robust  *robustness.Model
	agg     *aggregate.Model // the "all datasets" view's list (suite.go)

	w, h       int
	rects      [NumPanes]rect
	single     bool // one pane at a time
	focus      Pane
	selectFrom Pane // the pane enter opened the crossover from (esc returns there)

	store   *sessions.Store // the saved sessions paged results read from; nil: none
	load    sessions.Loader // loads a saved session's dataset again (another dataset of a suite)
	picking int             // the combo being read for the selection (paging.go), -1 none

	suite    *suiteNav // the suite the study on screen is a dataset of (suite.go); nil: none
	allRects [2]rect   // the "all datasets" view's list and heatmap

	chartsWhy  string // why an opened session has no charts
	filterErr  string // the metrics filter's error last put on the status line
	inspectGen int    // counts the selections: a stale combo detail is dropped
}

type rect struct{ w, h int }

var (
	_ common.Screen = (*Model)(nil)
	_ common.Taker  = (*Model)(nil) // its text fields take the keys
)

// New returns the results screen; st is the sessions store that paged
// results read their runs from and a suite's other datasets are opened
// from (nil: none), load loads a saved session's dataset again (nil:
// sessions.LoadSpec).
func New(ctx *common.Context, state *common.RunState, host common.Host, st *sessions.Store, load sessions.Loader) *Model {
	m := &Model{ctx: ctx, state: state, host: host, keys: newKeyMap(ctx.Keys), store: st, load: load, picking: -1}
	m.metrics = metrics.New(ctx, state)
	state.Keep = m.metrics.Keeps
	state.KeepResult = m.metrics.KeepsResult
	m.parity = parity.New(ctx, state)
	m.heat = heatmap.New(ctx, state)
	m.cross = crossover.New(ctx, state)
	m.detail = detail.New(ctx, state)
	m.robust = robustness.New(ctx, state)
	m.agg = aggregate.New(ctx, state)
	m.agg.Focus(true)
	return m
}

// The panes.
func (m *Model) Metrics() *metrics.Model       { return m.metrics }
func (m *Model) Parity() *parity.Model         { return m.parity }
func (m *Model) Heatmap() *heatmap.Model       { return m.heat }
func (m *Model) Crossover() *crossover.Model   { return m.cross }
func (m *Model) Detail() *detail.Model         { return m.detail }
func (m *Model) Robustness() *robustness.Model { return m.robust }
func (m *Model) Aggregate() *aggregate.Model   { return m.agg }

// pane is pane p as the screen lays it out and routes keys to it.
func (m *Model) pane(p Pane) common.Pane {
	return [NumPanes]common.Pane{MetricsPane: m.metrics, ParityPane: m.parity, HeatmapPane: m.heat,
		CrossoverPane: m.cross, ComboPane: m.detail, RobustnessPane: m.robust}[p]
}

// Focus is the focused pane.
func (m *Model) Focus() Pane { return m.focus }

// SetFocus gives pane p the keys.
func (m *Model) SetFocus(p Pane) {
	m.focus = p
	for q := range NumPanes {
		if f, ok := m.pane(q).(common.Focuser); ok {
			f.Focus(q == p)
		}
	}
	m.layout()
}

// Editing reports whether the metrics filter's text field has the keys.
func (m *Model) Editing() bool { return m.metrics.Editing() }

// Takes implements common.Taker: the filter's text field takes every key
// but the ones that leave it.
func (m *Model) Takes(tea.KeyMsg) bool { return m.metrics.Editing() }

// PaneTabs are the panes' names and the focused one's index when the
// screen shows one pane at a time (the tab bar lists them); ok is false
// when every pane is on screen.
func (m *Model) PaneTabs() (names []string, focus int, ok bool) {
	if !m.single {
		return nil, 0, false
	}
	if m.AllDatasets() {
		focus := 0
		if m.suite.allHeat {
			focus = 1
		}
		return []string{"All datasets", "Heatmap"}, focus, true
	}
	return PaneNames[:], int(m.focus), true
}

// Shown implements common.Screen.
func (m *Model) Shown(bool) tea.Cmd { return nil }

// SetSize implements common.Screen.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.layout()
}

// layout sizes the panes: a grid when there is room, else one at a time.
func (m *Model) layout() {
	W, bodyH := m.w, m.h-m.suiteRows()
	m.single = W < 120 || m.h+2 < 30
	if m.single {
		for p := range NumPanes {
			m.rects[p] = rect{W, bodyH}
		}
	} else {
		lw := W * 45 / 100
		rw := W - lw
		// The table needs no more than its rows; the parity pane gets the rest.
		mh := bodyH * 55 / 100
		if r := m.state.Results; r != nil {
			mh = max(10, min(mh, r.Grid.Len()+5))
		}
		hh := max(8, min(m.heat.Want()+3, bodyH*35/100))
		ch := (bodyH - hh) * 58 / 100
		m.rects[MetricsPane] = rect{lw, mh}
		m.rects[ParityPane] = rect{lw, bodyH - mh}
		m.rects[HeatmapPane] = rect{rw, hh}
		m.rects[CrossoverPane] = rect{rw, ch}
		m.rects[ComboPane] = rect{rw, bodyH - hh - ch}
		// Robustness takes the right column while it has the focus.
		m.rects[RobustnessPane] = rect{rw, bodyH}
	}
	for p := range NumPanes {
		m.pane(p).SetSize(m.rects[p].w-2, m.rects[p].h-2)
	}
	// The "all datasets" view: the list and the heatmap side by side (or
	// one at a time), the heatmap sized for it while it is on screen.
	m.allRects = [2]rect{{W, bodyH}, {W, bodyH}}
	if !m.single {
		m.allRects = [2]rect{{W * 45 / 100, bodyH}, {W - W*45/100, bodyH}}
	}
	m.agg.SetSize(m.allRects[0].w-2, m.allRects[0].h-2)
	if m.AllDatasets() {
		m.heat.SetSize(m.allRects[1].w-2, m.allRects[1].h-2)
	}
}

// View implements common.Screen.
func (m *Model) View() string {
	if m.state.Results == nil {
		return ""
	}
	body := m.panesView()
	if line := m.suiteLine(); line != "" {
		return line + "\n" + body
	}
	return body
}

func (m *Model) panesView() string {
	if m.AllDatasets() {
		return m.allView()
	}
	if m.single {
		return m.paneView(m.focus)
	}
	left := m.paneView(MetricsPane) + "\n" + m.paneView(ParityPane)
	right := m.paneView(HeatmapPane) + "\n" + m.paneView(CrossoverPane) + "\n" + m.paneView(ComboPane)
	if m.focus == RobustnessPane {
		right = m.paneView(RobustnessPane)
	}
	return common.JoinH(left, right)
}

func (m *Model) paneView(p Pane) string {
	r := m.rects[p]
	// The body first: a title may say which of its lines are shown
	// (the robustness pane's).
	body := m.pane(p).View()
	return m.ctx.Theme.Pane(m.pane(p).Title(), body, r.w, r.h, p == m.focus)
}

// Update implements common.Screen. Paged results then read what the
// panes need (fetch).
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	cmd := m.update(msg)
	return tea.Batch(cmd, m.fetch())
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case pagersMsg:
		m.pagers(msg)
	case pickMsg:
		m.pick(msg)
	case suiteMsg:
		return m.suited(msg)
	case aggMsg:
		m.aggregated(msg)
	case datasetMsg:
		return m.opened(msg)
	default:
		// The panes' own answers (a page read).
		return tea.Batch(m.metrics.Update(msg), m.heat.Update(msg))
	case tea.KeyMsg:
		return m.key(msg)
	case common.SelectMsg:
		return m.selectCombo(msg.Index)
	case common.MetricMsg:
		m.state.Metric = msg.Name
		m.metrics.Reload()
	case inspectTickMsg:
		if msg.gen == m.inspectGen && m.state.Study != nil && m.state.Selected >= 0 {
			return m.Inspect()
		}
	case inspectMsg:
		if msg.gen != m.inspectGen {
			return nil
		}
		m.state.Inspect = msg.ins
		if msg.ins.Err != nil {
			m.host.Do(common.ErrMsg{Err: msg.ins.Err})
		}
		m.cross.Reload()
		m.detail.Reload()
	}
	return nil
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	// A text field takes every key but the ones that leave it.
	if m.metrics.Editing() {
		cmd := m.metrics.Update(msg)
		switch err := m.metrics.Err(); {
		case err != nil:
			m.host.Do(common.ErrMsg{Err: err})
			m.filterErr = m.host.Status().LastErr
		case m.filterErr != "" && m.host.Status().LastErr == m.filterErr:
			m.host.Do(common.ErrMsg{}) // the filter was fixed, or given up
			m.filterErr = ""
		}
		return cmd
	}
	if m.AllDatasets() {
		return m.allKey(msg)
	}
	switch {
	case key.Matches(msg, k.PrevDataset):
		return m.step(-1)
	case key.Matches(msg, k.NextDataset):
		return m.step(1)
	case key.Matches(msg, k.AllDatasets):
		return m.toggleAll()
	case key.Matches(msg, k.NextPane):
		m.SetFocus((m.focus + 1) % NumPanes)
	case key.Matches(msg, k.PrevPane):
		m.SetFocus((m.focus + NumPanes - 1) % NumPanes)
	case key.Matches(msg, k.Back) && m.focus != MetricsPane:
		// Back from a pane goes to the pane enter came from (or the
		// table), not past the results: keys typed next are not form edits.
		to := m.selectFrom
		if to == m.focus || to >= NumPanes {
			to = MetricsPane
		}
		m.selectFrom = MetricsPane
		m.SetFocus(to)
	case key.Matches(msg, k.Back), key.Matches(msg, k.Edit):
		return m.host.Do(common.FormMsg{FromStudy: true})
	case key.Matches(msg, k.Filter) && m.focus != MetricsPane:
		// The filter belongs to the table: / from any pane opens it there,
		// so what is typed next is a filter, not a string of commands.
		m.SetFocus(MetricsPane)
		return m.metrics.Update(msg)
	case key.Matches(msg, k.Rerun):
		s := m.state.Study
		if s != nil && s.Spec.Suite != "" {
			// One dataset's study again, in no suite: saved into the
			// suite's run it would stand in for that run's own session
			// (as e then enter does: the form runs a study of no suite).
			c := *s
			c.Spec.Suite = ""
			s = &c
		}
		return m.host.Do(common.RunMsg{Study: s})
	case key.Matches(msg, k.NextMetric), key.Matches(msg, k.PrevMetric):
		cols := common.Columns()
		if !m.state.Results.HasParityRows() {
			cols = engine.MetricNames
		}
		i := 0
		for j, c := range cols {
			if c == m.state.Metric {
				i = j
			}
		}
		d := 1
		if key.Matches(msg, k.PrevMetric) {
			d = len(cols) - 1
		}
		m.state.Metric = cols[(i+d)%len(cols)]
		m.metrics.Reload()
	case key.Matches(msg, k.Precision):
		if m.state.Prec == engine.FP64 && m.state.Results.R32 != nil {
			m.state.Prec = engine.FP32
		} else if m.state.Results.R64 != nil {
			m.state.Prec = engine.FP64
		}
		m.metrics.Reload() // the table follows p, as the heatmap does
	case key.Matches(msg, k.NextFlip), key.Matches(msg, k.PrevFlip):
		return m.cross.Update(msg)
	case key.Matches(msg, k.Columns):
		m.metrics.ToggleLayout() // the compact or the full metrics table
	case key.Matches(msg, k.Export):
		return m.exportCombo() // export.go
	case key.Matches(msg, k.HeatScale, k.HeatZoom, k.HeatValues, k.HeatX, k.HeatY, k.HeatReduce, k.HeatStepPrev, k.HeatStepNext):
		// The heatmap's view, from any pane (it is on screen beside them).
		return m.heat.Update(msg)
	case key.Matches(msg, k.Select) && m.focus <= HeatmapPane:
		m.selectFrom = m.focus
		m.SetFocus(CrossoverPane)
	case key.Matches(msg, k.Robustness) && m.focus != RobustnessPane:
		m.selectFrom = m.focus // esc goes back there
		m.SetFocus(RobustnessPane)
	default:
		return m.pane(m.focus).Update(msg)
	}
	return nil
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
		if n >= 0 && n != run.Count() {
			same = false
		}
		n = run.Count()
		parts = append(parts, common.Thousands(run.Count())+" "+run.Precision.String())
	}
	if same {
		return "the " + common.Thousands(max(n, 0)) + " combos"
	}
	return strings.Join(parts, " + ") + " combos"
}
