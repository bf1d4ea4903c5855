// Package robustness is the results pane with the study's robustness
// section (engine/robust's Summary, computed with the study when it has
// blocks): PBO with its verdict, splits, degradation line, probability of
// out-of-sample loss and the histogram of its logits; the deflated Sharpe
// ratio; the plateau best beside the raw best; the walk-forward's folds and
// its stitched out-of-sample equity curve. Every figure is wrapped, never
// cut; the pane scrolls when they do not fit.
package robustness

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/engine"
	"sweepbench/engine/robust"
	"sweepbench/engine/text"
	"sweepbench/tui/common"
	"sweepbench/tui/components/chart"
	"sweepbench/tui/theme"
)

// Heights of the pictures, in lines.
const (
	histogramH = 6
	equityH    = 9
)

// Model is the robustness pane.
type Model struct {
	ctx   *common.Context
	state *common.RunState // the run it shows
	w, h  int
	off   int // the first line shown
	n     int // the lines of the last view
}

var _ common.Pane = (*Model)(nil)

// New returns the pane.
func New(ctx *common.Context, state *common.RunState) *Model { return &Model{ctx: ctx, state: state} }

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Reload shows the top of a new report.
func (m *Model) Reload() { m.off = 0 }

// Title names the pane and, when its lines do not all fit, which are shown.
func (m *Model) Title() string {
	if m.n > m.h && m.h > 0 {
		return fmt.Sprintf("Robustness: lines %d-%d of %d", m.off+1, min(m.off+m.h, m.n), m.n)
	}
	return "Robustness"
}

// Update scrolls the focused pane.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	k := m.ctx.Keys
	switch {
	case key.Matches(km, k.Up):
		m.off--
	case key.Matches(km, k.Down):
		m.off++
	case key.Matches(km, k.PageUp):
		m.off -= max(m.h-1, 1)
	case key.Matches(km, k.PageDown):
		m.off += max(m.h-1, 1)
	case key.Matches(km, k.Top):
		m.off = 0
	case key.Matches(km, k.Bottom):
		m.off = m.n
	}
	m.off = max(0, min(m.off, m.n-m.h))
	return nil
}

// View renders the pane body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	lines := m.Lines()
	m.n = len(lines)
	m.off = max(0, min(m.off, m.n-m.h))
	return t.Fit(strings.Join(lines[min(m.off, len(lines)):], "\n"), m.w, m.h)
}

// page collects a pane's lines: text wrapped to its width, never cut.
type page struct {
	t     *theme.Theme
	w     int
	lines []string
}

// add wraps text to the width and styles each line.
func (p *page) add(style lipgloss.Style, text string) {
	for _, l := range p.t.Wrap(text, p.w) {
		p.lines = append(p.lines, style.Render(l))
	}
}

// raw adds lines drawn to the width already (a table row, a picture).
func (p *page) raw(lines ...string) { p.lines = append(p.lines, lines...) }

// Lines is the pane's whole text at its width, every line within it.
func (m *Model) Lines() []string {
	t := m.ctx.Theme
	st := newStyles(t)
	r := m.state.Results
	out := &page{t: t, w: m.w}
	plain := lipgloss.NewStyle()
	switch {
	case r == nil:
		return nil
	case r.RobustErr != nil:
		out.add(st.warn, "The study's robustness summary cannot be read: "+r.RobustErr.Error())
		return out.lines
	case r.Robust == nil:
		m.none(out, st)
		return out.lines
	}
	sm := r.Robust
	name := func(c robust.Combo) string {
		switch {
		case c.Label != "":
			return c.Name() // a strategy combo: its parameters
		case r.Grid.Strategy != nil:
			return common.ComboName(r.Grid, c.Index) // a summary saved without labels
		}
		return fmt.Sprintf("hma %d x hma3 %d", c.HMA, c.HMA3)
	}

	out.add(plain, fmt.Sprintf("%d blocks of bar returns (%s bars or more each), objective %s, %s trials (the grid's distinct combos), from the %s run",
		sm.Blocks, common.Thousands(sm.BlockBars), sm.Objective, common.Thousands(sm.Trials), sm.Precision))
	if c := sm.Constraints(); c != "" {
		out.add(plain, fmt.Sprintf("constraints: %s: %s of %s combos selectable (the others still count as trials)",
			c, common.Thousands(sm.Selectable), common.Thousands(sm.Combos)))
	}

	// PBO.
	out.raw("")
	if sm.PBO == nil {
		out.add(st.head, "PBO (probability of backtest overfitting)")
		out.add(st.warn, "not computed: "+sm.PBONote)
	} else {
		out.add(st.head, fmt.Sprintf("PBO %.3f over %s splits (probability of backtest overfitting; below 0.1 low, from 0.5 high)",
			*sm.PBO, common.Thousands(sm.Splits)))
		verdict := st.low
		switch {
		case *sm.PBO >= 0.5:
			verdict = st.high
		case *sm.PBO >= 0.1:
			verdict = st.moderate
		}
		out.add(verdict, sm.PBOVerdict)
		slope := ""
		if v := val(sm.Slope); v < 0 {
			slope = " (negative: the better in sample, the worse out of sample)"
		}
		out.add(plain, fmt.Sprintf("degradation: out-of-sample %s on in-sample, slope %s%s, R^2 %s",
			sm.Metric, g3(val(sm.Slope)), slope, g3(val(sm.R2))))
		out.add(plain, fmt.Sprintf("probability of out-of-sample loss: %s (the share of the splits whose in-sample best lost money out of sample)",
			pct0(val(sm.ProbOOSLoss))))
		out.raw("")
		if h := sm.LogitHistogram; h != nil && len(h.Counts) > 0 {
			out.raw(m.histogram(h, st)...)
			out.add(st.label, fmt.Sprintf("logit of the in-sample best's out-of-sample rank, per split: %c at or below 0, the worse half (PBO's share); %c above",
				st.overfitRune, st.heldRune))
		} else {
			out.add(st.label, "(this saved summary has no logit histogram: r reruns the study)")
		}
	}

	// DSR.
	if d := sm.DSR; d != nil {
		out.raw("")
		// Of the objective's pick (sm.Selected), not of the combo under
		// the table's cursor: named so.
		out.add(st.head, fmt.Sprintf("DSR %.3f for the objective's pick (%s), %s (deflated Sharpe ratio)", d.DSR, sm.Objective, name(sm.Selected)))
		out.add(plain, fmt.Sprintf("Sharpe %s annualised (%s per bar); the best of %s skill-less trials would show %s (%s per bar); PSR %.3f (above 0, ignoring the search)",
			g4(d.SharpeAnnual), g3(d.SharpePerBar), common.Thousands(d.Trials), g4(d.SR0Annual), g3(d.SR0), d.PSR))
		out.add(st.label, fmt.Sprintf("DSR is the probability that its true Sharpe exceeds what the best of %s skill-less trials would reach by luck, given the sample length and the returns' skew (%.2f) and kurtosis (%.2f); below 0.95 it is not significant.",
			common.Thousands(d.Trials), d.Skew, d.Kurtosis))
	}

	// The plateau best beside the raw best.
	if sm.PlateauK > 0 {
		out.raw("")
		win := sm.Window() // "3x3", or one k a strategy axis: "3x3x3"
		out.add(st.head, fmt.Sprintf("plateau (the %s averaged over each combo's %s neighbourhood on the grid)", sm.Metric, win))
		out.add(plain, fmt.Sprintf("plateau best  %s: %s %s, %s mean %s", name(sm.PlateauBest), sm.Metric, g4(sm.PlateauValue), win, g4(sm.PlateauScore)))
		out.add(plain, fmt.Sprintf("raw best      %s: %s %s, %s mean %s", name(sm.Selected), sm.Metric, g4(sm.RawBestValue), win, g4(sm.RawBestScore)))
	}

	// The walk-forward.
	out.raw("")
	if wf := sm.WF; wf != nil {
		m.walkForward(out, sm, wf, st)
	} else {
		out.add(st.head, "walk-forward")
		out.add(st.label, "none: set walk-forward in the form (rolling:K, K blocks in sample and the next out, or anchored; e edits the study), or --wf")
	}
	if sm.BlockBars > 0 && sm.BlockBars < 1000 {
		out.raw("")
		out.add(st.warn, fmt.Sprintf("note: blocks of %d bars: annualised figures over a block or a few (CAGR, the walk-forward's efficiency) are noise; use fewer blocks or more bars", sm.BlockBars))
	}
	return out.lines
}

// walkForward adds the walk-forward's lines: its figures, the folds' table
// and the stitched out-of-sample equity chart.
func (m *Model) walkForward(out *page, sm *robust.Summary, wf *robust.WFSummary, st styles) {
	plain := lipgloss.NewStyle()
	out.add(st.head, fmt.Sprintf("walk-forward %s, %d folds", wf.Spec, len(wf.Folds)))
	eff := "undefined (the in-sample CAGR is not positive)"
	if wf.Efficiency != nil {
		eff = g3(*wf.Efficiency) + " (out-of-sample CAGR / in-sample CAGR)"
	}
	out.add(plain, fmt.Sprintf("stitched out-of-sample return %s%%, Sharpe %s; efficiency %s",
		text.FormatFloat(math.Round(1e4*wf.TotalReturn)/100), g3(wf.Sharpe), eff))
	// The folds, each column as wide as its widest cell: every number whole.
	rows := [][]string{{"fold", "OOS block", "chosen", "IS " + sm.Metric, "OOS " + sm.Metric, "OOS return %"}}
	for i, f := range wf.Folds {
		rows = append(rows, []string{strconv.Itoa(i + 1), strconv.Itoa(f.OOSBlock), foldCombo(m.state.Results.Grid, f.Combo),
			g4(f.ISObjective), g4(f.OOSObjective), strconv.FormatFloat(100*f.OOSReturn, 'f', 4, 64)})
	}
	for i, l := range table(rows, m.w) {
		if i == 0 {
			l = st.label.Render(l)
		}
		out.raw(l)
	}
	out.raw("")
	if len(wf.Equity) < 2 {
		why := "(this saved summary has no stitched equity curve: r reruns the study)"
		if wf.EquityNote != "" {
			why = wf.EquityNote
		}
		out.add(st.label, why)
		return
	}
	eq := make([]float64, len(wf.Equity))
	for i, p := range wf.Equity {
		eq[i] = p.Equity
	}
	// The year too where the walk-forward spans years.
	layout, step := "01-02 15:04", 16
	if wf.Equity[0].Time.UTC().Year() != wf.Equity[len(wf.Equity)-1].Time.UTC().Year() {
		layout, step = "2006-01-02 15:04", 18
	}
	xlab := func(k int) string {
		if k >= 0 && k < len(wf.Equity) {
			return wf.Equity[k].Time.UTC().Format(layout)
		}
		return ""
	}
	first, last := wf.Equity[0], wf.Equity[len(wf.Equity)-1]
	out.add(st.label, fmt.Sprintf("stitched out-of-sample equity, bars %s to %s (1 at the start of block %d, %s at the end):",
		common.Thousands(first.Bar), common.Thousands(last.Bar), wf.Folds[0].OOSBlock, g6(last.Equity)))
	body, _ := chart.Render(m.ctx, chart.Spec{W: m.w, H: equityH, XStep: step, XLabel: xlab,
		Series: []chart.Series{{Name: "oos", Values: eq, Color: st.equity, Marker: '*'}}})
	out.raw(strings.Split(body, "\n")...)
}

// table lays rows out in columns as wide as their widest cell (the third
// left-aligned, the others right-aligned), two spaces apart, one when two
// do not fit w.
func table(rows [][]string, w int) []string {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for c, cell := range r {
			widths[c] = max(widths[c], len(cell))
		}
	}
	gap, total := "  ", 0
	for _, cw := range widths {
		total += cw + 2
	}
	if total-2 > w {
		gap = " "
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		cells := make([]string, len(r))
		for c, cell := range r {
			if c == 2 {
				cells[c] = fmt.Sprintf("%-*s", widths[c], cell)
			} else {
				cells[c] = fmt.Sprintf("%*s", widths[c], cell)
			}
		}
		out[i] = strings.TrimRight(strings.Join(cells, gap), " ")
	}
	return out
}

// histogram draws the logits' counts as columns, bins of logit <= 0 (PBO's
// share) apart from the others, over an axis labelled at its ends and at 0.
func (m *Model) histogram(h *robust.Histogram, st styles) []string {
	top := 0
	for _, c := range h.Counts {
		top = max(top, c)
	}
	yl := len(strconv.Itoa(top))
	bins := len(h.Counts)
	cw := max(1, min(3, (m.w-yl-1)/bins))
	var out []string
	for level := histogramH; level >= 1; level-- {
		lab := strings.Repeat(" ", yl)
		if level == histogramH {
			lab = fmt.Sprintf("%*d", yl, top)
		}
		if level == 1 {
			lab = fmt.Sprintf("%*d", yl, 0)
		}
		var b strings.Builder
		b.WriteString(st.label.Render(lab + "|"))
		for i, c := range h.Counts {
			// A bin's height: its share of the tallest, rounded up (a bin
			// with a split shows).
			hgt := (c*histogramH + top - 1) / max(top, 1)
			cell := strings.Repeat(" ", cw)
			if hgt >= level {
				r, style := st.heldRune, st.held
				if (h.Edges[i]+h.Edges[i+1])/2 <= 0 {
					r, style = st.overfitRune, st.overfit
				}
				cell = style.Render(strings.Repeat(string(r), max(cw-1, 1)) + strings.Repeat(" ", cw-max(cw-1, 1)))
			}
			b.WriteString(cell)
		}
		out = append(out, b.String())
	}
	gw := bins * cw
	out = append(out, st.label.Render(strings.Repeat(" ", yl)+"+"+strings.Repeat("-", gw)))
	// Labels: the ends and 0.
	axis := []byte(strings.Repeat(" ", yl+1+gw+8))
	put := func(at int, s string) {
		at = max(0, min(at, len(axis)-len(s)))
		copy(axis[at:], s)
	}
	lo, hi := h.Edges[0], h.Edges[bins]
	put(yl+1, strconv.FormatFloat(lo, 'f', 2, 64))
	hs := strconv.FormatFloat(hi, 'f', 2, 64)
	put(yl+1+gw-len(hs), hs)
	if lo < 0 && hi > 0 {
		zero := yl + 1 + int(math.Round(-lo/(hi-lo)*float64(gw)))
		put(zero, "0")
	}
	lab := strings.TrimRight(string(axis), " ")
	if len(lab)+len("  logit") <= m.w {
		lab += "  logit"
	}
	out = append(out, st.label.Render(lab))
	return out
}

// none says why there is no robustness section and how to get one.
func (m *Model) none(out *page, st styles) {
	if s := m.state.Study; s != nil && s.Blocks > 0 {
		out.add(st.warn, fmt.Sprintf("This study asked for %d blocks, but its robustness statistics were not computed: they need every combo of the reference run (a cancelled run has not; r reruns it).", s.Blocks))
		return
	}
	out.add(st.head, "No robustness statistics for this study.")
	out.add(lipgloss.NewStyle(), "They come from blocks of the bar returns: set blocks in the form (e edits the study; 16 is usual, 8 on short data) and, for a walk-forward, walk-forward (rolling:K or anchored), then run it; or start the workbench with sweepbench tui --blocks 16 --wf rolling:8.")
	out.add(st.label, "This pane then shows PBO (the probability of backtest overfitting) with its logit histogram, the deflated Sharpe ratio, the plateau best beside the raw best, and the walk-forward's folds and stitched out-of-sample equity.")
}

// val is *p, NaN for nil (a figure JSON could not hold).
func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func g3(v float64) string { return gfmt(v, 3) }
func g4(v float64) string { return gfmt(v, 4) }
func g6(v float64) string { return gfmt(v, 6) }

// gfmt writes v with prec significant digits, non-finite as the engine does.
func gfmt(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return text.FormatFloat(v)
	}
	return strconv.FormatFloat(v, 'g', prec, 64)
}

// pct0 writes a fraction as a whole percentage: 0.4286 -> "43%".
func pct0(v float64) string {
	if math.IsNaN(v) {
		return "nan"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

// foldCombo is a fold's chosen combo: "20 x 30" (hma x hma3), or a
// strategy combo's parameters ("length 60, entry 3, exit 0", Short: its
// Label); a summary saved without labels: its values ("20 x 2 x 0.5").
func foldCombo(g engine.Grid, c robust.Combo) string {
	if g.Strategy == nil || c.Label != "" {
		return c.Short()
	}
	if c.Index < 0 || c.Index >= g.Len() {
		return "-"
	}
	return strings.Join(common.ParamCells(g, c.Index), " x ")
}
