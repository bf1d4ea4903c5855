// Package datasets is the setup pane that chooses the bars: the embedded
// datasets first, then a file picker limited to the formats the loaders
// read; once a dataset is loaded it shows its summary (bars, first and last
// time, gaps, price range, detected layout).
package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/NimbleMarkets/ntcharts/sparkline"
	"github.com/charmbracelet/bubbles/filepicker"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/engine/data"
	"sweepbench/tui/common"
)

type item struct {
	spec, title, desc string
}

// Model is the dataset pane.
type Model struct {
	ctx     *common.Context
	state   *common.RunState // the run it shows
	w, h    int
	items   []item // embedded datasets, then "open a file"
	cursor  int
	picking bool
	picker  filepicker.Model
	loading string // the spec being loaded, "" when idle
	spin    spinner.Model
	err     error
	pickErr error // the file picker's last refusal, shown under it until the next key

	// bounded: the picker browses roots only (common.Context.DataRoots,
	// resolved); onRoots: it shows the list of them (several roots),
	// rootAt the one under the cursor.
	bounded bool
	roots   []string
	onRoots bool
	rootAt  int

	unsafeDir string   // the folder unsafe was read from
	unsafe    []string // its names with control characters (cleanNames)
	away      []string // where its links out of the data roots lead (cleanNames)
}

var _ common.Pane = (*Model)(nil)

// New lists the embedded datasets; selected is highlighted (the --data value).
func New(ctx *common.Context, state *common.RunState, selected string) *Model {
	m := &Model{ctx: ctx, state: state, spin: spinner.New(spinner.WithSpinner(spinner.Line))}
	for _, e := range data.Embedded() {
		m.items = append(m.items, item{spec: "embedded:" + e.Name, title: "embedded:" + e.Name,
			desc: fmt.Sprintf("%s (%s bars)", e.Description, common.Thousands(e.Bars))})
	}
	m.items = append(m.items, item{title: "Open a file" + ctx.Theme.Ellipsis,
		desc: strings.Join(data.SupportedExtensions(), " ") + " (layout detected from the content)"})
	for i, it := range m.items {
		if it.spec == selected {
			m.cursor = i
		}
	}
	m.bounded = ctx.DataAllowed != nil || len(ctx.DataRoots) > 0
	dir := ""
	if wd, err := os.Getwd(); err == nil && !m.bounded {
		dir = wd
	}
	if m.bounded {
		for _, r := range ctx.DataRoots {
			abs, err := filepath.Abs(r)
			if err == nil {
				abs, err = filepath.EvalSymlinks(abs)
			}
			if err == nil && !slices.Contains(m.roots, abs) {
				m.roots = append(m.roots, abs)
			}
		}
		switch len(m.roots) {
		case 0:
			m.items[len(m.items)-1].desc = noRoots
		case 1:
			dir = m.roots[0]
		default:
			m.onRoots = true
		}
	}
	m.picker = m.newPicker(dir)
	return m
}

// noRoots is why a server without data roots opens no file.
const noRoots = "not on this server: it reads only the embedded datasets"

// newPicker is a file picker listing dir, from its first entry.
func (m *Model) newPicker(dir string) filepicker.Model {
	p := filepicker.New()
	p.AllowedTypes = data.SupportedExtensions()
	p.ShowPermissions = false
	p.AutoHeight = false
	p.Cursor = m.ctx.Theme.Cursor
	p.CurrentDirectory = dir
	p.SetHeight(max(1, m.h-3))
	return p
}

// inside reports whether dir, links resolved, is a data root or in one
// (always, when the picker is not bounded).
func (m *Model) inside(dir string) bool {
	if !m.bounded {
		return true
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	for _, r := range m.roots {
		rel, err := filepath.Rel(r, real)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// Picking reports whether the file picker has the keys.
func (m *Model) Picking() bool { return m.picking }

// PickerDir is the folder the file picker lists, "" on the list of the
// data roots.
func (m *Model) PickerDir() string {
	if m.onRoots {
		return ""
	}
	return m.picker.CurrentDirectory
}

// PickerKeys are the file picker's keys for the status line (it takes
// every key but esc, which leaves it for the list).
func (m *Model) PickerKeys() []key.Binding {
	pk := m.picker.KeyMap
	back := key.NewBinding(key.WithKeys(m.ctx.Keys.Back.Keys()...), key.WithHelp("esc", "back"))
	if m.onRoots {
		return []key.Binding{key.NewBinding(key.WithKeys(pk.Open.Keys()...), key.WithHelp("enter", "open")), back}
	}
	return []key.Binding{
		key.NewBinding(key.WithKeys(pk.Open.Keys()...), key.WithHelp("enter", "open")),
		key.NewBinding(key.WithKeys("left", "h", "backspace"), key.WithHelp("←/h", "parent")),
		back,
	}
}

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.picker.SetHeight(max(1, h-3))
}

// Title names the pane.
func (m *Model) Title() string {
	if m.picking {
		return "Dataset: open a file"
	}
	return "Dataset"
}

// Loading shows that spec is being loaded.
func (m *Model) Loading(spec string) tea.Cmd {
	m.loading, m.err = spec, nil
	return m.spin.Tick
}

// Loaded ends the loading state; err is shown in the pane.
func (m *Model) Loaded(err error) { m.loading, m.err = "", err }

// Update handles keys (when focused) and the picker's and spinner's messages.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	k := m.ctx.Keys
	if _, ok := msg.(spinner.TickMsg); ok {
		if m.loading == "" {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	}
	if m.picking {
		if km, ok := msg.(tea.KeyMsg); ok && key.Matches(km, k.Back) {
			m.picking = false
			return nil
		}
		km, isKey := msg.(tea.KeyMsg)
		if m.onRoots {
			if isKey {
				return m.rootsKey(km)
			}
			return nil
		}
		if isKey && key.Matches(km, m.picker.KeyMap.Back) && !m.inside(filepath.Dir(m.picker.CurrentDirectory)) {
			// The top of a root: the list of the roots, or nowhere.
			m.onRoots = len(m.roots) > 1
			return nil
		}
		prev := m.picker
		var cmd tea.Cmd
		m.picker, cmd = m.picker.Update(msg)
		if dir := m.picker.CurrentDirectory; dir != prev.CurrentDirectory && !m.inside(dir) {
			// A link out of the roots: not followed, nothing outside read.
			m.pickErr = fmt.Errorf("%s: outside the data folders (%s)", filepath.Base(dir), strings.Join(m.roots, ", "))
			// The picker as it was, cursor and all, its read of dir
			// dropped. Its stack of cursors may be shared by its copies
			// (it is, in bubbles v1): the step down pushed onto it, a step
			// up on a copy takes that off again (whose read is dropped too).
			m.picker = prev
			up := prev
			up.Update(tea.KeyMsg{Type: tea.KeyLeft})
			return nil
		}
		if ok, path := m.picker.DidSelectFile(msg); ok {
			m.picking = false
			return common.Send(common.LoadMsg{Spec: path})
		}
		if ok, path := m.picker.DidSelectDisabledFile(msg); ok {
			err := fmt.Errorf("%s: not a supported file name: want %s", path, strings.Join(data.SupportedExtensions(), ", "))
			m.pickErr = err // shown whole under the picker; the status bar has room for its start only
			return tea.Batch(cmd, common.Send(common.ErrMsg{Err: err}))
		}
		if _, ok := msg.(tea.KeyMsg); ok {
			m.pickErr = nil // a key after it: the user has read it
		}
		return cmd
	}
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	switch {
	case key.Matches(km, k.Up):
		m.cursor = max(0, m.cursor-1)
	case key.Matches(km, k.Down):
		m.cursor = min(len(m.items)-1, m.cursor+1)
	case key.Matches(km, k.Select):
		it := m.items[m.cursor]
		if it.spec == "" {
			if m.bounded && len(m.roots) == 0 {
				m.err = errors.New("no file to open: this server reads only the embedded datasets")
				return nil
			}
			m.picking = true
			if m.onRoots {
				return nil
			}
			return m.picker.Init()
		}
		return common.Send(common.LoadMsg{Spec: it.spec})
	}
	return nil
}

// rootsKey handles a key on the list of the data roots: up and down
// move, enter (or →) opens the root under the cursor.
func (m *Model) rootsKey(km tea.KeyMsg) tea.Cmd {
	k := m.ctx.Keys
	switch {
	case key.Matches(km, k.Up):
		m.rootAt = max(0, m.rootAt-1)
	case key.Matches(km, k.Down):
		m.rootAt = min(len(m.roots)-1, m.rootAt+1)
	case key.Matches(km, m.picker.KeyMap.Open):
		m.onRoots = false
		m.picker = m.newPicker(m.roots[m.rootAt])
		return m.picker.Init()
	}
	return nil
}

// View renders the pane body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	if m.picking && m.onRoots {
		lines := []string{st.label.Render("data folders")}
		for i, r := range m.roots {
			mark := "  "
			name := st.item.Render(common.Clean(r))
			if i == m.rootAt {
				mark, name = t.Cursor+" ", st.itemSel.Render(common.Clean(r))
			}
			lines = append(lines, mark+name)
		}
		return t.Fit(strings.Join(lines, "\n"), m.w, m.h-1) + "\n" + t.Fit(st.label.Render("enter open, esc back"), m.w, 1)
	}
	if m.picking {
		m.picker.Styles = st.picker
		head := st.label.Render(common.Clean(m.picker.CurrentDirectory))
		foot := []string{st.label.Render("enter open, ← parent, esc back")}
		if m.pickErr != nil {
			foot = nil
			for _, l := range t.Wrap(common.Clean(m.pickErr.Error()), m.w) {
				foot = append(foot, st.err.Render(l))
			}
			foot = foot[:min(len(foot), max(m.h-3, 1))]
		}
		return t.Fit(head+"\n"+m.cleanNames(m.picker.View()), m.w, m.h-len(foot)) + "\n" + t.Fit(strings.Join(foot, "\n"), m.w, len(foot))
	}
	var lines []string
	for i, it := range m.items {
		mark := "  "
		title := st.item.Render(it.title)
		if i == m.cursor {
			mark = t.Cursor + " "
			title = st.itemSel.Render(it.title)
		}
		lines = append(lines, mark+title+"  "+st.desc.Render(it.desc))
	}
	blank := len(lines)
	lines = append(lines, "")
	switch {
	case m.loading != "":
		lines = append(lines, m.spin.View()+" loading "+common.Clean(m.loading)+t.Ellipsis)
	case m.err != nil:
		for _, l := range t.Wrap(common.Clean(m.err.Error()), m.w) {
			lines = append(lines, st.err.Render(l))
		}
	case m.state.Dataset != nil:
		lines = append(lines, Summary(m.ctx, m.state.Dataset, m.w)...)
		if len(lines) > m.h { // short of room (80x24): the summary's last line before the blank line
			lines = slices.Delete(lines, blank, blank+1)
		}
		if rest := m.h - len(lines) - 2; rest >= 3 {
			lines = append(lines, "", st.label.Render("close, first to last bar"))
			lines = append(lines, m.sparkline(m.state.Dataset, min(rest, 10)))
		}
	default:
		lines = append(lines, st.label.Render("enter loads the dataset under the cursor"))
	}
	return t.Fit(strings.Join(lines, "\n"), m.w, m.h)
}

// cleanNames escapes, in the picker's view, the names of the listed
// folder that hold control characters (the picker draws names as they
// are): each such name, and each line of a name with a newline, is
// replaced by its sanitised form. The names are read once per folder.
func (m *Model) cleanNames(view string) string {
	if dir := m.picker.CurrentDirectory; dir != m.unsafeDir {
		m.unsafeDir, m.unsafe, m.away = dir, nil, nil
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if n := e.Name(); common.Clean(n) != n || strings.ContainsAny(n, "\n\t") {
				m.unsafe = append(m.unsafe, n)
			}
			if e.Type()&os.ModeSymlink != 0 && m.bounded {
				// A link out of the roots: where it leads is not shown.
				if to, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name())); err == nil && !m.inside(to) {
					m.away = append(m.away, to)
				}
			}
		}
	}
	for _, to := range m.away {
		view = hideTarget(view, " → "+to)
	}
	for _, n := range m.unsafe {
		view = strings.ReplaceAll(view, n, data.Sanitize(n))
		for _, part := range strings.Split(strings.ReplaceAll(n, "\t", "    "), "\n") {
			if c := common.Clean(part); c != part {
				view = strings.ReplaceAll(view, part, c)
			}
		}
	}
	return view
}

// hideTarget replaces, in view, each arrow to a link's target that ends
// there (a line's end, a style's escape or a space follow: not a longer
// path that starts the same) by a note that it leads out of the roots.
func hideTarget(view, arrow string) string {
	var b strings.Builder
	for {
		i := strings.Index(view, arrow)
		if i < 0 {
			break
		}
		rest := view[i+len(arrow):]
		b.WriteString(view[:i])
		if rest == "" || strings.ContainsAny(rest[:1], "\n\x1b ") {
			b.WriteString(" → (outside the data folders)")
		} else {
			b.WriteString(arrow)
		}
		view = rest
	}
	return b.String() + view
}

// sparkline draws the closes, one sampled bar per column, raised so the
// lowest close still shows.
func (m *Model) sparkline(ds *data.Dataset, h int) string {
	t := m.ctx.Theme
	n := ds.Bars.Len()
	if n == 0 || m.w < 4 {
		return ""
	}
	step := (n + m.w - 1) / m.w
	var sample []float64
	lo, hi := ds.Bars.Close[0], ds.Bars.Close[0]
	for i := 0; i < n; i += step {
		c := ds.Bars.Close[i]
		sample = append(sample, c)
		lo, hi = min(lo, c), max(hi, c)
	}
	base := lo - (hi-lo)*0.05
	sp := sparkline.New(m.w, h, sparkline.WithStyle(newStyles(t).spark))
	for _, c := range sample {
		sp.Push(c - base)
	}
	sp.Draw()
	return t.Sanitize(sp.View())
}

// Summary describes a loaded dataset in three lines for a pane w cells wide;
// a long path is elided in the middle so the layout and hash still show.
func Summary(ctx *common.Context, ds *data.Dataset, w int) []string {
	t := ctx.Theme
	st := newStyles(t)
	in := ds.Info
	tf := data.FormatTimeframe(in.MedianSpacing)
	res := ""
	if in.Timeframe != "" {
		res = fmt.Sprintf(", resampled to %s from %s bars", in.Timeframe, common.Thousands(in.SourceBars))
	}
	sha := in.SHA256
	if len(sha) > 12 {
		sha = sha[:12]
	}
	gap := ""
	if in.Gaps > 0 {
		gap = ", largest " + in.LargestGap.String()
	}
	nan := ""
	if in.DroppedNaN > 0 {
		nan = fmt.Sprintf("%s%d rows without prices dropped", t.Sep, in.DroppedNaN)
	}
	meta := t.Sep + "layout " + in.Layout + t.Sep + "sha256 " + sha
	name := common.ShortPath(common.Clean(in.Name), max(w-lipgloss.Width(meta), 24))
	cal := ""
	switch in.Calendar {
	case data.CalendarSessions:
		cal = fmt.Sprintf(", session calendar (%s bars/year observed)", common.Thousands(int(in.ObservedBarsPerYear()+0.5)))
	case data.Calendar247:
		cal = ", 24/7"
	}
	readAs := ""
	if s := in.ReadAs(); s != "" {
		readAs = t.Sep + s
	}
	return []string{
		st.value.Render(name) + st.label.Render(meta),
		fmt.Sprintf("%s bars, %s .. %s UTC, %s bars%s%s", common.Thousands(in.Bars),
			in.First.Format("2006-01-02 15:04"), in.Last.Format("2006-01-02 15:04"), tf, res, cal),
		fmt.Sprintf("gaps %d%s%sprice %s .. %s%s%s", in.Gaps, gap, t.Sep, common.Price(in.MinPrice), common.Price(in.MaxPrice), nan, readAs),
	}
}
