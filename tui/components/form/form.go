// Package form is the setup pane with the study's parameters: text fields
// for the ranges and numbers, choices for the rest (a backend that cannot
// run here is listed with its reason and cannot be chosen). It holds
// strings only; the root model builds and validates the engine.Study from
// them and hands the engine's errors back with SetErrors.
package form

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// Field keys, also the Values map's keys: the engine.Spec field names, so
// that an *engine.FieldError lands on its row.
const (
	HMA        = engine.FieldHMA
	HMA3       = engine.FieldHMA3
	Fee        = engine.FieldFee
	Mode       = engine.FieldMode
	Source     = engine.FieldSource
	Timeframe  = engine.FieldTimeframe
	Head       = engine.FieldHead
	Backend    = engine.FieldBackend
	Precision  = engine.FieldPrecision
	WMA        = engine.FieldWMA
	Borderline = engine.FieldBorderline
	// Data loading and annualisation.
	TZ          = engine.FieldTZ
	LEANAsset   = engine.FieldLEANAsset
	BarsPerYear = engine.FieldBarsPerYear
	// The window of bars, the objective and its constraints, robustness.
	From        = engine.FieldFrom
	To          = engine.FieldTo
	Objective   = engine.FieldObjective
	MinTrades   = engine.FieldMinTrades
	MaxDrawdown = engine.FieldMaxDrawdown
	Blocks      = engine.FieldBlocks
	WF          = engine.FieldWF
	// The datasets: one, or several (a suite).
	Data = engine.FieldData
	// The strategy family and, for cross, its restriction; a family's
	// parameters (other than hull's HMA and HMA3) are rows of ParamKey.
	Strategy      = engine.FieldStrategy
	FastBelowSlow = engine.FieldFastBelowSlow
)

// ParamKey is the key of the row of a family's parameter name ("length",
// "fast"): an *engine.FieldError of Field engine.FieldParams and Value
// "name=TEXT" belongs on it.
func ParamKey(name string) string { return engine.FieldParams + ":" + name }

// ParamName is the parameter a ParamKey names, ok false for another key.
func ParamName(key string) (string, bool) {
	return strings.CutPrefix(key, engine.FieldParams+":")
}

// Option is one choice of a choice field; Disabled (the reason) makes it
// unselectable.
type Option struct {
	Value, Label, Disabled string
}

type field struct {
	key, label string
	group      int
	free       bool             // a free-text field: every character types into it
	input      *textinput.Model // text field
	options    []Option         // choice field
	sel        int
}

func (f *field) value() string {
	if f.input != nil {
		return strings.TrimSpace(f.input.Value())
	}
	if f.sel < len(f.options) {
		return f.options[f.sel].Value
	}
	return ""
}

// Spec describes a field for New.
type Spec struct {
	Key, Label, Value string
	Options           []Option // nil for a text field
	// Free makes a text field take every character (a time zone name);
	// other text fields take those of numbers and ranges only, so that
	// letters stay global keys while typing in them.
	Free bool
	// Placeholder is what an empty text field shows (what empty means).
	Placeholder string
	// Limit bounds a text field's characters (0: 64).
	Limit int
	// Group: fields are laid out by group, in order, each group in its own
	// rows (filled column by column).
	Group int
}

// Model is the parameter form.
type Model struct {
	ctx     *common.Context
	fields  []*field
	focus   int
	errs    map[string]error
	general error
	info    []string
	notes   []string
	w, h    int
	focused bool
	r0      int // the first row shown when the rows do not all fit
}

var _ common.Component = (*Model)(nil)

// New builds the form from specs (values prefilled).
func New(ctx *common.Context, specs []Spec) *Model {
	m := &Model{ctx: ctx, errs: map[string]error{}}
	m.fields = newFields(specs)
	return m
}

// newFields builds the fields of specs.
func newFields(specs []Spec) []*field {
	var fields []*field
	for _, s := range specs {
		f := &field{key: s.Key, label: s.Label, free: s.Free, group: s.Group}
		if s.Options == nil {
			in := textinput.New()
			in.Prompt = ""
			in.Placeholder = s.Placeholder
			in.CharLimit = 64
			if s.Limit > 0 {
				in.CharLimit = s.Limit
			}
			in.SetValue(s.Value)
			in.Cursor.SetMode(cursor.CursorStatic)
			f.input = &in
		} else {
			f.options = s.Options
			for i, o := range s.Options {
				if o.Value == s.Value && o.Disabled == "" {
					f.sel = i
				}
			}
			if f.options[f.sel].Disabled != "" {
				f.sel = f.next(0, 1)
			}
		}
		fields = append(fields, f)
	}
	return fields
}

// Replace puts the rows of specs in place of the rows of keys (a family's
// parameters for another's): where the first of them was, else before the
// row of key before (at the end when the form has none). The focus stays
// on its row when that row stays, else it goes to the first new row; the
// errors shown are cleared (the next SetErrors gives the new rows' own).
func (m *Model) Replace(keys []string, before string, specs []Spec) {
	focusKey := m.fields[m.focus].key
	at := -1
	var kept []*field
	for _, f := range m.fields {
		if slices.Contains(keys, f.key) {
			if at < 0 {
				at = len(kept)
			}
			continue
		}
		kept = append(kept, f)
	}
	if at < 0 {
		at = len(kept)
		for i, f := range kept {
			if f.key == before {
				at = i
				break
			}
		}
	}
	nf := newFields(specs)
	m.fields = slices.Concat(kept[:at], nf, kept[at:])
	m.focus = min(at, len(m.fields)-1)
	for i, f := range m.fields {
		if f.key == focusKey {
			m.focus = i
		}
	}
	m.errs = map[string]error{}
	m.general = nil
	m.refocus()
}

// next returns the next enabled option from i in direction d (i itself when none).
func (f *field) next(i, d int) int {
	n := len(f.options)
	for k := 1; k <= n; k++ {
		j := ((i+d*k)%n + n) % n
		if f.options[j].Disabled == "" {
			return j
		}
	}
	return i
}

// SetValues puts values (by key) in the form's fields: a text field takes
// the text, a choice field the option of that value when it has one and
// it is enabled. Keys the form has no row for are ignored.
func (m *Model) SetValues(v map[string]string) {
	for _, f := range m.fields {
		val, ok := v[f.key]
		if !ok {
			continue
		}
		if f.input != nil {
			f.input.SetValue(val)
			f.input.CursorEnd() // what is typed next follows the value (it went where the cursor had been)
			continue
		}
		for i, o := range f.options {
			if o.Value == val && o.Disabled == "" {
				f.sel = i
			}
		}
	}
}

// Has reports whether the form has a row for field key.
func (m *Model) Has(key string) bool {
	for _, f := range m.fields {
		if f.key == key {
			return true
		}
	}
	return false
}

// Values returns every field's current value by key.
func (m *Model) Values() map[string]string {
	v := make(map[string]string, len(m.fields))
	for _, f := range m.fields {
		v[f.key] = f.value()
	}
	return v
}

// SetErrors shows the engine's errors: per field, and one for the whole
// study (e.g. the grid does not fit the bars); info lines describe the
// grid and the estimate, notes the backends that cannot run.
func (m *Model) SetErrors(perField map[string]error, general error, info, notes []string) {
	m.errs, m.general, m.info, m.notes = perField, general, info, notes
}

// Valid reports whether no error is shown.
func (m *Model) Valid() bool { return len(m.errs) == 0 && m.general == nil }

// Focused is the key of the focused field.
func (m *Model) Focused() string { return m.fields[m.focus].key }

// Typing reports whether the focused field is a text field.
func (m *Model) Typing() bool { return m.focused && m.fields[m.focus].input != nil }

// Takes reports whether the focused text field takes msg: every character
// (q, S, ?, j and k included: in a text field keys are text, and a letter
// in a numeric field is that field's error to show) and the editing keys;
// esc, tab, enter and the up and down arrows leave it.
func (m *Model) Takes(msg tea.KeyMsg) bool {
	if !m.Typing() {
		return false
	}
	if msg.Type != tea.KeyRunes {
		return msg.Type != tea.KeyEsc && msg.Type != tea.KeyTab && msg.Type != tea.KeyShiftTab &&
			msg.Type != tea.KeyCtrlC && msg.Type != tea.KeyEnter && msg.Type != tea.KeyUp && msg.Type != tea.KeyDown
	}
	return true
}

// Focus gives the form the keys.
func (m *Model) Focus(f bool) tea.Cmd {
	m.focused = f
	return m.refocus()
}

func (m *Model) refocus() tea.Cmd {
	var cmd tea.Cmd
	for i, f := range m.fields {
		if f.input == nil {
			continue
		}
		if m.focused && i == m.focus {
			cmd = f.input.Focus()
		} else {
			f.input.Blur()
		}
	}
	return cmd
}

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Update handles the keys of the focused form.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok || !m.focused {
		return nil
	}
	k := m.ctx.Keys
	f := m.fields[m.focus]
	changed := common.Send(common.FormChangedMsg{})
	// Arrow keys always move between fields; letters only on choice fields.
	switch {
	case km.Type == tea.KeyEnter:
		return common.Send(common.RunMsg{})
	case km.Type == tea.KeyUp || (f.input == nil && key.Matches(km, k.Up)):
		m.focus = (m.focus - 1 + len(m.fields)) % len(m.fields)
		return m.refocus()
	case km.Type == tea.KeyDown || (f.input == nil && key.Matches(km, k.Down)):
		m.focus = (m.focus + 1) % len(m.fields)
		return m.refocus()
	}
	if f.input == nil {
		switch {
		case key.Matches(km, k.Left):
			f.sel = f.next(f.sel, -1)
			return changed
		case key.Matches(km, k.Right), km.Type == tea.KeySpace:
			f.sel = f.next(f.sel, 1)
			return changed
		}
		return nil
	}
	before := f.input.Value()
	in, cmd := f.input.Update(msg)
	*f.input = in
	if in.Value() != before {
		return tea.Batch(cmd, changed)
	}
	return cmd
}

// layout places every field: its row and column (0 or 1). Groups take
// their own rows, in order; a group fills its first column, then its second.
func (m *Model) layout(cols int) (row, col []int, rows int) {
	row, col = make([]int, len(m.fields)), make([]int, len(m.fields))
	for i := 0; i < len(m.fields); {
		j := i
		for j < len(m.fields) && m.fields[j].group == m.fields[i].group {
			j++
		}
		n := (j - i + cols - 1) / cols
		for k := i; k < j; k++ {
			row[k], col[k] = rows+(k-i)%n, (k-i)/n
		}
		rows += n
		i = j
	}
	return row, col, rows
}

// View renders the pane body, exactly w x h. When the rows of fields and
// the lines under them do not fit, the rows scroll with the focused field
// and the run line says which fields are out of sight.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	cols := 1
	if m.w >= 64 {
		cols = 2
	}
	colW := m.w / cols
	labelW := 11
	for _, f := range m.fields {
		labelW = max(labelW, len(f.label))
	}
	row, col, rows := m.layout(cols)
	grid := make([][]string, rows)
	for r := range grid {
		grid[r] = make([]string, cols)
	}
	for i, f := range m.fields {
		focused := m.focused && i == m.focus
		mark := "  "
		if focused {
			mark = t.Cursor + " "
		}
		if m.errs[f.key] != nil {
			mark = mark[:len(mark)-1] + "!"
			if focused {
				mark = t.Cursor + "!"
			}
		}
		ls, vs := st.label, st.value
		if focused {
			ls, vs = st.labelFocus, st.valueFocus
		}
		label := ls.Render(fmt.Sprintf("%-*s", labelW, f.label))
		var val string
		vw := colW - labelW - 4
		if f.input != nil {
			f.input.Width = max(1, vw-1)
			val = f.input.View()
			if v := f.input.Value(); common.Clean(v) != v { // a value from outside (a flag) with a control character
				val = vs.Render(t.Truncate(common.Clean(v), vw))
			}
			if m.errs[f.key] != nil && !focused {
				val = st.err.Render(t.Truncate(common.Clean(f.input.Value()), vw))
			}
		} else {
			val = vs.Render(f.options[f.sel].Label)
			if focused {
				l, r := "‹ ", " ›"
				if t.Plain {
					l, r = "< ", " >"
				}
				val = l + val + r
			}
		}
		grid[row[i]][col[i]] = t.Fit(mark+label+" "+val, colW, 1)
	}
	// What goes under the fields: the engine's errors, the field's first,
	// or the grid, the estimate and the run line; then the notes.
	var tail []string
	var errs []string
	for _, f := range m.fields {
		if e := m.errs[f.key]; e != nil {
			errs = append(errs, m.Describe(e))
		}
	}
	if m.general != nil {
		errs = append(errs, m.Describe(m.general))
	}
	for _, e := range errs {
		for _, l := range t.Wrap(e, m.w) {
			tail = append(tail, st.err.Render(l))
		}
	}
	button := -1
	if len(errs) == 0 {
		for _, s := range m.info {
			tail = append(tail, st.info.Render(s))
		}
		button = len(tail)
		tail = append(tail, st.button.Render("enter runs the sweep"))
	}
	for _, s := range m.notes {
		tail = append(tail, st.note.Render(s))
	}
	// The rows shown: all, with a blank line under them when there is
	// room; else as many as fit, from m.r0, the focused one among them.
	room := m.h - len(tail)
	first, shown := 0, rows
	if rows > room {
		shown = max(room, 1)
		if fr := row[min(m.focus, len(row)-1)]; fr < m.r0 {
			m.r0 = fr
		} else if fr >= m.r0+shown {
			m.r0 = fr - shown + 1
		}
		m.r0 = max(0, min(m.r0, rows-shown))
		first = m.r0
		if button >= 0 {
			tail[button] += st.note.Render("  " + m.hidden(row, first, first+shown))
		}
	}
	var lines []string
	for _, r := range grid[first : first+shown] {
		lines = append(lines, strings.Join(r, ""))
	}
	if shown == rows && rows < room {
		lines = append(lines, "")
	}
	lines = append(lines, tail...)
	return t.Fit(strings.Join(lines, "\n"), m.w, m.h)
}

// hidden names the fields in the rows above first and from end on, in
// the order they show: "↑ HMA range, ...; ↓ blocks, ...".
func (m *Model) hidden(row []int, first, end int) string {
	var above, below []string
	for r := 0; r <= slices.Max(row); r++ {
		for i, f := range m.fields {
			switch {
			case row[i] != r:
			case r < first:
				above = append(above, f.label)
			case r >= end:
				below = append(below, f.label)
			}
		}
	}
	t := m.ctx.Theme
	var parts []string
	if len(above) > 0 {
		parts = append(parts, t.Up+" "+strings.Join(above, ", "))
	}
	if len(below) > 0 {
		parts = append(parts, t.Down+" "+strings.Join(below, ", "))
	}
	return strings.Join(parts, "; ")
}

// Describe words an error for the form: each study field the engine
// names (an *engine.FieldError) reads by its label ("HMA range
// \"20:200:0\": step 0 must be positive"); fields the form has no row
// for keep the engine's name. No error text is parsed.
func (m *Model) Describe(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, fe := range engine.FieldErrors(err) {
		label := fe.Field
		for _, f := range m.fields {
			if f.key == fe.Field {
				label = f.label
			}
		}
		text := label + ": " + fe.Err.Error()
		if fe.Value != "" {
			text = label + " " + fe.Shown() + ": " + fe.Err.Error()
		}
		msg = strings.Replace(msg, fe.Error(), text, 1)
	}
	return common.Clean(msg) // an error may quote a value or a file's text
}
