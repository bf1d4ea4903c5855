// Package crossover is the results pane that shows one combo around a bar
// where its fp32 and fp64 positions differ (a flip): close, h and h3 over a
// window centred on the flip, both precisions' positions under it, and the
// flip's margin |h3-h|/close. Keys step through the combo's flips. A
// strategy family's combo draws as a signal chart: close, the positions
// and the flips, each with the family's own margin (Inspection.Margin).
// A family with memory (zscore, breakout, rsi: Grid.Strategy.Memory())
// lists divergences instead, as the parity report does (SPEC Part 2): a
// maximal run of bars where the positions differ, judged borderline or
// not by its root bar's fp64 margin alone (its later bars' margins say
// nothing), with its length in bars.
package crossover

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/components/chart"
)

// Model is the crossover pane.
type Model struct {
	ctx   *common.Context
	state *common.RunState // the run it shows
	w, h  int
	flips []int // the bars it steps through, ascending: each bar b (< n-1) where the held positions differ, or (memory) each divergence's root
	runs  []int // memory: flips[k]'s divergence length in bars; nil otherwise
	diff  []int // every bar b (< n-1) where the held positions differ
	cur   int   // the flip shown
	worst int   // the flip it opens on: the widest margin, non-borderline first
}

var _ common.Pane = (*Model)(nil)

// New returns the pane.
func New(ctx *common.Context, state *common.RunState) *Model { return &Model{ctx: ctx, state: state} }

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Title names the pane.
func (m *Model) Title() string {
	pane := "Crossover"
	if r := m.state.Results; r != nil && r.Grid.Strategy != nil {
		pane = "Signal" // a family's combo: close and its positions
	}
	if len(m.flips) > 0 {
		t := fmt.Sprintf("%s: %s %d of %d", pane, m.unit(), m.cur+1, len(m.flips))
		if m.cur == m.worst && len(m.flips) > 1 {
			t += ", the widest margin" // where it opens; n/N step in bar order
		}
		return t
	}
	return pane
}

// memory reports whether the results are a strategy family's with memory:
// its flips are divergences, judged by their root.
func (m *Model) memory() bool {
	r := m.state.Results
	return r != nil && r.Grid.Strategy != nil && r.Grid.Strategy.Memory()
}

// unit is what the pane steps through: "flip", or "divergence".
func (m *Model) unit() string {
	if m.runs != nil {
		return "divergence"
	}
	return "flip"
}

// Reload lists the flips of the inspected combo (a comparison of the two
// precisions' positions, bar by bar; for a family with memory its
// divergences, each at its root) and shows the worst one first.
func (m *Model) Reload() {
	m.flips, m.runs, m.diff, m.cur = nil, nil, nil, 0
	in := m.state.Inspect
	if in == nil || in.Err != nil || in.D64 == nil || in.D32 == nil {
		return
	}
	p64, p32 := in.D64.Pos, in.D32.Pos
	for b := 0; b+1 < len(p64) && b < len(p32); b++ {
		if p64[b] != p32[b] {
			m.diff = append(m.diff, b)
		}
	}
	if m.memory() {
		// One divergence per maximal run of differing bars, at its root
		// (strategy.Divergences over the held bars, as the parity does).
		m.runs = []int{}
		for k := 0; k < len(m.diff); {
			j := k + 1
			for j < len(m.diff) && m.diff[j] == m.diff[j-1]+1 {
				j++
			}
			m.flips = append(m.flips, m.diff[k])
			m.runs = append(m.runs, j-k)
			k = j
		}
	} else {
		m.flips = m.diff
	}
	worst := -1.0
	for k, b := range m.flips {
		mg, _ := m.margin(b)
		if !m.borderline(mg) {
			mg += 1 // non-borderline first
		}
		if mg > worst {
			worst, m.cur = mg, k
		}
	}
	m.worst = m.cur
}

// margin is the flip's |h3-h|/close in fp64 (a strategy combo: the
// family's margin; a divergence's: at its root): from the parity report
// when it lists the flip (listed says so), else read off the fp64 series.
func (m *Model) margin(bar int) (v float64, listed bool) {
	in := m.state.Inspect
	if r := m.state.Results; r != nil && r.Report.Parity != nil {
		for _, f := range r.Report.Parity.Flips {
			if f.Index == in.Index && f.Bar == bar {
				return f.Margin, true
			}
		}
	}
	d := in.D64
	if d.H == nil { // a strategy combo: the family's own margin
		if bar < len(in.Margin) {
			return in.Margin[bar], false
		}
		return math.NaN(), false
	}
	return math.Abs(d.H3[bar]-d.H[bar]) / d.Close[bar], false
}

// signal reports whether the inspected combo is a strategy family's: its
// chart is close and the positions (no h, h3).
func (m *Model) signal() bool {
	in := m.state.Inspect
	d := in.D64
	if d == nil {
		d = in.D32
	}
	return d != nil && d.H == nil
}

// name names the inspected combo: "hma 20 x hma3 30", or a family's
// label ("length 20, entry 2, exit 0.5").
func (m *Model) name(in *common.Inspection) string {
	if r := m.state.Results; r != nil && r.Grid.Strategy != nil {
		return common.ComboName(r.Grid, in.Index)
	}
	return fmt.Sprintf("hma %d x hma3 %d", in.Combo.HMA, in.Combo.HMA3)
}

// Counts are the inspected combo's flips as the parity report counts
// them (ComboParity): Flips the bars where the held positions differ,
// NonBorderline the flips (memory: divergences) not borderline,
// MaxMargin the largest margin among them (memory: among the roots; 0
// when none); Divergences the number of divergences (memory) or flips.
type Counts struct {
	Flips, Divergences, NonBorderline int
	MaxMargin                         float64
}

// Counts returns the inspected combo's counts (after Reload).
func (m *Model) Counts() Counts {
	nb, mx := m.judged()
	return Counts{Flips: len(m.diff), Divergences: len(m.flips), NonBorderline: nb, MaxMargin: mx}
}

// judged is the number of flips (memory: divergences, by their root) not
// borderline and the largest margin among them (NaN margins skipped).
func (m *Model) judged() (nonBorderline int, maxMargin float64) {
	for _, b := range m.flips {
		mg, _ := m.margin(b)
		if !m.borderline(mg) {
			nonBorderline++
		}
		if !math.IsNaN(mg) {
			maxMargin = math.Max(maxMargin, mg)
		}
	}
	return nonBorderline, maxMargin
}

func (m *Model) tolerance() float64 {
	if r := m.state.Results; r != nil && r.Report.Parity != nil {
		return r.Report.Parity.Tolerance
	}
	if m.state.Study != nil && m.state.Study.Tolerance > 0 {
		return m.state.Study.Tolerance
	}
	return engine.DefaultBorderline
}

func (m *Model) borderline(margin float64) bool { return margin < m.tolerance() }

// Update handles the keys of the focused pane.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok || len(m.flips) == 0 {
		return nil
	}
	k := m.ctx.Keys
	switch {
	case key.Matches(km, k.NextFlip), key.Matches(km, k.Right), key.Matches(km, k.Down):
		m.cur = (m.cur + 1) % len(m.flips)
	case key.Matches(km, k.PrevFlip), key.Matches(km, k.Left), key.Matches(km, k.Up):
		m.cur = (m.cur - 1 + len(m.flips)) % len(m.flips)
	case key.Matches(km, k.Top):
		m.cur = 0
	case key.Matches(km, k.Bottom):
		m.cur = len(m.flips) - 1
	}
	return nil
}

func posRune(p int8) rune {
	switch p {
	case 1:
		return '+'
	case -1:
		return '-'
	}
	return '.'
}

func posName(p int8) string {
	switch p {
	case 1:
		return "+1 long"
	case -1:
		return "-1 short"
	}
	return "0 flat"
}

// View renders the pane body, exactly w x h: the heading (the flip on
// show, or why there is none), the chart of close, h and h3 around it,
// the position strips and flip marks under it, and the legend.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	if v, pending := m.state.InspectPending(m.ctx.Theme, m.w, m.h, st.label, st.bad); pending {
		return v
	}
	in := m.state.Inspect
	d := in.D64
	if d == nil {
		d = in.D32
	}
	if d == nil {
		return t.Fit(st.label.Render(strings.Join(t.Wrap(in.Missing[engine.FP64], m.w), "\n")), m.w, m.h)
	}
	lines, center := m.heading(in, d, st)
	legend := m.legend(st)
	chartH := m.h - len(lines) - 3 - len(legend)
	if chartH < 4 {
		return t.Fit(strings.Join(lines, "\n"), m.w, m.h)
	}
	s, e := m.span(d, center)
	body, lay := m.plot(d, s, e, chartH, st)
	lines = append(lines, body)
	var p64, p32 []int8
	if in.D64 != nil {
		p64 = in.D64.Pos
	}
	if in.D32 != nil {
		p32 = in.D32.Pos
	}
	lines = append(lines, m.strip("fp64", p64, s, e, lay, st), m.strip("fp32", p32, s, e, lay, st))
	lines = append(lines, m.flipMarks(s, e, lay, st))
	lines = append(lines, legend...)
	return t.Fit(strings.Join(lines, "\n"), m.w, m.h)
}

// heading is the lines over the chart, wrapped to the pane: the flip on
// show (its bar and time, whether it is borderline, its margin and the
// two positions), or the last bars and why there is no flip. center is
// the bar the chart centres: the flip's, else d's last.
func (m *Model) heading(in *common.Inspection, d *engine.ComboDetail, st styles) (lines []string, center int) {
	t := m.ctx.Theme
	center = len(d.Close) - 1
	if len(m.flips) > 0 {
		b := m.flips[m.cur]
		center = b
		mg, listed := m.margin(b)
		kind := st.good.Render("borderline")
		if !m.borderline(mg) {
			kind = st.bad.Render("NON-BORDERLINE")
		}
		src := ""
		if !listed {
			src = " (fp64 series)"
		}
		what := "|h3-h|/close"
		if m.signal() {
			what = "of close"
		}
		if m.runs != nil {
			// A divergence: its root, its length, judged by the root's
			// margin; then the combo's counts as the parity counts them.
			lines = append(lines,
				fmt.Sprintf("%s: divergence %d/%d at bar %s, %s UTC, %s", m.name(in),
					m.cur+1, len(m.flips), common.Thousands(b), common.BarTime(m.barTime(b), "2006-01-02 15:04"),
					common.Plural(m.runs[m.cur], "bar")),
				kind+fmt.Sprintf(": root margin %s %.3g%s vs %g; fp64 %s, fp32 %s", what, mg, src, m.tolerance(),
					posName(in.D64.Pos[b]), posName(in.D32.Pos[b])))
			nb, maxm := m.judged()
			lines = append(lines, st.label.Render(fmt.Sprintf("%s in %s, %d non-borderline, max root margin %.3g",
				common.Plural(len(m.diff), "flip bar"), common.Plural(len(m.flips), "divergence"), nb, maxm)))
		} else {
			lines = append(lines,
				fmt.Sprintf("%s: flip %d/%d at bar %s, %s UTC", m.name(in),
					m.cur+1, len(m.flips), common.Thousands(b), common.BarTime(m.barTime(b), "2006-01-02 15:04")),
				kind+fmt.Sprintf(": margin %s %.3g%s vs %g; fp64 %s, fp32 %s", what, mg, src, m.tolerance(),
					posName(in.D64.Pos[b]), posName(in.D32.Pos[b])))
		}
	} else {
		why := "no flips: fp32 and fp64 hold the same position on every bar"
		switch {
		case in.Missing[engine.FP32] != "":
			why = in.Missing[engine.FP32] + ": no flips to compare"
		case in.Missing[engine.FP64] != "":
			why = in.Missing[engine.FP64] + ": no flips to compare"
		case in.D64 == nil || in.D32 == nil:
			why = "one precision ran: no flips to show"
		}
		lines = append(lines, fmt.Sprintf("%s: last bars", m.name(in)),
			st.label.Render(why))
	}
	// Wrapped, never cut: the margin and positions must read whole at 80
	// columns.
	var wrapped []string
	for _, l := range lines {
		wrapped = append(wrapped, t.Wrap(l, m.w)...)
	}
	return wrapped, center
}

// legend is the legend under the chart, wrapped to the pane.
func (m *Model) legend(st styles) []string {
	t := m.ctx.Theme
	if m.state.Inspect != nil && m.signal() {
		// The signal's lines and levels, each with its marker.
		var parts []string
		for _, s := range m.signalSeries(st) {
			parts = append(parts, st.label.Render(s.Name[1:])+" "+legendKey(t.Plain, s.Marker, s.Color))
		}
		marks := "x flip, ^ this one"
		if m.runs != nil {
			marks = "x divergence root, ~ its later bars, ^ this one"
		}
		return t.Wrap(strings.Join(parts, "  ")+"  "+
			st.label.Render("position + long - short . flat; "+marks), m.w)
	}
	return t.Wrap(st.label.Render("close")+" "+legendKey(t.Plain, '.', st.close)+"  "+
		st.label.Render("h (hma)")+" "+legendKey(t.Plain, 'h', st.h)+"  "+
		st.label.Render("h3 (hma3)")+" "+legendKey(t.Plain, '3', st.h3)+"  "+
		st.label.Render("position + long - short . flat; x flip, ^ this one"), m.w)
}

// span is the bars [s, e) the chart shows: one bar per column where the
// data allows (the columns the y labels leave), center centred, from the
// first bar where h and h3 are both defined.
func (m *Model) span(d *engine.ComboDetail, center int) (s, e int) {
	n := len(d.Close)
	first := 0
	if d.H == nil {
		first = min(max(m.state.Inspect.First, 0), n-1) // a strategy combo's first valid bar
	}
	for d.H != nil && first < n && (math.IsNaN(d.H[first]) || math.IsNaN(d.H3[first])) {
		first++
	}
	npts := max(2, m.w-10)
	for range 2 {
		ws, we := window(center, npts, first, n)
		lo, hi := m.extent(d, ws, we)
		lw := max(len(strconv.FormatFloat(lo, 'g', 6, 64)), len(strconv.FormatFloat(hi, 'g', 6, 64)))
		npts = chart.PointsFor(m.w, lw)
	}
	return window(center, npts, first, n)
}

// plot draws close, h and h3 over bars [s, e), chartH rows high, the
// flips among them highlighted; the layout places the bars' columns.
func (m *Model) plot(d *engine.ComboDetail, s, e, chartH int, st styles) (string, chart.Layout) {
	n := len(d.Close)
	sl := func(x []float64) []float64 { return x[s:e] }
	var hl []int
	for _, b := range m.diff {
		if b >= s && b < e {
			hl = append(hl, b-s)
		}
	}
	// Hours alone within a day; the date too where the window spans days
	// (the title gives the flip's year).
	layout, step := "15:04", 12
	if e > s && common.SpansDays(m.barTime(s), m.barTime(e-1)) {
		layout, step = "01-02 15:04", 14
	}
	xlab := func(k int) string {
		if k < 0 || s+k >= n {
			return ""
		}
		return common.BarTime(m.barTime(s+k), layout)
	}
	series := []chart.Series{{Name: "1close", Values: sl(d.Close), Color: st.close, Marker: '.'}}
	if d.H != nil {
		series = append(series,
			chart.Series{Name: "2h", Values: sl(d.H), Color: st.h, Marker: 'h'},
			chart.Series{Name: "3h3", Values: sl(d.H3), Color: st.h3, Marker: '3'})
	} else {
		series = nil
		for _, s := range m.signalSeries(st) {
			s.Values = sl(s.Values)
			series = append(series, s)
		}
	}
	return chart.Render(m.ctx, chart.Spec{W: m.w, H: chartH, XStep: step, XLabel: xlab, Highlight: hl, Series: series})
}

// strip is a precision's positions over bars [s, e), aligned under the
// chart's points after its label; "" when that precision has none.
func (m *Model) strip(label string, pos []int8, s, e int, lay chart.Layout, st styles) string {
	if pos == nil {
		return ""
	}
	row := []rune(strings.Repeat(" ", m.w))
	copy(row, []rune(label))
	styled := make([]lipgloss.Style, m.w)
	for k := 0; k < e-s; k++ {
		c := lay.Col(k)
		if c >= 0 && c < m.w {
			p := pos[s+k]
			row[c] = posRune(p)
			styled[c] = map[int8]lipgloss.Style{1: st.long, -1: st.short, 0: st.flat}[p]
		}
	}
	var b strings.Builder
	for c, r := range row {
		if c >= len(label) && row[c] != ' ' {
			b.WriteString(styled[c].Render(string(r)))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// flipMarks is the line under the strips marking the flips among bars
// [s, e): x, ^ for the one on show (memory: at each divergence's root,
// ~ on its later bars).
func (m *Model) flipMarks(s, e int, lay chart.Layout, st styles) string {
	mark := []rune(strings.Repeat(" ", m.w))
	copy(mark, []rune("flip"))
	if m.runs != nil {
		for _, b := range m.diff {
			if b >= s && b < e {
				if c := lay.Col(b - s); c >= 4 && c < m.w {
					mark[c] = '~'
				}
			}
		}
	}
	for k, b := range m.flips {
		if b >= s && b < e {
			if c := lay.Col(b - s); c >= 4 && c < m.w {
				mark[c] = 'x'
				if k == m.cur {
					mark[c] = '^'
				}
			}
		}
	}
	return st.mark.Render(strings.TrimRight(string(mark), " "))
}

func (m *Model) barTime(b int) int64 {
	if s := m.state.Study; s != nil && b < len(s.Dataset.Bars.Time) {
		ds := s.Dataset
		return ds.Bars.Time[b]
	}
	return 0
}

func legendKey(plain bool, marker rune, c lipgloss.TerminalColor) string {
	if plain {
		return string(marker)
	}
	return lipgloss.NewStyle().Foreground(c).Render("──")
}

// window returns [s, e) of up to npts bars around center, within [first, n).
func window(center, npts, first, n int) (int, int) {
	npts = max(2, min(npts, n-first))
	s := max(first, min(center-npts/2, n-npts))
	return s, min(n, s+npts)
}

// signalSeries are a strategy combo's chart lines: its signal's (fp64)
// lines and levels, close first when the signal is on the price's axis
// and does not hold it; Name is a sort key then the legend's name.
func (m *Model) signalSeries(st styles) []chart.Series {
	in := m.state.Inspect
	colors := []lipgloss.TerminalColor{st.h, st.h3, st.close}
	var out []chart.Series
	hasClose := false
	for _, l := range in.Signal {
		hasClose = hasClose || l.Name == "close"
	}
	if (in.SignalScale == "price" || in.SignalScale == "") && !hasClose && in.D64 != nil {
		out = append(out, chart.Series{Name: "0close", Values: in.D64.Close, Color: st.close, Marker: '.'})
	}
	k := 0
	for _, l := range in.Signal {
		s := chart.Series{Name: "1" + l.Name, Values: l.Values, Color: colors[k%len(colors)]}
		switch {
		case l.Level:
			s.Marker, s.Color = '=', st.close
		case l.Name == "close":
			s.Marker, s.Color = '.', st.close
		default:
			s.Marker = rune('1' + k%9)
			k++
		}
		out = append(out, s)
	}
	return out
}

// extent is the value range of close, h and h3 over [s, e) (a strategy
// combo: of its signal's lines).
func (m *Model) extent(d *engine.ComboDetail, s, e int) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	var sig []chart.Series
	if d.H == nil {
		sig = m.signalSeries(newStyles(m.ctx.Theme))
	}
	for i := s; i < e; i++ {
		vs := []float64{d.Close[i]}
		if d.H != nil {
			vs = append(vs, d.H[i], d.H3[i])
		} else if len(sig) > 0 {
			vs = vs[:0]
			for _, x := range sig {
				if i < len(x.Values) {
					vs = append(vs, x.Values[i])
				}
			}
		}
		for _, v := range vs {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	return lo, hi
}
