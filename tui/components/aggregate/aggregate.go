// Package aggregate is the results pane of a suite's "all datasets" view:
// the cross-dataset aggregate (suite.Aggregate: per combo, the median and
// the worst of the objective over the datasets and the number of datasets
// where it made money) as a top list, best median first (Aggregate.Top,
// the order of the CLI's suite report), with the selected combo's figures
// under it. The heatmap pane beside it draws the same figures over the
// grid (common.Results.Agg's columns). It only displays: the results
// screen reads the aggregate from the store.
package aggregate

import (
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/tui/common"
	"sweepbench/tui/components/datatable"
)

// Model is the aggregate pane.
type Model struct {
	ctx   *common.Context
	state *common.RunState // the run it shows
	tbl   *datatable.Model
	agg   *suite.Aggregate
	order []int // every combo, best median first
	rank  []int // rank[idx] is combo idx's row
	note  string
	fresh bool // a new aggregate: the list shows from its top once sized
	w, h  int
	num   [2]common.NumColumn // median, worst
}

var (
	_ common.Pane    = (*Model)(nil)
	_ common.Focuser = (*Model)(nil)
)

// New returns an empty pane.
func New(ctx *common.Context, state *common.RunState) *Model {
	return &Model{ctx: ctx, state: state, tbl: datatable.New(ctx, nil, 2)}
}

// Set shows agg (nil: none yet) with a note above the list: what is being
// computed, which datasets are left out, or why there is no aggregate.
func (m *Model) Set(agg *suite.Aggregate, note string) {
	m.note = note
	if agg == m.agg {
		return
	}
	m.agg, m.order, m.rank, m.fresh = agg, nil, nil, true
	if agg != nil {
		m.order = agg.Top(len(agg.Median))
		m.rank = make([]int, len(m.order))
		for r, i := range m.order {
			m.rank[i] = r
		}
		pct := 1.0
		if common.IsPercent(agg.Objective.Name()) {
			pct = 100
		}
		for k, vs := range [][]float64{agg.Median, agg.Worst} {
			m.num[k] = common.FitNumbers(func(yield func(float64) bool) {
				for _, v := range vs {
					if !yield(pct * v) {
						return
					}
				}
			}, engine.IsCount(agg.Objective.Name()), false)
		}
	}
	m.layout()
	m.Sync()
}

// Aggregate is the aggregate shown, nil when none.
func (m *Model) Aggregate() *suite.Aggregate { return m.agg }

// Order is the combos as listed: best median first.
func (m *Model) Order() []int { return slices.Clone(m.order) }

// Title names the pane: "All 3 datasets: best median sharpe first".
func (m *Model) Title() string {
	if m.agg == nil {
		return "All datasets"
	}
	return fmt.Sprintf("All %s: best median %s first", common.Plural(len(m.agg.Datasets), "dataset"), m.agg.Objective.Name())
}

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.layout()
}

// Focus shows the cursor row as focused.
func (m *Model) Focus(f bool) { m.tbl.Focus(f) }

func (m *Model) layout() {
	if m.agg == nil {
		return
	}
	worst := "worst (min)"
	if m.agg.Objective.Minimise {
		worst = "worst (max)"
	}
	name := common.Header(m.agg.Objective.Name())
	nd := len(m.agg.Datasets)
	cols := []datatable.Column{{Title: "hma", Width: 3, Right: true}, {Title: "hma3", Width: 4, Right: true},
		{Title: "median " + name, Width: m.num[0].Width, Right: true}, {Title: worst, Width: m.num[1].Width, Right: true},
		{Title: "profitable", Width: len(fmt.Sprintf("%d/%d", nd, nd)), Right: true}}
	g := m.agg.Grid
	fixed := 2
	if g.Strategy != nil {
		// A family's parameters first, each as wide as its widest value.
		var pc []datatable.Column
		for _, c := range g.Columns() {
			pc = append(pc, datatable.Column{Title: c, Width: len(c), Right: true})
		}
		for i := range g.Len() {
			for k, t := range common.ParamCells(g, i) {
				pc[k].Width = max(pc[k].Width, len(t))
			}
		}
		cols = append(pc, cols[2:]...)
		fixed = len(pc)
	} else {
		cols[0].Width = max(cols[0].Width, len(fmt.Sprint(g.HMA.Last())))
		cols[1].Width = max(cols[1].Width, len(fmt.Sprint(g.HMA3.Last())))
	}
	m.tbl.SetColumns(cols, fixed)
	m.tbl.SetRowFunc(len(m.order), m.row, nil)
}

func (m *Model) row(r int) []string {
	g := m.agg
	i := m.order[r]
	pct := 1.0
	if common.IsPercent(g.Objective.Name()) {
		pct = 100
	}
	return append(common.ParamCells(g.Grid, i), m.num[0].Format(pct*g.Median[i]), m.num[1].Format(pct*g.Worst[i]),
		fmt.Sprintf("%d/%d", g.Profitable[i], len(g.Datasets)))
}

// Sync moves the cursor to the selected combo.
func (m *Model) Sync() {
	if i := m.state.Selected; m.agg != nil && i >= 0 && i < len(m.rank) {
		m.tbl.SetCursor(m.rank[i])
	}
}

// Update moves the cursor and selects the combo under it
// (common.SelectMsg: every pane follows).
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok || m.agg == nil || !m.tbl.HandleNav(km) {
		return nil
	}
	return common.Send(common.SelectMsg{Index: m.order[m.tbl.Cursor()]})
}

// Selected are the lines that say the selected combo's figures, and its
// objective on the dataset on screen (the lane the aggregate reads).
func (m *Model) selected() []string {
	g, r := m.agg, m.state.Results
	i := m.state.Selected
	if g == nil || i < 0 || i >= len(g.Median) {
		return nil
	}
	st := newStyles(m.ctx.Theme)
	name := g.Objective.Name()
	out := []string{st.value.Render(fmt.Sprintf("%s: median %s %s, worst %s, in profit on %d of %s", common.ComboName(g.Grid, i),
		name, common.Value(name, g.Median[i]), common.Value(name, g.Worst[i]), g.Profitable[i], common.Plural(len(g.Datasets), "dataset")))}
	if r != nil && r.Primary() != nil {
		p := r.Primary().Precision
		if v, ok := r.Value(i, name, p); ok {
			out = append(out, st.label.Render(fmt.Sprintf("on the dataset shown (%s): %s %s (%s)", common.Clean(r.Report.Dataset.Name), name, common.Value(name, v), p)))
		}
	}
	return out
}

// View renders the pane body, exactly w x h: the note, the list, the
// selected combo's figures.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	var head []string
	if m.note != "" {
		for _, l := range t.Wrap(m.note, m.w) {
			head = append(head, st.warn.Render(l))
		}
	}
	if m.agg == nil {
		return t.Fit(strings.Join(head, "\n"), m.w, m.h)
	}
	var foot []string
	for _, l := range m.selected() {
		foot = append(foot, t.Wrap(l, m.w)...)
	}
	th := max(2, m.h-len(head)-len(foot))
	m.tbl.SetSize(m.w, th)
	if m.fresh {
		// Sized at last: from the top, scrolled only as far as the
		// selected combo needs (it was synced before the list had rows
		// to show, which put it on the first one).
		m.fresh = false
		m.tbl.SetCursor(0)
		m.Sync()
	}
	if m.fresh {
		// Sized at last: from the top, scrolled only as far as the
		// selected combo needs (it was synced before the list had rows
		// to show, which put it on the first one).
		m.fresh = false
		m.tbl.SetCursor(0)
		m.Sync()
	}
	parts := append(head, m.tbl.View())
	parts = append(parts, foot...)
	return t.Fit(strings.Join(parts, "\n"), m.w, m.h)
}
