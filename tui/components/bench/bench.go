// Package bench is the bench screen (issue 7): the method ladder of
// `sweepbench bench` (enginebench.RunLadder) on the current dataset and grid,
// live while it runs (which rung is running), then a horizontal bar chart
// of combos/s per rung on a log scale (the rungs span orders of
// magnitude) with a table beside it: combos/s, speedup over M0 and M3,
// and the trade-count parity verdict against M2. It only displays what
// the root model hands it.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"sweepbench/engine"
	enginebench "sweepbench/engine/bench"
	"sweepbench/tui/common"
)

type rung struct {
	id, method string
	prec       engine.Precision
	skip       string
	state      string    // pending, running, done
	start      time.Time // when it started running
}

// Model is the bench screen.
type Model struct {
	ctx        *common.Context
	spin       spinner.Model
	w, h       int
	plan       string // what the ladder runs on
	why        string // why it cannot run, when it cannot
	rungs      []rung
	res        []enginebench.RungResult
	partial    []enginebench.RungResult // the rows timed so far, while the ladder runs
	err        string
	cancelled  bool // the ladder was cancelled: its last row is the rung interrupted
	running    bool
	cancelling bool
	repeat     int
}

var _ common.Pane = (*Model)(nil)

// New returns the screen.
func New(ctx *common.Context) *Model {
	return &Model{ctx: ctx, spin: spinner.New(spinner.WithSpinner(spinner.Line))}
}

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// SetPlan shows what enter would run: the ladder's rungs on plan (the
// dataset and grid), or why it cannot run (why non-empty). Results of an
// earlier ladder stay until the next one starts.
func (m *Model) SetPlan(plan, why string, rungs []enginebench.Rung, repeat int) {
	if m.running {
		return
	}
	m.plan, m.why, m.repeat = common.Clean(plan), common.Clean(why), repeat
	if m.res == nil {
		m.setRungs(rungs)
	}
}

func (m *Model) setRungs(rungs []enginebench.Rung) {
	m.rungs = m.rungs[:0]
	for _, r := range rungs {
		m.rungs = append(m.rungs, rung{id: r.ID, method: r.Method, prec: r.Precision, skip: r.Skip, state: "pending"})
	}
}

// Start shows a ladder starting and starts the spinner.
func (m *Model) Start(plan string, rungs []enginebench.Rung, repeat int) tea.Cmd {
	m.plan, m.why, m.repeat = common.Clean(plan), "", repeat
	m.setRungs(rungs)
	m.res, m.partial, m.err, m.cancelled = nil, nil, "", false
	m.running, m.cancelling = true, false
	return m.spin.Tick
}

// Running reports whether a ladder is running.
func (m *Model) Running() bool { return m.running }

// SetCancelling shows that a cancel was asked for.
func (m *Model) SetCancelling() { m.cancelling = true }

// Progress marks rung id running or done (enginebench.BenchOptions.Progress).
func (m *Model) Progress(id, status string) {
	for i := range m.rungs {
		if m.rungs[i].id == id {
			if status == "running" && m.rungs[i].state != "running" {
				m.rungs[i].start = time.Now()
			}
			m.rungs[i].state = status
		}
	}
}

// Result shows a rung's row as soon as it is timed
// (enginebench.BenchOptions.OnResult): its bar and combos/s; the speedups and
// the parity verdict come with Done.
func (m *Model) Result(r enginebench.RungResult) {
	for i := range m.partial {
		if m.partial[i].ID == r.ID {
			m.partial[i] = r
			return
		}
	}
	m.partial = append(m.partial, r)
	m.Progress(r.ID, "done")
}

// Done shows the ladder's results; err says why it stopped early (a
// context.Canceled error: the user cancelled it, and the rung it
// interrupted shows as cancelled, not failed).
func (m *Model) Done(res []enginebench.RungResult, err error) {
	m.running, m.cancelling = false, false
	m.res, m.partial = res, nil
	m.err, m.cancelled = "", false
	switch {
	case errors.Is(err, context.Canceled):
		m.cancelled = true
	case err != nil:
		m.err = common.Clean(err.Error())
	}
}

// interrupted reports whether row i of rows is the rung a cancel stopped.
func (m *Model) interrupted(rows []enginebench.RungResult, i int) bool {
	return m.cancelled && i == len(rows)-1 && rows[i].Err != ""
}

// Results are the last ladder's rows.
func (m *Model) Results() []enginebench.RungResult { return m.res }

// Update advances the spinner.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if _, ok := msg.(spinner.TickMsg); ok && m.running {
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	}
	return nil
}

// Title names the pane.
func (m *Model) Title() string {
	switch {
	case m.running:
		return "Bench: running the method ladder"
	case m.res != nil:
		return "Bench: method ladder, combos/s"
	}
	return "Bench"
}

// Rate writes combos/s compactly: 2.50, 789, 45.6k, 1.23M.
func Rate(v float64) string {
	switch {
	case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 1e3:
		return fmt.Sprintf("%.0f", v)
	}
	for _, u := range []struct {
		d float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.d {
			x := v / u.d
			switch {
			case x >= 100:
				return fmt.Sprintf("%.0f%s", x, u.s)
			case x >= 10:
				return fmt.Sprintf("%.1f%s", x, u.s)
			}
			return fmt.Sprintf("%.2f%s", x, u.s)
		}
	}
	return fmt.Sprintf("%.0f", v)
}

// Ratio writes a speedup: 3.4x, 1234x, or "-" when there is none.
func Ratio(x float64) string {
	switch {
	case x <= 0 || math.IsNaN(x) || math.IsInf(x, 0):
		return "-"
	case x >= 1e4:
		return Rate(x) + "x"
	case x >= 100:
		return fmt.Sprintf("%.0fx", x)
	case x < 1:
		return strconv.FormatFloat(x, 'g', 2, 64) + "x"
	}
	return fmt.Sprintf("%.1fx", x)
}

// Verdict is rung i's parity column: pass or collapse against the
// reference (M2, or M3 when M2 did not run), ref for the reference itself,
// skip, error, or "-".
func Verdict(res []enginebench.RungResult, i int) string {
	r := &res[i]
	ref := "M3"
	for j := range res {
		if res[j].ID == "M2" && res[j].Skipped == "" && res[j].Err == "" {
			ref = "M2"
		}
	}
	switch {
	case r.Skipped != "":
		return "skip"
	case r.Err != "":
		return "error"
	case r.Parity != nil && r.Parity.Note == "":
		return string(r.Parity.Verdict)
	case r.Parity != nil:
		return "n/a"
	case r.ID == ref:
		return "ref"
	}
	return "-"
}

func decade(d int) string {
	if d < 0 {
		return fmt.Sprintf("1e%d", d)
	}
	units := []string{"1", "10", "100", "1k", "10k", "100k", "1M", "10M", "100M", "1G", "10G", "100G"}
	if d < len(units) {
		return units[d]
	}
	return fmt.Sprintf("1e%d", d)
}

// View renders the screen body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	var lines []string
	wrap := func(s string, style func(...string) string) {
		for _, l := range t.Wrap(s, m.w) {
			lines = append(lines, style(l))
		}
	}
	if m.plan != "" {
		wrap(m.plan, st.value.Render)
	}
	repeat := m.repeat
	if repeat <= 0 {
		repeat = 3
	}
	wrap(fmt.Sprintf("each rung: a warm-up, then the best of %d timed runs; parity: trade counts against M2", repeat), st.label.Render)
	lines = append(lines, "")
	var foot string
	switch {
	case m.cancelling:
		foot = st.warn.Render("cancelling" + t.Ellipsis + " the rung running stops at its next check")
	case m.running:
		foot = st.label.Render("esc cancels the ladder")
	case m.why != "":
		foot = st.warn.Render(m.why)
	default:
		foot = st.label.Render("enter runs the ladder on the grid of the Setup form; esc goes back")
	}
	switch {
	case m.res != nil && !m.running:
		lines = append(lines, m.chart(st, m.res, nil)...)
		switch {
		case m.err != "":
			wrap("stopped: "+m.err, st.warn.Render)
		case m.cancelled:
			done := 0
			for i := range m.res {
				if m.res[i].Skipped == "" && m.res[i].Err == "" {
					done++
				}
			}
			wrap(fmt.Sprintf("cancelled: showing the %d rung(s) that finished", done), st.label.Render)
		}
	case m.running:
		rows, state := m.liveRows()
		lines = append(lines, m.chart(st, rows, state)...)
	default:
		lines = append(lines, m.live(st)...)
	}
	body := strings.Join(lines, "\n")
	footLines := t.Wrap(foot, m.w)
	n := strings.Count(body, "\n") + 1
	if pad := m.h - n - len(footLines); pad > 0 {
		body += strings.Repeat("\n", pad)
	} else {
		body = strings.Join(strings.Split(body, "\n")[:max(m.h-len(footLines), 0)], "\n")
	}
	return t.Fit(body+"\n"+strings.Join(footLines, "\n"), m.w, m.h)
}

// liveRows are the rows of a ladder running: the rows timed so far, a
// placeholder for the others with what the bar cell says (pending,
// running and for how long, skipped).
func (m *Model) liveRows() ([]enginebench.RungResult, map[string]string) {
	t := m.ctx.Theme
	var rows []enginebench.RungResult
	state := map[string]string{}
	for _, r := range m.rungs {
		if i := slices.IndexFunc(m.partial, func(p enginebench.RungResult) bool { return p.ID == r.id }); i >= 0 {
			rows = append(rows, m.partial[i])
			continue
		}
		rows = append(rows, enginebench.RungResult{ID: r.id, Method: r.method, Precision: r.prec, Skipped: r.skip})
		switch {
		case r.skip != "":
		case r.state == "running" && m.cancelling:
			state[r.id] = "cancelling" + t.Ellipsis
		case r.state == "running":
			s := m.spin.View() + " running"
			if !m.ctx.Deterministic {
				s += " " + common.FormatDuration(time.Since(r.start))
			}
			state[r.id] = s
		default:
			state[r.id] = "pending"
		}
	}
	return rows, state
}

// live lists the rungs before a ladder runs.
func (m *Model) live(st styles) []string {
	t := m.ctx.Theme
	var out []string
	for _, r := range m.rungs {
		state := st.label.Render("pending  ")
		switch {
		case r.skip != "":
			state = st.label.Render("skipped  ")
		case r.state == "running" && m.running:
			state = st.title.Render(m.spin.View() + " running")
		case r.state == "running":
			state = st.warn.Render("stopped  ")
		case r.state == "done":
			state = st.good.Render("done     ")
		}
		line := fmt.Sprintf("%-7s %-4s %s  %s", r.id, r.prec, state, st.label.Render(r.method))
		if r.skip != "" {
			line = fmt.Sprintf("%-7s %-4s %s  %s", r.id, r.prec, state, st.label.Render(r.skip))
		}
		out = append(out, t.Truncate(line, m.w))
	}
	return out
}

// chart draws one bar per rung, log scale, with the table beside it, an
// axis of decades under the bars, then the notes.
//
// rows are the final results, or while the ladder runs the rows so far;
// state then gives the bar cell of the rungs not timed yet.
func (m *Model) chart(st styles, rows []enginebench.RungResult, state map[string]string) []string {
	t := m.ctx.Theme
	const labelW = 7
	const tableW = 1 + 8 + 1 + 6 + 1 + 6 + 1 + 8
	barW := max(m.w-labelW-1-tableW, 8)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if r.CombosPerS > 0 {
			lo = min(lo, math.Log10(r.CombosPerS))
			hi = max(hi, math.Log10(r.CombosPerS))
		}
	}
	dlo, dhi := 0, 1
	if !math.IsInf(lo, 1) {
		dlo, dhi = int(math.Floor(lo)), int(math.Ceil(hi))
		if dhi <= dlo {
			dhi = dlo + 1
		}
	}
	pos := func(v float64) int {
		return int(math.Round((math.Log10(v) - float64(dlo)) / float64(dhi-dlo) * float64(barW)))
	}
	cell := func(s string, w int, right bool) string {
		s = t.Truncate(s, w)
		if pad := w - ansi.StringWidth(s); pad > 0 {
			if right {
				return strings.Repeat(" ", pad) + s
			}
			return s + strings.Repeat(" ", pad)
		}
		return s
	}
	table := func(a, b, c, d string) string {
		return " " + cell(a, 8, true) + " " + cell(b, 6, true) + " " + cell(c, 6, true) + " " + cell(d, 8, false)
	}
	var out []string
	legend := "combos/s, log scale"
	if t.Plain {
		legend += " (# fp64, = fp32)"
	}
	out = append(out, st.label.Render(cell("rung", labelW, false)+" "+cell(legend, barW, false)+table("combos/s", "x M0", "x M3", "parity")))
	var notes []string
	for i := range rows {
		r := &rows[i]
		var bar string
		switch {
		case r.Skipped != "":
			bar = st.label.Render(cell("skipped", barW, false))
		case state[r.ID] != "":
			bar = st.label.Render(cell(state[r.ID], barW, false))
			if strings.Contains(state[r.ID], "running") {
				bar = st.title.Render(cell(state[r.ID], barW, false))
			}
		case m.interrupted(rows, i):
			bar = st.warn.Render(cell("cancelled", barW, false))
		case r.Err != "":
			bar = st.bad.Render(cell("error", barW, false))
			notes = append(notes, fmt.Sprintf("%s failed: %s", r.ID, common.Clean(r.Err)))
		case r.CombosPerS > 0:
			n := max(1, min(barW, pos(r.CombosPerS)))
			g, style := st.glyph64, st.bar64
			if r.Precision == engine.FP32 {
				g, style = st.glyph32, st.bar32
			}
			bar = style.Render(strings.Repeat(g, n)) + strings.Repeat(" ", barW-n)
		default:
			bar = cell("-", barW, false)
		}
		rate := Rate(r.CombosPerS)
		if r.Extrapolated {
			rate += "*"
			notes = append(notes, fmt.Sprintf("* %s timed on %d combos spread over the grid, extrapolated", r.ID, r.Combos))
		}
		v := Verdict(rows, i)
		switch {
		case m.interrupted(rows, i):
			v = "-"
		case state != nil && v != "skip":
			v = "" // the verdicts come with the final result
		}
		vs := cell(v, 8, false)
		switch v {
		case string(engine.VerdictPass):
			vs = st.good.Render(vs)
		case string(engine.VerdictCollapse), "error":
			vs = st.bad.Render(vs)
		}
		out = append(out, cell(r.ID, labelW, false)+" "+bar+" "+cell(rate, 8, true)+" "+
			cell(Ratio(r.SpeedupVsM0), 6, true)+" "+cell(Ratio(r.SpeedupVsM3), 6, true)+" "+vs)
	}
	// The axis: a tick at each decade, its label under it when it fits.
	axis := []byte(strings.Repeat("-", barW))
	labels := []byte(strings.Repeat(" ", barW+6))
	used := make([]bool, len(labels)+1)
	place := func(d int) {
		x := min(int(math.Round(float64(d-dlo)/float64(dhi-dlo)*float64(barW))), barW-1)
		axis[x] = '+'
		l := decade(d)
		at := x
		if d == dhi {
			at = max(x-len(l)+1, 0)
		}
		lo, hi := max(at-1, 0), min(at+len(l)+1, len(used)) // a space either side
		for i := lo; i < hi; i++ {
			if used[i] {
				return
			}
		}
		if at+len(l) <= len(labels) {
			copy(labels[at:], l)
			for i := at; i < at+len(l); i++ {
				used[i] = true
			}
		}
	}
	// The scale's ends first, so that the top decade is always named.
	place(dhi)
	for d := dlo; d < dhi; d++ {
		place(d)
	}
	pad := strings.Repeat(" ", labelW+1)
	if !math.IsInf(lo, 1) { // no scale before the first rate
		out = append(out, st.label.Render(pad+string(axis)), st.label.Render(t.Truncate(pad+strings.TrimRight(string(labels), " "), m.w)))
	}
	notes = append(notes, enginebench.SkipNotes(rows)...) // before the methods: a pane may cut the last lines
	for _, r := range rows {
		if r.Skipped == "" && r.Err == "" {
			notes = append(notes, fmt.Sprintf("%-7s %s", r.ID, r.Method))
		}
	}
	for _, n := range notes {
		out = append(out, st.label.Render(t.Truncate(n, m.w)))
	}
	return out
}
