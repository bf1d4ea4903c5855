// Package parity is the results pane with the parity report of SPEC
// "Parity": the verdict and the conditions that fired, the sweep's figures,
// then every combo's dn, dPnL and flips, worst first, with the combos that
// have non-borderline flips flagged. The list keeps the combos the metrics
// table's filter keeps (common.Context.Keep), as the table does.
package parity

import (
	"fmt"
	"math"
	"sort"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/components/datatable"
)

// Model is the parity pane.
type Model struct {
	ctx    *common.Context
	state  *common.RunState // the run it shows
	tbl    *datatable.Model
	rows   []int // combo index per row, worst first
	hidden int   // the combos the table's filter leaves out of the list
	built  built // what rows were built from
	flips  bool  // the list is of the worst flips (paged results), not of every combo
	w, h   int
	// params are the parameter columns the table has: hma, hma3, or a
	// strategy family's (engine.Grid.Columns).
	params string
}

// built is what the rows depend on: the results, the table's filter and
// the precision its conditions read.
type built struct {
	r    *common.Results
	keep int
	prec engine.Precision
}

func (m *Model) now() built { return built{m.state.Results, m.state.KeepGen, m.state.Prec} }

// fresh rebuilds the rows when what they depend on changed since (the
// table's filter was set or cleared).
func (m *Model) fresh() {
	if m.built != m.now() {
		m.Reload()
	}
}

var (
	_ common.Pane    = (*Model)(nil)
	_ common.Focuser = (*Model)(nil)
)

// New returns the pane.
func New(ctx *common.Context, state *common.RunState) *Model {
	// Sized to their titles and cells (datatable.SetRows).
	cols := []datatable.Column{
		{Title: "hma", Right: true}, {Title: "hma3", Right: true},
		{Title: "trades", Right: true}, {Title: "dn", Right: true},
		{Title: "dPnL pp", Right: true}, {Title: "flips", Right: true},
		{Title: "non-bl", Right: true}, {Title: "max margin", Right: true},
	}
	return &Model{ctx: ctx, state: state, tbl: datatable.New(ctx, cols, 2), params: "hma,hma3"}
}

// reloadFlips lists the worst flips of paged results' parity report (its
// counts: engine.Parity.Counts keeps no row per combo), a row per flip,
// worst first; a row selects its combo. The table's filter does not
// apply: the flips' combos are not held.
func (m *Model) reloadFlips() {
	g := m.state.Results.Grid
	if pc := strings.Join(g.Columns(), ","); !m.flips || pc != m.params {
		cols, n := withParams(g, flipColumns)
		m.tbl.SetColumns(cols, n)
		m.flips, m.params = true, pc
	}
	p := m.state.Results.Report.Parity
	margins := common.FitNumbers(func(yield func(float64) bool) {
		for _, f := range p.Flips {
			if !yield(f.Margin) {
				return
			}
		}
	}, false, false)
	cells := make([][]string, len(p.Flips))
	flags := make([]bool, len(p.Flips))
	for k, f := range p.Flips {
		m.rows = append(m.rows, f.Index)
		cells[k] = append(paramCells(g, f.Index, f.HMA, f.HMA3), fmt.Sprint(f.Bar), fmt.Sprintf("%+d", f.Pos64),
			fmt.Sprintf("%+d", f.Pos32), margins.Format(f.Margin), fmt.Sprint(f.Borderline))
		flags[k] = !f.Borderline
	}
	m.tbl.SetRows(cells, flags)
	m.Sync()
}

// Title names the pane.
func (m *Model) Title() string {
	r := m.state.Results
	if r == nil || r.Report.Parity == nil {
		return "Parity"
	}
	m.fresh()
	if r.Paged() {
		return fmt.Sprintf("Parity: %s, the worst %s", r.Report.ParityOf, common.Plural(len(r.Report.Parity.Flips), "flip"))
	}
	if m.hidden > 0 {
		return fmt.Sprintf("Parity: %s, %s of %s combos (the table's filter)", r.Report.ParityOf,
			common.Thousands(len(m.rows)), common.Thousands(len(m.rows)+m.hidden))
	}
	return "Parity: " + r.Report.ParityOf
}

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Focus shows the focused cursor.
func (m *Model) Focus(f bool) { m.tbl.Focus(f) }

// flipColumns are the columns of paged results' list: the worst flips.
var flipColumns = []datatable.Column{
	{Title: "hma", Right: true}, {Title: "hma3", Right: true}, {Title: "bar", Right: true},
	{Title: "pos64", Right: true}, {Title: "pos32", Right: true}, {Title: "margin", Right: true},
	{Title: "borderline", Right: true},
}

// comboColumns are the columns of the list of every combo (New's).
var comboColumns = []datatable.Column{
	{Title: "hma", Right: true}, {Title: "hma3", Right: true},
	{Title: "trades", Right: true}, {Title: "dn", Right: true},
	{Title: "dPnL pp", Right: true}, {Title: "flips", Right: true},
	{Title: "non-bl", Right: true}, {Title: "max margin", Right: true},
}

// withParams is cols (whose first two are hma and hma3) with g's
// parameter columns first, and the count of them (the fixed columns).
func withParams(g engine.Grid, cols []datatable.Column) ([]datatable.Column, int) {
	if g.Strategy == nil {
		return cols, 2
	}
	var out []datatable.Column
	for _, c := range g.Columns() {
		out = append(out, datatable.Column{Title: c, Right: true})
	}
	return append(out, cols[2:]...), len(out)
}

// paramCells are a row's parameter cells: hull's hma and hma3 as the row
// holds them, or combo i's parameters in g.
func paramCells(g engine.Grid, i, hma, hma3 int) []string {
	if g.Strategy == nil {
		return []string{fmt.Sprint(hma), fmt.Sprint(hma3)}
	}
	return common.ParamCells(g, i)
}

// Reload rebuilds the rows from the context's results.
func (m *Model) Reload() {
	m.rows, m.hidden, m.built = nil, 0, m.now()
	r := m.state.Results
	if r == nil || r.Report.Parity == nil {
		m.tbl.SetRows(nil, nil)
		return
	}
	if r.Paged() {
		m.reloadFlips()
		return
	}
	if pc := strings.Join(r.Grid.Columns(), ","); m.flips || pc != m.params {
		cols, n := withParams(r.Grid, comboColumns)
		m.tbl.SetColumns(cols, n)
		m.flips, m.params = false, pc
	}
	var cs []engine.ComboParity
	for _, c := range r.Report.Parity.Combos {
		if m.state.Keep != nil && !m.state.Keep(c.Index) {
			m.hidden++
			continue
		}
		cs = append(cs, c)
	}
	sort.SliceStable(cs, func(i, j int) bool { return worse(&cs[i], &cs[j]) })
	// One format per column from all its values (common.NumColumn).
	col := func(get func(c *engine.ComboParity) (float64, bool), count, plus bool) common.NumColumn {
		return common.FitNumbers(func(yield func(float64) bool) {
			for k := range cs {
				if v, ok := get(&cs[k]); ok && !yield(v) {
					return
				}
			}
		}, count, plus)
	}
	trades := col(func(c *engine.ComboParity) (float64, bool) { return float64(c.Trades64), true }, true, false)
	dn := col(func(c *engine.ComboParity) (float64, bool) { return float64(c.Dn), true }, true, true)
	dpnl := col(func(c *engine.ComboParity) (float64, bool) { return c.DPnLpp, true }, false, false)
	flips := col(func(c *engine.ComboParity) (float64, bool) { return float64(c.Flips), true }, true, false)
	nonbl := col(func(c *engine.ComboParity) (float64, bool) { return float64(c.NonBorderline), true }, true, false)
	margins := col(func(c *engine.ComboParity) (float64, bool) { return c.MaxFlipMargin, c.Flips > 0 }, false, false)
	cells := make([][]string, len(cs))
	flags := make([]bool, len(cs))
	for k := range cs {
		c := &cs[k]
		m.rows = append(m.rows, c.Index)
		margin := "-"
		if c.Flips > 0 {
			margin = margins.Format(c.MaxFlipMargin)
		}
		cells[k] = append(paramCells(r.Grid, c.Index, c.HMA, c.HMA3), trades.Format(float64(c.Trades64)),
			dn.Format(float64(c.Dn)), dpnl.Format(c.DPnLpp), flips.Format(float64(c.Flips)),
			nonbl.Format(float64(c.NonBorderline)), margin)
		flags[k] = c.NonBorderline > 0
	}
	m.tbl.SetRows(cells, flags)
	m.Sync()
}

// worse orders combos worst first: non-borderline flips, a breached dn
// limit, |dn|, |dPnL|, flips, then grid order.
func worse(a, b *engine.ComboParity) bool {
	if a.NonBorderline != b.NonBorderline {
		return a.NonBorderline > b.NonBorderline
	}
	if a.DnLimitBreached != b.DnLimitBreached {
		return a.DnLimitBreached
	}
	if x, y := abs(a.Dn), abs(b.Dn); x != y {
		return x > y
	}
	if x, y := math.Abs(a.DPnLpp), math.Abs(b.DPnLpp); x != y {
		return x > y
	}
	if a.Flips != b.Flips {
		return a.Flips > b.Flips
	}
	return a.Index < b.Index
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Worst is the combo listed first (worst by the order above), -1 if none.
func (m *Model) Worst() int {
	if len(m.rows) == 0 {
		return -1
	}
	return m.rows[0]
}

// Sync puts the cursor on the selected combo.
func (m *Model) Sync() {
	m.fresh()
	for k, i := range m.rows {
		if i == m.state.Selected {
			m.tbl.SetCursor(k)
			return
		}
	}
}

// Update handles the keys of the focused pane.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	if m.fresh(); len(m.rows) == 0 {
		return nil
	}
	if m.tbl.HandleNav(km) {
		return common.Send(common.SelectMsg{Index: m.rows[m.tbl.Cursor()]})
	}
	m.tbl.HandleScroll(km) // left and right: the columns out of view
	return nil
}

// Summary returns the report's lines: verdict, reasons, figures, runs.
func (m *Model) Summary() []string {
	t := m.ctx.Theme
	st := newStyles(t)
	r := m.state.Results
	if r == nil {
		return nil
	}
	var out []string
	p := r.Report.Parity
	if p != nil {
		v := st.pass.Render("VERDICT: " + strings.ToUpper(string(p.Verdict)))
		if p.Verdict != engine.VerdictPass {
			v = st.collapse.Render("VERDICT: " + strings.ToUpper(string(p.Verdict)))
		}
		out = append(out, v+st.label.Render(fmt.Sprintf("  %d/%d combos, borderline < %g",
			p.CombosCompared, r.Grid.Len(), p.Tolerance)))
		for _, why := range p.Reasons {
			out = append(out, st.reason.Render("! "+why))
		}
		if p.Incomplete {
			out = append(out, st.warn.Render("incomplete: only the combos both runs completed are compared"))
		}
		// The maxima over the combos, each with the combo it comes from
		// (the engine's phrasing, as run and sessions show print it).
		dn, dpnl := p.MaxFigures()
		out = append(out,
			fmt.Sprintf("trades %s fp64 / %s fp32, shifted %s (%s)",
				common.Thousands(p.TotalTrades64), common.Thousands(p.TotalTrades32),
				common.Thousands(p.ShiftedTrades), common.Pct(p.ShiftedShare)),
			dn, dpnl,
			fmt.Sprintf("flips %s, non-borderline %s; indicator error %.3g; %s combos differ", common.Thousands(p.FlipCount),
				common.Thousands(p.NonBorderlineFlips), p.MaxRelIndicatorError, common.Thousands(p.CombosDiffering)))
		if r.Paged() {
			var worst []string
			for _, e := range p.IndicatorErrors[:min(3, len(p.IndicatorErrors))] {
				worst = append(worst, fmt.Sprintf("%s %d %.3g", e.Series, e.Length, e.MaxRel))
			}
			if len(worst) > 0 {
				out = append(out, "worst indicator series: "+strings.Join(worst, t.Sep))
			}
			out = append(out, st.label.Render(fmt.Sprintf("no row per combo for a grid of %s (dn, dPnL and flips per combo are not held): the worst flips are listed; sessions show prints the whole report",
				common.Plural(r.Grid.Len(), "combo"))))
		}
		// The reading of the verdict after its figures (and after what
		// the list below holds): where the pane is short, it is what
		// gives way first.
		if p.Explanation != "" {
			out = append(out, st.warn.Render("note: "+p.Explanation))
		}
	} else {
		why := "it needs an fp64 and an fp32 run (precision both)"
		if r.Running() && len(r.Asked) > 1 {
			why = "the results so far: it is computed once both lanes end"
		}
		for _, pr := range []engine.Precision{engine.FP64, engine.FP32} {
			if never := r.NeverRan(pr); never != "" {
				why = "the " + pr.String() + " lane never ran (" + never + ")"
				break
			}
		}
		out = append(out, st.warn.Render("no parity report: "+why))
	}
	var runs []string
	for _, run := range r.Report.Runs {
		s := fmt.Sprintf("%s %s %s/%s in %s", run.Precision, run.Status,
			common.Thousands(run.Count()), common.Thousands(run.Grid.Len()), m.ctx.Duration(run.Elapsed))
		runs = append(runs, s)
	}
	out = append(out, st.label.Render("runs: "+strings.Join(runs, t.Sep)))
	if a := r.Grid.Aliases(); a > 0 {
		out = append(out, st.label.Render(fmt.Sprintf("aliases: %s of %s combos computed with their hma3 twin (L, L+1 share floor(L/2))",
			common.Thousands(a), common.Thousands(r.Grid.Len()))))
	}
	// The study's notes (too few trades, the fee, a fallback lane), as run
	// prints them.
	for _, n := range common.NoteLines(r.Report.Note, m.ctx.Deterministic) {
		out = append(out, st.warn.Render("note: "+n))
	}
	// The robustness summary (--blocks), in brief: the pane's table of
	// combos needs the room (the Robustness pane shows it all).
	switch {
	case r.RobustErr != nil:
		out = append(out, st.warn.Render("robustness: "+r.RobustErr.Error()))
	case r.Robust != nil:
		out = append(out, r.Robust.Brief()+" (the Robustness pane has it all)")
	}
	// Wrap, never cut: every figure must be readable in a narrow pane.
	var wrapped []string
	for _, l := range out {
		wrapped = append(wrapped, t.Wrap(l, m.w)...)
	}
	return wrapped
}

// View renders the pane body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	m.fresh()
	sum := m.Summary()
	if len(m.rows) == 0 {
		if m.hidden > 0 {
			sum = append(sum, t.Wrap(newStyles(t).warn.Render(fmt.Sprintf("the table's filter keeps none of the %s combos compared (/, ctrl+u and enter clear it)",
				common.Thousands(m.hidden))), m.w)...)
		}
		return t.Fit(strings.Join(sum, "\n"), m.w, m.h)
	}
	// Keep at least four table lines (header and three rows); a summary
	// cut short says so on its last line rather than end mid-sentence.
	if keep := m.h - 4; len(sum) > keep {
		sum = sum[:max(keep, 1)]
		sum[len(sum)-1] = newStyles(m.ctx.Theme).warn.Render(m.ctx.Theme.Truncate(fmt.Sprintf("... %d more lines: a taller terminal shows them (run and sessions show print them all)", len(m.Summary())-len(sum)+1), m.w))
	}
	m.tbl.SetSize(m.w, m.h-len(sum))
	return t.Fit(strings.Join(sum, "\n")+"\n"+m.tbl.View(), m.w, m.h)
}
