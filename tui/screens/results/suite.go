package results

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine/suite"
	store "sweepbench/sessions"
	"sweepbench/tui/common"
)

// A study that is one dataset of a suite (its Spec.Suite, "ID D/N") shows
// which one above the panes; [ and ] open the previous and the next
// dataset's session from the store (common.OpenSession, as the sessions
// browser opens one), keeping the selected combo, the metric, the
// precision and the focused pane; a opens the "all datasets" view: the
// suite's aggregate (sessions.Store.Aggregate, the engine's) as a top list
// beside its heatmap. The store is read in commands whose answers come
// back tagged for this screen.

// suiteNav is the suite of the study on screen.
type suiteNav struct {
	ref suite.SuiteRef // the study on screen's place in it
	su  *store.Suite   // its sessions in the store; nil until read
	err error          // why they could not be read

	agg    *suite.Aggregate
	aggOf  []int64 // the sessions agg was computed from
	aggErr error
	aggGen int // counts the aggregates asked for: a stale one is dropped

	all        bool   // the "all datasets" view
	allHeat    bool   // the view's heatmap has the keys (else the list)
	metric     string // the metric of the panes before the view
	opening    string // "opening dataset 3/5", while it is read
	openGen    int    // counts the datasets asked for
	unreadable string // a Spec.Suite that does not parse
}

type (
	suiteMsg struct {
		id  string
		su  *store.Suite
		err error
	}
	aggMsg struct {
		id  string
		gen int
		of  []int64
		agg *suite.Aggregate
		err error
	}
	datasetMsg struct {
		gen    int
		d      int // the dataset's place, from 1
		opened common.OpenedMsg
		err    error
	}
)

// leaveAll leaves the "all datasets" view for another study on screen:
// the panes' metric is the one before the view.
func (m *Model) leaveAll() {
	if n := m.suite; n != nil && n.all {
		n.all = false
		m.state.Metric = n.metric
		m.layout()
	}
}

// setSuite makes spec (a Spec.Suite: "" for a study of one dataset) the
// suite of the study on screen and reads its sessions from the store.
func (m *Model) setSuite(spec string) tea.Cmd {
	defer m.layout()
	ref, ok, err := suite.ParseSuiteRef(spec)
	if err != nil {
		m.suite = &suiteNav{unreadable: err.Error()}
		return nil
	}
	if !ok {
		m.suite = nil
		return nil
	}
	if m.suite == nil || m.suite.ref.ID != ref.ID {
		m.suite = &suiteNav{}
	}
	m.suite.ref = ref
	m.suite.opening = ""
	if m.store == nil {
		m.suite.err = errors.New("no sessions database: the other datasets cannot be read")
		return nil
	}
	st := m.store
	return common.Tag(common.ResultsScreen, common.Guard(func() tea.Msg {
		su, err := st.SuiteOf(context.Background(), ref)
		return suiteMsg{id: ref.ID, su: su, err: err}
	}, func(err error) tea.Msg { return suiteMsg{id: ref.ID, err: err} }))
}

// InSuite reports where the study on screen stands in a suite; ok is
// false for a study of one dataset.
func (m *Model) InSuite() (ref suite.SuiteRef, ok bool) {
	if m.suite == nil || m.suite.ref.ID == "" {
		return suite.SuiteRef{}, false
	}
	return m.suite.ref, true
}

// AllDatasets reports whether the "all datasets" view is on screen.
func (m *Model) AllDatasets() bool { return m.suite != nil && m.suite.all }

// Suite is the suite's sessions as last read, nil before.
func (m *Model) Suite() *store.Suite {
	if m.suite == nil {
		return nil
	}
	return m.suite.su
}

// suited takes the suite's sessions read.
func (m *Model) suited(msg suiteMsg) tea.Cmd {
	n := m.suite
	if n == nil || n.ref.ID != msg.id {
		return nil
	}
	n.su, n.err = msg.su, msg.err
	if n.all {
		return m.aggregate()
	}
	return nil
}

// aggregate is the command that computes the suite's aggregate from the
// sessions read, unless the one held is of the same sessions.
func (m *Model) aggregate() tea.Cmd {
	n := m.suite
	if n == nil || n.su == nil || m.store == nil {
		return nil
	}
	var of []int64
	for _, ss := range n.su.Members {
		if ss != nil {
			of = append(of, ss.ID)
		}
	}
	if n.agg != nil && slices.Equal(of, n.aggOf) {
		m.attach()
		return nil
	}
	n.aggGen++
	gen, id, st, su := n.aggGen, n.ref.ID, m.store, n.su
	n.agg, n.aggErr = nil, nil
	m.attach()
	return common.Tag(common.ResultsScreen, common.Guard(func() tea.Msg {
		agg, err := st.Aggregate(context.Background(), su)
		return aggMsg{id: id, gen: gen, of: of, agg: agg, err: err}
	}, func(err error) tea.Msg { return aggMsg{id: id, gen: gen, err: err} }))
}

// aggregated takes the aggregate computed.
func (m *Model) aggregated(msg aggMsg) {
	n := m.suite
	if n == nil || n.ref.ID != msg.id || n.aggGen != msg.gen {
		return
	}
	n.agg, n.aggOf, n.aggErr = msg.agg, msg.of, msg.err
	if msg.err != nil {
		m.host.Do(common.ErrMsg{Err: fmt.Errorf("suite %s: the aggregate: %w", n.ref.ID, msg.err)})
	}
	m.attach()
}

// attach gives the results on screen the suite's aggregate (the heatmap's
// aggregate columns) and the aggregate pane its figures and note.
func (m *Model) attach() {
	n := m.suite
	if r := m.state.Results; r != nil {
		r.Agg = nil
		if n != nil && n.agg != nil && n.agg.Grid == r.Grid {
			r.Agg = n.agg
		}
	}
	if n == nil {
		m.agg.Set(nil, "")
		return
	}
	note := ""
	switch {
	case n.aggErr != nil:
		note = "no aggregate: " + n.aggErr.Error()
	case n.err != nil:
		note = "the suite's sessions could not be read: " + n.err.Error()
	case n.su == nil || n.agg == nil && n.all:
		note = "computing the aggregate over the suite's datasets" + m.ctx.Theme.Ellipsis
	}
	if miss := m.missing(); miss != "" && note == "" {
		note = miss + ": the figures are over the " + common.Plural(n.su.Present(), "dataset") + " the store has"
	}
	m.agg.Set(n.agg, note)
	m.heat.Reload()
}

// missing says which datasets of the suite the store has no session of
// ("dataset 3/5 is not in the store (removed?)"), "" when none.
func (m *Model) missing() string {
	n := m.suite
	if n == nil || n.su == nil {
		return ""
	}
	miss := n.su.Missing()
	if len(miss) == 0 {
		return ""
	}
	var ds []string
	for _, d := range miss {
		ds = append(ds, fmt.Sprintf("%d/%d", d, len(n.su.Members)))
	}
	if len(ds) == 1 {
		return "dataset " + ds[0] + " is not in the store (removed?)"
	}
	return "datasets " + strings.Join(ds, ", ") + " are not in the store (removed?)"
}

// step opens the dataset dir places away (-1 the previous, +1 the next)
// among those the store has; the ones it skips are said.
func (m *Model) step(dir int) tea.Cmd {
	n := m.suite
	switch {
	case n == nil:
		m.host.Do(common.ErrMsg{Err: errors.New("this study is not one dataset of a suite ([ and ] step through the datasets of a suite: sweepbench run --data A --data B)")})
		return nil
	case n.unreadable != "":
		m.host.Do(common.ErrMsg{Err: errors.New(n.unreadable)})
		return nil
	case n.err != nil:
		m.host.Do(common.ErrMsg{Err: fmt.Errorf("suite %s: %w", n.ref.ID, n.err)})
		return nil
	case n.su == nil:
		m.host.Do(common.InfoMsg{Text: "reading the suite's sessions" + m.ctx.Theme.Ellipsis})
		return nil
	case m.host.Running():
		m.host.Do(common.ErrMsg{Err: errors.New("a study is computing: open another dataset once it ends")})
		return nil
	}
	var skipped []string
	N := len(n.su.Members)
	for d := n.ref.D + dir; d >= 1 && d <= N; d += dir {
		ss := n.su.Members[d-1]
		if ss == nil {
			skipped = append(skipped, fmt.Sprintf("%d/%d", d, N))
			continue
		}
		m.host.Do(common.ErrMsg{})
		m.host.Do(common.InfoMsg{Text: ""})
		if len(skipped) > 0 {
			m.host.Do(common.InfoMsg{Text: fmt.Sprintf("skipped dataset %s: not in the store (removed?)", strings.Join(skipped, ", "))})
		}
		return m.open(d, ss.ID)
	}
	end := "last"
	if dir < 0 {
		end = "first"
	}
	if len(skipped) > 0 {
		m.host.Do(common.ErrMsg{Err: fmt.Errorf("no %s dataset of suite %s in the store: %s not there (removed?)", map[int]string{-1: "earlier", 1: "later"}[dir],
			n.ref.ID, strings.Join(skipped, ", "))})
		return nil
	}
	// The end of the suite: a note, not an error.
	m.host.Do(common.ErrMsg{})
	m.host.Do(common.InfoMsg{Text: fmt.Sprintf("dataset %d/%d is the %s of suite %s", n.ref.D, N, end, n.ref.ID)})
	return nil
}

// open is the command that reads session id, dataset d of the suite.
func (m *Model) open(d int, id int64) tea.Cmd {
	n := m.suite
	n.openGen++
	n.opening = fmt.Sprintf("opening dataset %d/%d (session %d)%s", d, len(n.su.Members), id, m.ctx.Theme.Ellipsis)
	gen, st, load, reg := n.openGen, m.store, m.load, m.ctx.Registry
	return common.Tag(common.ResultsScreen, common.Guard(func() tea.Msg {
		o, err := common.OpenSession(context.Background(), st, load, reg, id)
		return datasetMsg{gen: gen, d: d, opened: o, err: err}
	}, func(err error) tea.Msg { return datasetMsg{gen: gen, d: d, err: err} }))
}

// opened shows the dataset read, with the selection of the one it
// replaces: the combo, the metric, the precision and the focused pane.
func (m *Model) opened(msg datasetMsg) tea.Cmd {
	n := m.suite
	if n == nil || msg.gen != n.openGen {
		return nil
	}
	n.opening = ""
	if msg.err != nil {
		m.host.Do(common.ErrMsg{Err: fmt.Errorf("dataset %d/%d of suite %s: %w", msg.d, len(n.su.Members), n.ref.ID, msg.err)})
		return m.setSuite(n.ref.String()) // read the suite again: the session may be gone
	}
	metric, prec, sel, focus := m.state.Metric, m.state.Prec, m.state.Selected, m.focus
	if n.all {
		metric = n.metric
		n.all = false
	}
	info := m.host.Status().Info
	cmd := m.ShowSession(msg.opened)
	m.SetFocus(focus)
	if r := m.state.Results; r != nil {
		if !common.IsParityColumn(metric) || r.HasParityRows() {
			m.state.Metric = metric // a parity column needs rows per combo
		}
		if r.Run(prec) != nil {
			m.state.Prec = prec
		}
		m.metrics.Reload()
		m.heat.Reload()
		if sel >= 0 && sel < r.Grid.Len() {
			cmd = tea.Batch(cmd, m.selectCombo(sel))
		}
	}
	if info != "" && m.host.Status().Info == "" {
		m.host.Do(common.InfoMsg{Text: info})
	}
	return cmd
}

// toggleAll opens or leaves the "all datasets" view.
func (m *Model) toggleAll() tea.Cmd {
	n := m.suite
	switch {
	case n == nil:
		m.host.Do(common.ErrMsg{Err: errors.New("this study is not one dataset of a suite: there is no aggregate over datasets")})
		return nil
	case n.unreadable != "":
		m.host.Do(common.ErrMsg{Err: errors.New(n.unreadable)})
		return nil
	}
	n.all = !n.all
	if n.all {
		n.metric = m.state.Metric
		m.state.Metric = common.ColMedian
	} else {
		m.state.Metric = n.metric
	}
	m.layout()
	m.heat.Reload()
	m.metrics.Reload()
	if n.all {
		m.agg.Sync()
		return m.aggregate()
	}
	m.attach()
	return nil
}

// allKey handles a key in the "all datasets" view: tab gives the keys to
// the list or the heatmap, m steps the aggregate column the heatmap draws,
// esc leaves the view; the rest goes to the part that has the keys.
func (m *Model) allKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	n := m.suite
	switch {
	case key.Matches(msg, k.NextPane, k.PrevPane):
		n.allHeat = !n.allHeat
		m.agg.Focus(!n.allHeat)
		return nil
	case key.Matches(msg, k.Back), key.Matches(msg, k.AllDatasets):
		return m.toggleAll()
	case key.Matches(msg, k.NextMetric, k.PrevMetric):
		cols := common.AggregateColumns
		i := max(slices.Index(cols, m.state.Metric), 0)
		d := 1
		if key.Matches(msg, k.PrevMetric) {
			d = len(cols) - 1
		}
		m.state.Metric = cols[(i+d)%len(cols)]
		return nil
	case key.Matches(msg, k.Best):
		if o := m.agg.Order(); len(o) > 0 {
			return m.selectCombo(o[0])
		}
		return nil
	case key.Matches(msg, k.PrevDataset):
		return m.step(-1)
	case key.Matches(msg, k.NextDataset):
		return m.step(1)
	case key.Matches(msg, k.HeatScale, k.HeatZoom, k.HeatValues, k.HeatX, k.HeatY, k.HeatReduce, k.HeatStepPrev, k.HeatStepNext):
		return m.heat.Update(msg)
	}
	if n.allHeat {
		return m.heat.Update(msg)
	}
	return m.agg.Update(msg)
}

// suiteLine is the line above the panes of a study of a suite: which
// dataset it is, and what the keys do; "" for a study of one dataset.
func (m *Model) suiteLine() string {
	n := m.suite
	if n == nil {
		return ""
	}
	t := m.ctx.Theme
	if n.unreadable != "" {
		return t.Warning.Render(n.unreadable)
	}
	name := ""
	if r := m.state.Results; r != nil {
		name = common.Clean(filepath.Base(strings.TrimPrefix(r.Report.Dataset.Name, "embedded:")))
	}
	s := t.Strong.Render(fmt.Sprintf("dataset %d/%d: %s", n.ref.D, n.ref.N, name))
	if n.all {
		s = t.Strong.Render(fmt.Sprintf("all %s of the suite", common.Plural(n.ref.N, "dataset")))
		if n.su != nil && n.su.Present() < n.ref.N {
			s = t.Strong.Render(fmt.Sprintf("all datasets of the suite: %d of %d in the store", n.su.Present(), n.ref.N))
		}
	}
	s += t.Subtle.Render(fmt.Sprintf("  suite %s", n.ref.ID))
	var more []string
	switch {
	case n.opening != "":
		more = append(more, t.Warning.Render(n.opening))
	case n.err != nil:
		more = append(more, t.Warning.Render("its other datasets cannot be read: "+n.err.Error()))
	case n.su == nil:
		more = append(more, t.Subtle.Render("reading its sessions"+t.Ellipsis))
	default:
		if miss := m.missing(); miss != "" {
			more = append(more, t.Warning.Render(miss))
		}
		keys := "[ ] datasets, a all datasets"
		if n.all {
			keys = "[ ] datasets, a/esc back, m median/worst/profitable"
		}
		more = append(more, t.Subtle.Render(keys))
	}
	return t.Truncate(s+"  "+strings.Join(more, "  "), m.w)
}

// suiteRows is the lines the suite line takes above the panes.
func (m *Model) suiteRows() int {
	if m.suite == nil {
		return 0
	}
	return 1
}

// allView draws the "all datasets" view: the aggregate list and the
// heatmap of the column chosen, side by side, or the one that has the keys
// when the terminal is small.
func (m *Model) allView() string {
	t := m.ctx.Theme
	n := m.suite
	heat := t.Pane(m.heat.Title(), m.heat.View(), m.allRects[1].w, m.allRects[1].h, n.allHeat)
	list := t.Pane(m.agg.Title(), m.agg.View(), m.allRects[0].w, m.allRects[0].h, !n.allHeat)
	if m.single {
		if n.allHeat {
			return heat
		}
		return list
	}
	return common.JoinH(list, heat)
}
