package metrics

import (
	"context"
	"fmt"
	"slices"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/sessions"
	"sweepbench/tui/common"
)

// The table of paged results (common.Results.Paged: a grid too large to
// hold every result) lists a page of combos, never the whole grid:
//
//   - grid order without a filter: the combos the study kept (its best by
//     the objective), in grid order;
//   - a sort on a side the run's summary keeps (engine.Summary.Top: every
//     metric's better side, both sides of the counts; the study's own
//     objective with its constraints, Summary.Best): that top list;
//   - any other sort, and any filter: the best PageRows combos the saved
//     run holds by the sort (by the study's objective in grid order), the
//     filter applied as they are read (common.Pager.Top, a pass over the
//     run in pages), asked again whenever the filter, the sort or the
//     precision changes. Without a pager (a study not saved, or while its
//     runs are opened) the sort and the filter apply to the combos held,
//     and the title says so.
//
// A page read from the pager comes back as pageMsg; the combos of the
// other precision are read with it (Pager.Combos), for the side-by-side
// columns.

// query is what a paged table lists.
type query struct {
	r         *common.Results
	sortCol   string
	sortP     engine.Precision
	sortState int
	filter    string
	prec      engine.Precision // the precision the filter reads
	pagers    bool             // whether the results had pagers
}

// pageMsg is a page read from the pagers.
type pageMsg struct {
	q    query
	rows []int // in the order listed
	rs   map[engine.Precision][]engine.ComboResult
	err  error
}

// paged is the state of a paged table.
type paged struct {
	shown   query  // the query the rows answer
	asked   *query // the query being read, nil when none
	pending bool   // a query is to be asked (Fetch)
	note    string // what the rows are, for the title
	short   string // the same in a few words, for a narrow title
	// other is the combos of a summary's list whose results in the other
	// precision are to be read (the side-by-side columns), in other.p.
	other *otherRead
	err   error // the last page's error
}

// otherRead is a read of the other precision's results of a list's
// combos.
type otherRead struct {
	q    query
	p    engine.Precision
	rows []int
}

func (m *Model) query() query {
	r := m.state.Results
	return query{r: r, sortCol: m.sortCol, sortP: m.sortP, sortState: m.sortState, filter: m.filterSrc,
		prec: m.Prec(), pagers: r.Pager(engine.FP64) != nil || r.Pager(engine.FP32) != nil}
}

// minimise is the direction of a metric sort: best first is the metric's
// better side (common.Better: lower for max_drawdown, higher else).
func (q query) minimise() bool {
	return (q.sortCol == "max_drawdown") == (q.sortState == 1)
}

// refreshPaged lists the rows of paged results: at once from what is held
// (kept combos, a summary's top list), else from the page last read while
// Fetch asks for the new one.
func (m *Model) refreshPaged() {
	r := m.state.Results
	if m.filterSrc != "" && m.sortState != 0 && m.sortP != m.Prec() {
		// A pass over one run both filters and ranks: the sort follows
		// the filter's precision (the title says so).
		m.sortP = m.Prec()
	}
	q := m.query()
	m.pg.pending = false
	switch rows, note, ok := m.summaryRows(q); {
	case ok:
		if q != m.pg.shown {
			m.pg.other = m.otherToRead(q, rows)
		}
		m.rows, m.pg.shown, m.pg.note, m.pg.err = rows, q, note, nil
		m.pg.short = "summary"
		if q.sortState == 0 {
			m.pg.short = "kept best"
		}
	case q.pagers && q == m.pg.shown:
		// The page read for this query: its order, refiltered.
		rows := m.rows[:0:0]
		for _, i := range m.rows {
			if m.Keeps(i) {
				rows = append(rows, i)
			}
		}
		m.rows = rows
	case q.pagers:
		if m.pg.shown.r != r {
			m.rows = nil // another study's rows
		}
		m.pg.pending = m.pg.asked == nil || *m.pg.asked != q
		m.pg.note = "reading the saved run" + m.ctx.Theme.Ellipsis
		m.pg.short = "reading" + m.ctx.Theme.Ellipsis
	default:
		// No pager: sort and filter what is held.
		m.rows = nil
		for _, i := range r.Indexes() {
			if m.Keeps(i) {
				m.rows = append(m.rows, i)
			}
		}
		m.sortHeld()
		m.pg.shown, m.pg.err = q, nil
		m.pg.note = fmt.Sprintf("the %s kept; %s", common.Plural(len(r.Indexes()), "combo"), r.PagerWhy)
		m.pg.short = "kept only: " + r.PagerWhy
	}
}

// summaryRows are the rows q lists without reading the run: the kept
// combos in grid order, or a summary's top list.
func (m *Model) summaryRows(q query) ([]int, string, bool) {
	r := q.r
	if q.filter != "" {
		return nil, "", false
	}
	if q.sortState == 0 {
		return r.Indexes(), fmt.Sprintf("the study's best %s kept (s sorts, / filters the whole run)", common.Thousands(len(r.Indexes()))), true
	}
	s := r.Summary(q.sortP)
	if s == nil {
		return nil, "", false
	}
	var list []engine.ComboResult
	o := r.Objective
	switch ok := false; {
	case q.sortCol == o.Name() && o.Constrained():
		if q.sortState != 1 {
			return nil, "", false
		}
		list = s.Best
	default:
		if list, ok = s.Top(q.sortCol, q.minimise()); !ok {
			return nil, "", false
		}
	}
	rows := make([]int, len(list))
	for k := range list {
		rows[k] = list[k].Index
	}
	r.Hold(q.sortP, list) // the list's results: the table reads them
	return rows, fmt.Sprintf("top %s of the run's summary", common.Thousands(len(rows))), true
}

// otherToRead is the read of the other precision's results of rows (a
// summary's list in q.sortP) that the results do not hold, nil when
// there is none to read (no pager, or every one held).
func (m *Model) otherToRead(q query, rows []int) *otherRead {
	r := q.r
	if q.sortState == 0 {
		return nil // the kept combos: both runs keep them
	}
	p := engine.FP64
	if q.sortP == engine.FP64 {
		p = engine.FP32
	}
	if r.Run(p) == nil || r.Pager(p) == nil {
		return nil
	}
	for _, i := range rows {
		if !r.Held(i, p) {
			return &otherRead{q: q, p: p, rows: rows}
		}
	}
	return nil
}

// otherMsg is the other precision's results of a summary's list.
type otherMsg struct {
	o   *otherRead
	rs  []engine.ComboResult
	err error
}

// sortHeld sorts the held rows as the full table sorts its rows.
func (m *Model) sortHeld() {
	if m.sortState == 0 {
		return
	}
	m.sortRows()
}

// Fetch is the command that reads the page the table needs from the
// pagers, nil when it needs none. Its answer is tagged by the caller.
func (m *Model) Fetch() tea.Cmd {
	r := m.state.Results
	if r == nil || !r.Paged() {
		return nil
	}
	if o := m.pg.other; o != nil && !m.pg.pending {
		m.pg.other = nil
		pg := r.Pager(o.p)
		return common.Guard(func() tea.Msg {
			rs, err := pg.Combos(context.Background(), o.rows)
			return otherMsg{o: o, rs: rs, err: err}
		}, func(err error) tea.Msg { return otherMsg{o: o, err: err} })
	}
	if !m.pg.pending {
		return nil
	}
	m.pg.pending = false
	q := m.query()
	m.pg.asked = &q
	// The run read: the sort's precision, or the filter's when there is
	// a filter (it reads that precision's values; the sort then ranks
	// them there too).
	mainPrec := q.prec
	if q.sortState != 0 && q.filter == "" {
		mainPrec = q.sortP
	}
	main := r.Pager(mainPrec)
	if main == nil {
		return nil
	}
	other := engine.FP32
	if mainPrec == engine.FP32 {
		other = engine.FP64
	}
	otherPager := r.Pager(other)
	keep := m.keepResult() // a copy of the filter, for the reading goroutine
	obj := engine.Objective{Metric: q.sortCol, Minimise: q.minimise()}
	if q.sortState == 0 {
		obj = r.Objective
	} else if q.sortCol == r.Objective.Name() && r.Objective.Constrained() && q.sortState == 1 {
		obj = r.Objective
	}
	n := common.PageRows
	return common.Guard(func() tea.Msg {
		ctx := context.Background()
		rs, err := main.Top(ctx, sessions.TopQuery{Objective: obj, N: n, Filter: keep})
		if err != nil {
			return pageMsg{q: q, err: err}
		}
		out := pageMsg{q: q, rs: map[engine.Precision][]engine.ComboResult{mainPrec: rs}}
		for _, c := range rs {
			out.rows = append(out.rows, c.Index)
		}
		if q.sortState == 0 {
			slices.Sort(out.rows) // the filter in grid order: the best kept, listed by index
		}
		if otherPager != nil && len(out.rows) > 0 {
			if out.rs[other], err = otherPager.Combos(ctx, out.rows); err != nil {
				return pageMsg{q: q, err: err}
			}
		}
		return out
	}, func(err error) tea.Msg { return pageMsg{q: q, err: err} })
}

// otherTook takes the other precision's results of a summary's list.
func (m *Model) otherTook(msg otherMsg) {
	if msg.o.q != m.pg.shown || msg.o.q.r != m.state.Results {
		return
	}
	if msg.err != nil {
		m.pg.err, m.pg.note = msg.err, "the saved run could not be read: "+msg.err.Error()
		return
	}
	m.state.Results.Hold(msg.o.p, msg.rs)
	m.fmtsOf = nil
	m.build()
}

// page takes a page read: the results hold it, the table lists it.
func (m *Model) page(msg pageMsg) {
	if m.pg.asked == nil || msg.q != *m.pg.asked || msg.q.r != m.state.Results {
		return // a page for a query since changed
	}
	m.pg.asked = nil
	m.pg.shown = msg.q
	if msg.err != nil {
		m.pg.err = msg.err
		m.pg.note = "the saved run could not be read: " + msg.err.Error()
		m.pg.short = "not read"
		m.rows = nil
	} else {
		for p, rs := range msg.rs {
			m.state.Results.Hold(p, rs)
		}
		m.rows, m.pg.err = msg.rows, nil
		what := "best"
		if msg.q.sortState == 2 {
			what = "worst"
		}
		m.pg.note = fmt.Sprintf("the %s %s of the saved run", what, common.Thousands(len(msg.rows)))
		m.pg.short = "saved run"
		if msg.q.filter != "" {
			m.pg.note += " the filter keeps"
		}
	}
	m.fmtsOf = nil // widths from the values now held
	m.build()
}

// keepResult is the filter as a predicate on a result (the values of the
// filter's precision, as the table shows them), for a pager's reading
// goroutine: it reads no state of the model. nil when there is no filter.
func (m *Model) keepResult() func(*engine.ComboResult) bool {
	terms := slices.Clone(m.filter)
	if len(terms) == 0 {
		return nil
	}
	g := m.state.Results.Grid
	return func(c *engine.ComboResult) bool { return keeps(terms, g, c) }
}

// keeps reports whether every term holds for result c.
func keeps(terms []term, g engine.Grid, c *engine.ComboResult) bool {
	for _, t := range terms {
		var v float64
		ok := true
		switch t.col {
		case "*":
			if g.Strategy != nil {
				if !matchesAny(g, c.Index, t.val) {
					return false
				}
				continue
			}
			if float64(c.HMA) != t.val && float64(c.HMA3) != t.val {
				return false
			}
			continue
		case "hma":
			v = float64(c.HMA)
		case "hma3":
			v = float64(c.HMA3)
		default:
			if g.Strategy != nil {
				if _, pv, num, isP := common.ParamOf(g, c.Index, t.col); isP {
					v, ok = pv, num
					break
				}
			}
			v, ok = c.Metrics.Value(t.col)
			if ok && common.IsPercent(t.col) {
				v *= 100
			}
		}
		if !ok || !t.holds(v) {
			return false
		}
	}
	return true
}

// KeepsResult reports whether the table's filter keeps result c (read in
// the filter's precision): what Keeps says of a combo, for a result the
// results do not hold (a heatmap window's).
func (m *Model) KeepsResult(c *engine.ComboResult) bool {
	return keeps(m.filter, m.state.Results.Grid, c)
}
