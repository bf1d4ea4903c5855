// Package sessionlist is the sessions screen's list: every saved session
// of the sessions store, newest first, as `sweepbench sessions ls` lists
// them (id, when, dataset, grid, precision, status, best Sharpe), with the
// marks of the two runs to compare and the details of the session under
// the cursor. It only displays: the root model talks to the store.
package sessionlist

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/engine/text"
	"sweepbench/sessions"
	"sweepbench/tui/common"
	"sweepbench/tui/components/datatable"
)

// MaxMarks is how many runs can be marked: a compare takes two.
const MaxMarks = 2

// Model is the sessions list.
type Model struct {
	ctx     *common.Context
	tbl     *datatable.Model
	list    []sessions.Session
	marks   []sessions.RunRef // A then B
	path    string
	why     string // why there is no list
	busy    string // what is being done ("opening session 3...")
	refusal string // why the last action was refused, until the next key
	confirm int64  // the session a delete waits to be confirmed for
	w, h    int
	dsW     int // the dataset column's width
}

var _ common.Pane = (*Model)(nil)

// New returns an empty list.
func New(ctx *common.Context) *Model {
	m := &Model{ctx: ctx, tbl: datatable.New(ctx, nil, 2)}
	m.tbl.Focus(true)
	return m
}

// SetList replaces the sessions (err: why they could not be read), keeping
// the cursor on the same session and dropping the marks of sessions gone.
func (m *Model) SetList(list []sessions.Session, path string, err error) {
	cur := m.Current()
	m.list, m.path, m.why = list, path, ""
	if err != nil {
		m.list, m.why = nil, common.Clean(err.Error())
	}
	keep := m.marks[:0]
	for _, r := range m.marks {
		if m.find(r.ID) >= 0 {
			keep = append(keep, r)
		}
	}
	m.marks = keep
	m.tbl.SetRowFunc(len(m.list), m.row, nil)
	m.layout()
	if cur != nil {
		if i := m.find(cur.ID); i >= 0 {
			m.tbl.SetCursor(i)
		}
	}
}

// SetUnavailable says why there is no store to list.
func (m *Model) SetUnavailable(why string) {
	m.list, m.marks, m.why = nil, nil, common.Clean(why)
	m.tbl.SetRowFunc(0, m.row, nil)
}

// SetRefusal shows why the last action was refused (a compare of runs on
// different data, a third mark), whole, above the details; nil clears it.
func (m *Model) SetRefusal(err error) {
	m.refusal = ""
	if err != nil {
		m.refusal = common.Clean(err.Error())
	}
}

// SetBusy shows what is being done ("" when nothing).
func (m *Model) SetBusy(s string) { m.busy = s }

// Busy is what is being done, or "".
func (m *Model) Busy() string { return m.busy }

func (m *Model) find(id int64) int {
	for i := range m.list {
		if m.list[i].ID == id {
			return i
		}
	}
	return -1
}

// Len is the number of sessions listed.
func (m *Model) Len() int { return len(m.list) }

// Current is the session under the cursor, or nil.
func (m *Model) Current() *sessions.Session {
	if c := m.tbl.Cursor(); c >= 0 && c < len(m.list) {
		return &m.list[c]
	}
	return nil
}

// Select moves the cursor to session id.
func (m *Model) Select(id int64) {
	if i := m.find(id); i >= 0 {
		m.tbl.SetCursor(i)
	}
}

// Marks are the marked runs, A (the reference) first.
func (m *Model) Marks() []sessions.RunRef { return append([]sessions.RunRef(nil), m.marks...) }

// ClearMarks unmarks every run.
func (m *Model) ClearMarks() { m.marks = nil }

// ToggleMark marks the run under the cursor, or steps its mark: a session
// with an fp64 and an fp32 run goes unmarked -> fp64 -> fp32 -> both (its
// own parity, when there is room) -> unmarked. At most MaxMarks runs are
// marked; one more is refused with an error that says what to do.
func (m *Model) ToggleMark() error {
	ss := m.Current()
	if ss == nil {
		return nil
	}
	var precs []engine.Precision
	for _, r := range ss.Runs {
		precs = append(precs, r.Precision)
	}
	if len(precs) == 0 {
		return fmt.Errorf("session %d has no run to compare yet", ss.ID)
	}
	var mine []int
	for i, r := range m.marks {
		if r.ID == ss.ID {
			mine = append(mine, i)
		}
	}
	ref := func(p engine.Precision) sessions.RunRef {
		return sessions.RunRef{ID: ss.ID, Precision: p, Explicit: true}
	}
	switch {
	case len(mine) == 0:
		if len(m.marks) >= MaxMarks {
			return errors.New("two runs are already marked: unmark one with space")
		}
		m.marks = append(m.marks, ref(precs[0]))
	case len(mine) == 1 && len(precs) > 1 && m.marks[mine[0]].Precision == precs[0]:
		m.marks[mine[0]] = ref(precs[1])
	case len(mine) == 1 && len(precs) > 1 && len(m.marks) < MaxMarks:
		m.marks[mine[0]] = ref(precs[0])
		m.marks = append(m.marks, ref(precs[1]))
	default:
		keep := m.marks[:0]
		for _, r := range m.marks {
			if r.ID != ss.ID {
				keep = append(keep, r)
			}
		}
		m.marks = keep
	}
	return nil
}

// Confirm asks for the removal of session id to be confirmed (0 cancels).
func (m *Model) Confirm(id int64) { m.confirm = id }

// Confirming is the session a removal waits to be confirmed for, or 0.
func (m *Model) Confirming() int64 { return m.confirm }

// SetSize sets the inner size (see layout).
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.layout()
}

// layout sizes the columns to their content, never cutting a number or a
// grid: the id and marks, then when, which dataset (its file name whole:
// ShortPath elides the directories in the middle, at most 32 cells), the
// grid, the parity verdict, the best Sharpe, the status, the precisions
// and the settings (as sessions ls has them). The dataset narrows (to 12
// cells) so that the first seven fit the width; what does not fit scrolls
// sideways with left and right (the header's « and » say that columns are
// out of view); the settings, last, are cut to the room there is.
func (m *Model) layout() {
	cols := []datatable.Column{{Title: "ab", Width: 3}, {Title: "id", Width: 2, Right: true},
		{Title: "when", Width: 11}, {Title: "dataset", Width: 7}, {Title: "grid", Width: 4},
		{Title: "parity", Width: 6}, {Title: "sharpe", Width: 6, Right: true}, {Title: "status", Width: 6},
		{Title: "prec", Width: 4}, {Title: "settings", Width: 8}}
	if m.suites() {
		// The datasets of a suite, told apart and seen together.
		cols = slices.Insert(cols, suiteCol, datatable.Column{Title: "suite", Width: 5})
	}
	m.dsW = 32
	for i := range m.list {
		for c, cell := range m.row(i) {
			cols[c].Width = max(cols[c].Width, ansi.StringWidth(cell))
		}
	}
	// The dataset gives way (its middle elided) so that the grid, the
	// parity verdict and the Sharpe show at 80 columns.
	used := 3 // the marker column and its padding
	for c, col := range cols[:7] {
		if c != 3 {
			used += col.Width + 1
		}
	}
	m.dsW = min(cols[3].Width, max(m.w-used-3, 12))
	cols[3].Width = m.dsW
	// The settings (last, the longest) take the room left beside the
	// others when there is some, cut at its end (the details line under
	// the list has them whole), rather than hiding off screen for want of
	// their full width; else what a scroll to them shows beside the
	// fixed columns.
	rest := m.w - 3 - 1 // the marker column, the paddings
	for _, col := range cols[:len(cols)-1] {
		rest -= col.Width + 1
	}
	last := &cols[len(cols)-1]
	if rest < 16 {
		rest = m.w - 3 - (cols[0].Width + 1) - (cols[1].Width + 1) - 1
	}
	last.Max = rest
	m.tbl.SetColumns(cols, 2)
}

func (m *Model) row(i int) []string {
	ss := &m.list[i]
	var precs []string
	for _, p := range ss.Precisions {
		precs = append(precs, p.String())
	}
	status := string(ss.Status)
	if done, total := ss.Done(); done < total {
		status += fmt.Sprintf(" %d%%", 100*done/max(total, 1))
	}
	best := "-"
	if sh, _, _, ok := ss.Best(); ok {
		best = sharpe(sh)
	}
	parity := ss.Parity
	if parity == "" {
		parity = "-"
	}
	ds := strings.TrimPrefix(ss.Dataset.Name, "embedded:")
	if tf := ss.Spec.Timeframe; tf != "" {
		ds += " " + tf
	}
	row := []string{m.markOf(ss.ID), strconv.FormatInt(ss.ID, 10), m.when(ss),
		common.ShortPath(common.Clean(ds), m.dsW), gridCell(ss.Grid),
		parity, best, status, strings.Join(precs, "+"), settings(ss)}
	if m.suites() {
		row = slices.Insert(row, suiteCol, suiteCell(ss))
	}
	return row
}

// suiteCol is the place of the suite column, after the Sharpe: the
// columns before it keep their room at 80 columns.
const suiteCol = 7

// suites reports whether a session listed is one dataset of a suite:
// then the list has a suite column.
func (m *Model) suites() bool {
	for i := range m.list {
		if m.list[i].Spec.Suite != "" {
			return true
		}
	}
	return false
}

// suiteCell is a session's place in its suite, "2/5 3fa2c9e1b0d4" (the
// dataset, then the suite's id), "-" for a study of one dataset.
func suiteCell(ss *sessions.Session) string {
	ref, ok, err := suite.ParseSuiteRef(ss.Spec.Suite)
	switch {
	case err != nil:
		return common.Clean(ss.Spec.Suite)
	case !ok:
		return "-"
	}
	return fmt.Sprintf("%d/%d %s", ref.D, ref.N, ref.ID)
}

// settings are what sessions ls lists of a run's settings: fee, mode,
// source, timeframe and head when set, backend, and the fp32 WMA
// formulation when it is not the default.
func settings(ss *sessions.Session) string {
	fee := text.FormatFloat(100*ss.Params.Fee) + "%"
	parts := []string{"fee " + fee, ss.Params.Mode.String(), ss.Params.Source.String()}
	if ss.Spec.Timeframe != "" {
		parts = append(parts, "timeframe "+ss.Spec.Timeframe)
	}
	if ss.Spec.Head > 0 {
		parts = append(parts, fmt.Sprintf("head %d", ss.Spec.Head))
	}
	parts = append(parts, ss.Backend)
	if ss.WMA != engine.Direct && slices.Contains(ss.Precisions, engine.FP32) {
		parts = append(parts, "wma "+ss.WMA.String())
	}
	return strings.Join(parts, ", ") + sessions.ListSettings(ss)
}

// markOf is the mark column of session id: the letter and the lane
// marked ("A64", "B32"), or "AB" when both its lanes are marked.
func (m *Model) markOf(id int64) string {
	s, lane := "", ""
	for i, r := range m.marks {
		if r.ID == id {
			s += string(rune('A' + i))
			lane = strings.TrimPrefix(r.Precision.String(), "fp")
		}
	}
	if len(s) == 1 {
		s += lane
	}
	return s
}

func (m *Model) when(ss *sessions.Session) string {
	if m.ctx.Deterministic {
		return "-"
	}
	return ss.Created.Local().Format("01-02 15:04")
}

func sharpe(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return text.FormatFloat(v)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// Title names the pane.
func (m *Model) Title() string {
	path := m.path
	if m.ctx.Deterministic && path != "" {
		path = "(db)"
	}
	switch {
	case m.why != "":
		return "Sessions"
	case path == "":
		return fmt.Sprintf("Sessions: %d", len(m.list))
	}
	return fmt.Sprintf("Sessions: %d in %s", len(m.list), path)
}

// Update moves the cursor.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyMsg); ok && !m.tbl.HandleNav(km) {
		m.tbl.HandleScroll(km)
	}
	return nil
}

// details are the lines under the list: the marks (or the question of a
// removal, or what is being done), then the session under the cursor.
func (m *Model) details() []string {
	t := m.ctx.Theme
	st := newStyles(t)
	var out []string
	if m.refusal != "" {
		out = append(out, st.bad.Render(m.refusal))
	}
	switch {
	case m.confirm != 0:
		out = append(out, st.bad.Render(fmt.Sprintf("remove session %d and all its results? y removes it, esc keeps it", m.confirm)))
	case m.busy != "":
		out = append(out, st.warn.Render(m.busy))
	case len(m.marks) == 0:
		out = append(out, st.label.Render("space marks a run to compare (two at most); enter opens; R resumes"))
	default:
		var ms []string
		for i, r := range m.marks {
			ms = append(ms, fmt.Sprintf("%c = %d:%s", 'A'+i, r.ID, r.Precision))
		}
		s := "marked " + strings.Join(ms, ", ")
		if len(m.marks) == MaxMarks {
			s += "; c compares B against A"
		} else {
			s += "; mark one more to compare"
		}
		out = append(out, st.mark.Render(s))
	}
	ss := m.Current()
	if ss == nil {
		return out
	}
	done, total := ss.Done()
	head := fmt.Sprintf("session %d %s, %s of %s", ss.ID, ss.Status, common.Thousands(done), common.Plural(total, "combo"))
	if !m.ctx.Deterministic {
		head += ", started " + ss.Created.Local().Format("2006-01-02 15:04:05")
	}
	out = append(out, st.value.Render(head))
	data := fmt.Sprintf("data %s, %s bars", common.Clean(ss.Dataset.Name), common.Thousands(ss.Dataset.Bars))
	if o := ss.Spec; o.Data != "" && !strings.HasSuffix(o.Data, ss.Dataset.Name) {
		data += " (" + common.Clean(o.Data) + ")"
	}
	if ss.Spec.Timeframe != "" {
		data += ", timeframe " + ss.Spec.Timeframe
	}
	out = append(out, data)
	set := fmt.Sprintf("fee %s%%, %s, %s, %s", text.FormatFloat(100*ss.Params.Fee), ss.Params.Mode, ss.Params.Source, ss.Backend)
	if ss.WMA != engine.Direct {
		set += ", wma " + ss.WMA.String()
	}
	if sh, c, p, ok := ss.Best(); ok && ss.Grid.Strategy != nil {
		// A strategy combo is its index: named by the grid's parameters.
		if _, label, _, named := ss.BestLabel(); named {
			set += fmt.Sprintf("; best sharpe %s at %s (%s)", sharpe(sh), common.Clean(label), p)
		} else {
			set += fmt.Sprintf("; best sharpe %s (%s)", sharpe(sh), p)
		}
	} else if ok {
		set += fmt.Sprintf("; best sharpe %s at hma %d x hma3 %d (%s)", sharpe(sh), c.HMA, c.HMA3, p)
	}
	out = append(out, set)
	if ref, ok, _ := suite.ParseSuiteRef(ss.Spec.Suite); ok {
		out = append(out, st.label.Render(fmt.Sprintf("dataset %d of %d of suite %s (enter opens it; [ and ] in the results step through the suite, a shows all its datasets)",
			ref.D, ref.N, ref.ID)))
	}
	if ss.Error != "" && ss.Status != engine.StatusComplete {
		if e := common.Clean(common.ErrText(ss.Error)); e == common.CancelledByUser {
			out = append(out, st.label.Render(e+": R resumes it"))
		} else {
			out = append(out, st.warn.Render(e))
		}
	}
	return out
}

// View renders the pane body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	if m.why != "" {
		lines := t.Wrap(m.why, m.w)
		if m.busy != "" {
			lines = append(lines, st.warn.Render(m.busy))
		}
		return t.Fit(st.warn.Render(strings.Join(lines, "\n")), m.w, m.h)
	}
	if len(m.list) == 0 {
		msg := "no sessions yet: every run of the workbench (and of sweepbench run) is saved here"
		lines := t.Wrap(msg, m.w)
		if m.busy != "" {
			lines = append(lines, st.warn.Render(m.busy))
		}
		return t.Fit(st.label.Render(strings.Join(lines, "\n")), m.w, m.h)
	}
	var det []string
	for _, l := range m.details() {
		det = append(det, t.Wrap(l, m.w)...)
	}
	// Keep at least a header and three rows of the table.
	if keep := m.h - 5; len(det) > keep {
		det = det[:max(keep, 0)]
	}
	th := m.h - len(det) - 1
	m.tbl.SetSize(m.w, th)
	rule := "─"
	if t.Plain {
		rule = "-"
	}
	sep := st.label.Render(strings.Repeat(rule, max(m.w, 0)))
	return t.Fit(m.tbl.View()+"\n"+sep+"\n"+strings.Join(det, "\n"), m.w, m.h)
}

// gridCell is the grid column's cell: hull's "20:200:20x30:240:30", or a
// family's name and ranges ("zscore length 10:60:5 x entry ...").
func gridCell(g engine.Grid) string {
	if g.Strategy != nil {
		return g.Family() + " " + g.Text()
	}
	return fmt.Sprintf("%sx%s", g.HMA, g.HMA3)
}
