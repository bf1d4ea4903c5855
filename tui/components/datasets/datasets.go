// Package datasets is the setup pane that chooses the bars: the embedded
// datasets first, then a file picker limited to the formats the loaders
// read; once a dataset is loaded it shows its summary (bars, first and last
// time, gaps, price range, detected layout).
package datasets

import (
	"fmt"
	"os"
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
	w, h    int
	items   []item // embedded datasets, then "open a file"
	cursor  int
	picking bool
	picker  filepicker.Model
	loading string // the spec being loaded, "" when idle
	spin    spinner.Model
	err     error
	pickErr error // the file picker's last refusal, shown under it until the next key

	unsafeDir string   // the folder unsafe was read from
	unsafe    []string // its names with control characters (cleanNames)
}

// New lists the embedded datasets; selected is highlighted (the --data value).
func New(ctx *common.Context, selected string) *Model {
	m := &Model{ctx: ctx, spin: spinner.New(spinner.WithSpinner(spinner.Line))}
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
	p := filepicker.New()
	p.AllowedTypes = data.SupportedExtensions()
	p.ShowPermissions = false
	p.AutoHeight = false
	p.Cursor = ctx.Theme.Cursor
	if wd, err := os.Getwd(); err == nil {
		p.CurrentDirectory = wd
	}
	m.picker = p
	return m
}

// Picking reports whether the file picker has the keys.
func (m *Model) Picking() bool { return m.picking }

// PickerKeys are the file picker's keys for the status line (it takes
// every key but esc, which leaves it for the list).
func (m *Model) PickerKeys() []key.Binding {
	pk := m.picker.KeyMap
	return []key.Binding{
		key.NewBinding(key.WithKeys(pk.Open.Keys()...), key.WithHelp("enter", "open")),
		key.NewBinding(key.WithKeys("left", "h", "backspace"), key.WithHelp("←/h", "parent")),
		key.NewBinding(key.WithKeys(m.ctx.Keys.Back.Keys()...), key.WithHelp("esc", "back")),
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
		var cmd tea.Cmd
		m.picker, cmd = m.picker.Update(msg)
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
			m.picking = true
			return m.picker.Init()
		}
		return common.Send(common.LoadMsg{Spec: it.spec})
	}
	return nil
}

// View renders the pane body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
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
	case m.ctx.Dataset != nil:
		lines = append(lines, Summary(m.ctx, m.ctx.Dataset, m.w)...)
		if len(lines) > m.h { // short of room (80x24): the summary's last line before the blank line
			lines = slices.Delete(lines, blank, blank+1)
		}
		if rest := m.h - len(lines) - 2; rest >= 3 {
			lines = append(lines, "", st.label.Render("close, first to last bar"))
			lines = append(lines, m.sparkline(m.ctx.Dataset, min(rest, 10)))
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
		m.unsafeDir, m.unsafe = dir, nil
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if n := e.Name(); common.Clean(n) != n || strings.ContainsAny(n, "\n\t") {
				m.unsafe = append(m.unsafe, n)
			}
		}
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
