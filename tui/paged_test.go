package tui

import (
	"context"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/sessions"
	"sweepbench/tui/common"
)

// pagedAbove sets common.PagedAbove to n for the test: grids above n
// combos are shown paged.
func pagedAbove(t *testing.T, n int) {
	t.Helper()
	old := common.PagedAbove
	common.PagedAbove = n
	t.Cleanup(func() { common.PagedAbove = old })
}

// pagedFlags is a study of 16 x 16 = 256 combos on the first 3,000 bars.
func pagedFlags(hma, hma3 string) Flags {
	f := smallFlags()
	f.Head = 3000
	f.HMA, f.HMA3 = hma, hma3
	return f
}

// listed is the combos the metrics table lists, in order.
func listed(d *driver) []int {
	var out []int
	mt := d.m.results.Metrics()
	for k := 0; mt.Row(k) >= 0; k++ {
		out = append(out, mt.Row(k))
	}
	return out
}

// sameValues fails unless every combo of idx has the same value of every
// metric in both precisions in the paged and the full results.
func sameValues(t *testing.T, what string, paged, full *common.Results, idx []int) {
	t.Helper()
	for _, i := range idx {
		for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
			for _, name := range engine.MetricNames {
				a, okA := paged.Value(i, name, p)
				b, okB := full.Value(i, name, p)
				if okA != okB || (a != b && !(math.IsNaN(a) && math.IsNaN(b))) {
					t.Fatalf("%s: combo %d %s %s: paged %v (%v), full %v (%v)", what, i, p, name, a, okA, b, okB)
				}
			}
		}
	}
}

// TestPagedMatchesFull: a study above the paged threshold (a small one
// for the test) runs keeping no result in memory, is shown from its
// summaries and read a page at a time from its saved session, and shows
// what the full report shows of the same study, opened from the sessions
// browser with every result: the top lists (a summary's, and a sort the
// summary does not keep, read from the store), the filter, the heatmap,
// the selected combo's values.
func TestPagedMatchesFull(t *testing.T) {
	pagedAbove(t, 100)
	// Pages of 60 rows: a page read holds a quarter of the grid, so the
	// lists after it must read what they show.
	oldRows := common.PageRows
	common.PageRows = 60
	t.Cleanup(func() { common.PageRows = oldRows })
	st := tempStore(t)
	cfg := storeConfig(pagedFlags("10:40:2", "12:42:2"), st)
	p := newStoreDriver(t, cfg, 160, 50)
	p.key("enter")
	pr := p.m.state.Results
	if p.m.screen != common.ResultsScreen || pr == nil || p.m.status.Saved != "session 1" {
		t.Fatalf("screen %d, saved %q, err %q", p.m.screen, p.m.status.Saved, p.m.status.LastErr)
	}
	if !pr.Paged() || !pr.R64.Kept || pr.R64.Summary == nil || pr.Pager(engine.FP64) == nil || pr.Pager(engine.FP32) == nil {
		t.Fatalf("paged %v, kept %v, pagers %v %v (%s)", pr.Paged(), pr.R64.Kept, pr.Pager(engine.FP64), pr.Pager(engine.FP32), pr.PagerWhy)
	}
	if n := len(pr.R64.Results); n != engine.DefaultKeep {
		t.Fatalf("the live fp64 run holds %d results, want its best %d", n, engine.DefaultKeep)
	}
	if pr.Report.Parity == nil || pr.Report.Parity.Combos != nil {
		t.Fatal("paged results should hold the parity counts without rows per combo")
	}

	// The same session with every result, from the browser.
	pagedAbove(t, 1<<30)
	f := newStoreDriver(t, storeConfig(pagedFlags("10:40:2", "12:42:2"), st), 160, 50)
	f.global("S")
	f.key("enter")
	fr := f.m.state.Results
	if f.m.screen != common.ResultsScreen || fr == nil || fr.Paged() || fr.Grid.Len() != 256 {
		t.Fatalf("the full session is not shown: screen %d, err %q", f.m.screen, f.m.status.LastErr)
	}
	if pr.Report.Parity.Verdict != fr.Report.Parity.Verdict || pr.Report.Parity.FlipCount != fr.Report.Parity.FlipCount {
		t.Fatalf("parity: paged %s %d flips, full %s %d", pr.Report.Parity.Verdict, pr.Report.Parity.FlipCount,
			fr.Report.Parity.Verdict, fr.Report.Parity.FlipCount)
	}

	both := func(keys ...string) {
		p.key(keys...)
		f.key(keys...)
	}
	check := func(t *testing.T, what string, n int) {
		t.Helper()
		a, b := listed(p), listed(f)
		if len(a) < min(n, len(b)) || len(a) == 0 {
			t.Fatalf("%s: the paged table lists %d combos, the full one %d", what, len(a), len(b))
		}
		k := min(n, len(a), len(b))
		if !slices.Equal(a[:k], b[:k]) {
			t.Fatalf("%s: paged rows %v\nfull rows %v", what, a[:k], b[:k])
		}
		sameValues(t, what, pr, fr, a[:k])
	}

	t.Run("top lists", func(t *testing.T) {
		both("s") // sharpe fp64, best first: the summary's top list
		if !strings.Contains(p.m.results.Metrics().Title(), "summary") {
			t.Fatalf("the paged title does not say the list is the summary's: %q", p.m.results.Metrics().Title())
		}
		check(t, "sharpe best first", engine.DefaultKeep)
		both("s") // worst first: not in the summary, read from the store
		if !strings.Contains(p.m.results.Metrics().Title(), "saved run") {
			t.Fatalf("the paged title does not say the list was read: %q", p.m.results.Metrics().Title())
		}
		check(t, "sharpe worst first", common.PageRows)
		for range 3 {
			// The next metrics, best first: their summaries' top lists,
			// the fp32 side read for them.
			both("m", "s")
			check(t, p.m.state.Metric+" best first", engine.DefaultKeep)
		}
		both("p", "s") // fp32 best first: the fp32 summary's list, the fp64 side read
		check(t, p.m.state.Metric+" fp32 best first", engine.DefaultKeep)
		both("p", "M", "M", "M")
		if p.m.state.Metric != "sharpe" || p.m.state.Prec != engine.FP64 {
			t.Fatalf("metric %s %s", p.m.state.Metric, p.m.state.Prec)
		}
	})
	t.Run("filter", func(t *testing.T) {
		both("s") // sharpe fp64 best first
		both("/", "total_trades>=60 hma<=14", "enter")
		check(t, "filter, sorted", common.PageRows)
		both("s", "s") // worst first, then grid order, the filter on
		if n := len(listed(f)); n == 0 || n > common.PageRows {
			t.Fatalf("the filter should keep some combos, at most a page: %d", n)
		}
		check(t, "filter, grid order", 256)
		// Every combo the filter keeps is listed, and only those.
		for _, i := range listed(p) {
			c := pr.Combo(i, engine.FP64)
			if c == nil || c.TotalTrades < 60 || c.HMA > 14 {
				t.Fatalf("combo %d listed by the filter: %+v", i, c)
			}
		}
		both("/")
		p.send(tea.KeyMsg{Type: tea.KeyCtrlU})
		f.send(tea.KeyMsg{Type: tea.KeyCtrlU})
		both("enter")
	})
	t.Run("heatmap", func(t *testing.T) {
		// 16 x 16 combos: the summary holds every combo's value, and the
		// window read greys what the full view greys. The same combo
		// selected in both (each starts on its parity pane's first).
		sel := common.SelectMsg{Index: pr.Best(engine.FP64)}
		p.send(sel)
		f.send(sel)
		hv := func(d *driver) string { return d.m.results.Heatmap().View() }
		if a, b := hv(p), hv(f); a != b {
			t.Fatalf("paged heatmap:\n%s\nfull heatmap:\n%s", a, b)
		}
		both("z")
		if a, b := hv(p), hv(f); a != b {
			t.Fatalf("paged overview:\n%s\nfull overview:\n%s", a, b)
		}
		both("z")
	})
	t.Run("detail", func(t *testing.T) {
		// A combo the results do not hold: read for the selection.
		g := pr.Grid
		var idx int
		idx = -1
		for i := range g.Len() {
			if !pr.Held(i, engine.FP64) && !pr.Held(i, engine.FP32) {
				idx = i
				break
			}
		}
		if idx < 0 {
			t.Fatal("every combo is held: nothing to read for a selection")
		}
		sel := common.SelectMsg{Index: idx}
		p.send(sel)
		f.send(sel)
		if !pr.Held(idx, engine.FP64) || !pr.Held(idx, engine.FP32) {
			t.Fatalf("combo %d was not read for the selection", idx)
		}
		sameValues(t, "selected", pr, fr, []int{idx})
		p.settle()
		f.settle()
		if ins := p.m.state.Inspect; ins == nil || ins.Index != idx || ins.D64 == nil || ins.D32 == nil || ins.Missing != nil {
			t.Fatalf("the combo's detail: %+v", ins)
		}
		line := func(d *driver) string { return strings.SplitN(d.m.results.Heatmap().View(), "\n", 2)[0] }
		if a, b := line(p), line(f); a != b {
			t.Fatalf("the heatmap's selected combo: paged %q, full %q", a, b)
		}
	})
	t.Run("parity pane", func(t *testing.T) {
		v := p.m.results.Parity().View()
		if !strings.Contains(strings.Join(strings.Fields(v), " "), "no row per combo") {
			t.Fatalf("the parity pane does not say it has no rows per combo:\n%s", v)
		}
		if w := p.m.results.Parity().Worst(); len(pr.Report.Parity.Flips) > 0 && w != pr.Report.Parity.Flips[0].Index {
			t.Fatalf("the parity pane's first row is combo %d, the worst flip's %d", w, pr.Report.Parity.Flips[0].Index)
		}
	})
}

// TestPagedBlocks: a grid wider than a heatmap's cap of cells (300 HMA
// lengths: blocks of 2 rows) shows the summary's blocks in the overview,
// the cursor's block's max, mean and min as the full report's combos give
// them, and the legend says the block shape; a browser-opened session
// reads the same; without saving, the table says paging needs a saved
// session.
func TestPagedBlocks(t *testing.T) {
	pagedAbove(t, 100)
	st := tempStore(t)
	f := pagedFlags("10:309:1", "12:14:2") // 300 x 2 = 600 combos
	f.Head = 1500
	d := newStoreDriver(t, storeConfig(f, st), 160, 50)
	d.key("enter")
	r := d.m.state.Results
	if r == nil || !r.Paged() || r.Pager(engine.FP64) == nil {
		t.Fatalf("not paged: err %q", d.m.status.LastErr)
	}
	full, err := st.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	run := full.Run(engine.FP64)
	d.key("z") // the overview
	view := d.m.results.Heatmap().View()
	if !strings.Contains(strings.Join(strings.Fields(view), " "), "blocks of 2 x 1") {
		t.Fatalf("the legend does not say the summary's blocks:\n%s", view)
	}
	// The cursor's block, by hand from every result.
	sel := d.m.state.Selected
	g := r.Grid
	row, col := sel/g.HMA3.Len(), sel%g.HMA3.Len()
	r0 := row - row%2
	var vs []float64
	for y := r0; y < min(r0+2, g.HMA.Len()); y++ {
		if c := run.Lookup(g.Index(y, col)); c != nil && !math.IsNaN(c.Sharpe) {
			vs = append(vs, c.Sharpe)
		}
	}
	mean := 0.0
	for _, v := range vs {
		mean += v
	}
	mean /= float64(len(vs))
	want := "its block: max " + common.Value("sharpe", slices.Max(vs)) + " mean " + common.Value("sharpe", mean) +
		" min " + common.Value("sharpe", slices.Min(vs))
	if line := strings.SplitN(view, "\n", 2)[0]; !strings.Contains(line, want) {
		t.Fatalf("the overview's line %q lacks %q", line, want)
	}
	// The detail view reads the combos in view: every shown value is a
	// combo's, not a block's.
	d.key("z")
	hm := d.m.results.Heatmap().View()
	if strings.Contains(hm, "summary block") || strings.Contains(hm, "reading") {
		t.Fatalf("the detail view did not read its window:\n%s", hm)
	}
	if v, ok := r.Value(sel, "sharpe", engine.FP64); !ok || v != run.Lookup(sel).Sharpe {
		t.Fatalf("selected combo %d: sharpe %v (%v), want %v", sel, v, ok, run.Lookup(sel).Sharpe)
	}

	t.Run("browser", func(t *testing.T) {
		b := newStoreDriver(t, storeConfig(f, st), 160, 50)
		b.global("S")
		b.key("enter")
		br := b.m.state.Results
		if br == nil || !br.Paged() || br.R64.Summary == nil || br.Pager(engine.FP32) == nil || br.Session != 1 {
			t.Fatalf("the browser did not open the session paged: err %q", b.m.status.LastErr)
		}
		b.key("s", "s") // worst first: read from the store
		got := listed(b)
		worst := engine.TopBy(run, engine.Objective{Metric: "sharpe", Minimise: true}, common.PageRows)
		if len(got) != len(worst) {
			t.Fatalf("%d rows, want %d", len(got), len(worst))
		}
		for k := range got {
			if got[k] != worst[k].Index {
				t.Fatalf("row %d: combo %d, want %d", k, got[k], worst[k].Index)
			}
		}
	})
	t.Run("not saved", func(t *testing.T) {
		cfg := storeConfig(f, st)
		cfg.NoSave = true
		u := newStoreDriver(t, cfg, 160, 50)
		u.key("enter")
		ur := u.m.state.Results
		if ur == nil || !ur.Paged() || ur.Pager(engine.FP64) != nil {
			t.Fatalf("an unsaved study above the threshold: results %v", ur != nil)
		}
		u.key("s", "s")
		title := u.m.results.Metrics().Title()
		if !strings.Contains(title, "paging needs a saved session") {
			t.Fatalf("the title does not say paging needs a saved session: %q", title)
		}
		if n := len(listed(u)); n != engine.DefaultKeep {
			t.Fatalf("%d rows, want the %d kept", n, engine.DefaultKeep)
		}
		hm := strings.Join(strings.Fields(u.m.results.Heatmap().View()), " ")
		if !regexp.MustCompile(`summary block's value: paging needs a saved session`).MatchString(hm) {
			t.Fatalf("the heatmap does not say it shows blocks:\n%s", hm)
		}
	})
}

// brokenPager fails every read, as a session damaged after it was opened.
type brokenPager struct{ common.Pager }

var errBroken = errors.New("session 1, run fp64: batch 0 (4 combos): it changed since the run was opened and verified")

func (brokenPager) Combos(context.Context, []int) ([]engine.ComboResult, error) {
	return nil, errBroken
}
func (brokenPager) Window(context.Context, int, int, int, int) ([]engine.ComboResult, error) {
	return nil, errBroken
}
func (brokenPager) Top(context.Context, sessions.TopQuery) ([]engine.ComboResult, error) {
	return nil, errBroken
}

// TestPagedReadErrors: a page, a window or a combo that cannot be read
// says why (the status line, the table's title, the heatmap's legend),
// shows no value it does not have, and is not asked for again and again
// (the driver runs every command to its end: a loop would not return).
func TestPagedReadErrors(t *testing.T) {
	pagedAbove(t, 100)
	st := tempStore(t)
	f := pagedFlags("10:309:1", "12:14:2")
	f.Head = 1500
	d := newStoreDriver(t, storeConfig(f, st), 160, 50)
	d.key("enter")
	r := d.m.state.Results
	if r == nil || r.Pager(engine.FP64) == nil {
		t.Fatalf("not paged: err %q", d.m.status.LastErr)
	}
	r.SetPagers(map[engine.Precision]common.Pager{engine.FP64: brokenPager{r.Pager(engine.FP64)}, engine.FP32: brokenPager{r.Pager(engine.FP32)}})
	d.key("s", "s") // worst first: a page to read
	if title := d.m.results.Metrics().Title(); !strings.Contains(title, "not read") && !strings.Contains(title, "could not be read") {
		t.Fatalf("the table's title does not say the page was not read: %q", title)
	}
	if n := len(listed(d)); n != 0 {
		t.Fatalf("%d rows listed from a page not read", n)
	}
	d.key("tab", "tab") // the heatmap
	for range 40 {
		d.key("down") // out of the window read at first: a window to read, combos to read
	}
	if !strings.Contains(d.m.status.LastErr, "changed since the run was opened") {
		t.Fatalf("the status line does not say why: %q", d.m.status.LastErr)
	}
	if hm := strings.Join(strings.Fields(d.m.results.Heatmap().View()), " "); !strings.Contains(hm, "the window could not be read") {
		t.Fatalf("the heatmap does not say its window was not read:\n%s", hm)
	}
}
