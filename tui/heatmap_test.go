package tui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

// outlierReport is a study made up for the heatmap (issue 15): a 40 x 50
// grid (hma 10:400:10 x hma3 12:600:12), fp64 only, whose Sharpe is a
// smooth hill, 2 at its top (hma 250 x hma3 360) and about -15 at its far
// corner, but -5000 at hma 10 x hma3 12: one outlier that a linear scale
// turns the whole rest of the grid into one glyph for. Trades fall with
// hma3 (20,000/hma3), so past hma3 500 the objective's constraint (at
// least 40 trades) leaves the combos out.
func outlierReport() *engine.Report {
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 400, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 600, Step: 12}}
	run := &engine.Run{Backend: "reference", Precision: engine.FP64, Grid: g, Status: engine.StatusComplete}
	for i := 0; i < g.Len(); i++ {
		c := g.At(i)
		dh, d3 := float64(c.HMA-250)/80, float64(c.HMA3-360)/120
		m := engine.Metrics{Sharpe: 2 - dh*dh - d3*d3, TotalTrades: 20000 / c.HMA3, MaxDrawdown: 0.1 + 0.001*float64(c.HMA)}
		if i == 0 {
			m.Sharpe = -5000
		}
		run.Results = append(run.Results, engine.ComboResult{Index: i, Combo: c, Metrics: m})
	}
	return &engine.Report{Grid: g, Backend: "reference", Runs: []*engine.Run{run}, Requested: []engine.Precision{engine.FP64},
		Objective: engine.Objective{Metric: "sharpe", MinTrades: 40}}
}

// outlierDriver shows outlierReport on a w x h workbench, the heatmap
// focused.
func outlierDriver(t *testing.T, w, h int) *driver {
	d := newDriver(t, smallFlags(), w, h)
	d.run(d.m.Do(common.ReportMsg{Report: outlierReport(), Asked: []engine.Precision{engine.FP64}}))
	d.m.results.SetFocus(results.HeatmapPane)
	return d
}

// heatRow matches a row of the heatmap's cells in a plain view: the HMA
// label (or none), the gutter, then glyphs, the cursor's brackets, the
// plateau mark or blanks.
var heatRow = regexp.MustCompile(`\|[ \d]{3}[ >]([.:\-=+*#%@\[\]PX ]+)\|`)

// glyphs counts the scale's glyphs in the heatmap's rows of view.
func glyphs(view string) map[rune]int {
	out := map[rune]int{}
	for _, l := range strings.Split(view, "\n") {
		m := heatRow.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, r := range m[1] {
			if strings.ContainsRune(".:-=+*#%@", r) {
				out[r]++
			}
		}
	}
	return out
}

// TestHeatmapOutlier: on a grid with an outlier the quantile scale (the
// default) spreads the glyphs and puts the top glyph around the optimum;
// linear collapses the window into one glyph; clip spreads it again. The
// legend names the scale and fits the pane.
func TestHeatmapOutlier(t *testing.T) {
	d := outlierDriver(t, 80, 24)
	m := d.m
	best := m.state.Results.Grid.Index(24, 29) // hma 250 x hma3 360
	if m.state.Selected != best {
		t.Fatalf("selected %d, want the optimum %d", m.state.Selected, best)
	}
	for _, tc := range []struct {
		key, scale string
		min, max   int // distinct glyphs in the window
	}{
		{"", "quantile scale:", 9, 9},
		{"f", "clip 2-98% scale:", 5, 9},
		{"f", "linear scale:", 1, 1},
		{"f", "quantile scale:", 9, 9},
	} {
		if tc.key != "" {
			d.key(tc.key)
		}
		v := m.View()
		checkSize(t, v, 80, 24)
		if !strings.Contains(v, tc.scale) {
			t.Fatalf("the legend does not name %q:\n%s", tc.scale, v)
		}
		if n := len(glyphs(v)); n < tc.min || n > tc.max {
			t.Errorf("%s: %d distinct glyphs %v, want %d..%d:\n%s", tc.scale, n, glyphs(v), tc.min, tc.max, v)
		}
		if !strings.Contains(v, "@@]") && !strings.Contains(v, "[@@") && !strings.Contains(v, "@[]@") {
			t.Errorf("%s: the optimum's neighbours are not the top glyph:\n%s", tc.scale, v)
		}
	}
}

// TestHeatmapLeftOut: combos the table's filter or the objective's
// constraints leave out are blank and out of the scale's range; the
// overview shows the whole grid in blocks, marks the detail window, and
// moving its cursor moves the window.
func TestHeatmapLeftOut(t *testing.T) {
	d := outlierDriver(t, 80, 24)
	m := d.m
	// The constraint: hma3 504..600 have fewer than 40 trades (9 columns
	// of 40 rows).
	if v := m.View(); !strings.Contains(v, "360 combos left out") {
		t.Errorf("the legend does not count the combos left out:\n%s", v)
	}
	// The filter leaves out the outlier and every negative Sharpe: the
	// scale starts at 0 or above.
	d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("sharpe>=0"), Paste: true})
	d.key("enter", "tab", "tab") // metrics -> parity -> heatmap
	if m.results.Focus() != results.HeatmapPane {
		t.Fatalf("focus %s", results.PaneNames[m.results.Focus()])
	}
	v := m.View()
	lo := regexp.MustCompile(`quantile scale: (-?[\d.]+)`).FindStringSubmatch(v)
	if lo == nil || strings.HasPrefix(lo[1], "-") {
		t.Errorf("the filtered scale starts below 0 (%v):\n%s", lo, v)
	}
	if g := glyphs(v); g['@'] == 0 || len(g) != 9 {
		t.Errorf("the filtered window has glyphs %v:\n%s", g, v)
	}
	blank := false
	for _, l := range strings.Split(v, "\n") {
		if m := heatRow.FindStringSubmatch(l); m != nil && regexp.MustCompile(`  [.:\-=+*#%@]`).MatchString(m[1]) {
			blank = true
		}
	}
	if !blank || !strings.Contains(v, "left out (filter, constraints)") {
		t.Errorf("no blank cells before the kept ones:\n%s", v)
	}

	// The overview: 40 rows and 50 columns in 20 lines; the window marked.
	d.key("z")
	v = m.View()
	checkSize(t, v, 80, 24)
	if !strings.Contains(v, "overview") || !strings.Contains(v, "^") || !strings.Contains(v, " >") {
		t.Fatalf("the overview does not mark the detail window:\n%s", v)
	}
	// Moving the cursor a block moves the detail window there.
	r0 := m.results.Heatmap().View() // the detail window's first row, as the overview's legend shows it
	sel := m.state.Selected
	d.key("up", "up", "up", "up")
	if m.state.Selected == sel {
		t.Fatal("up in the overview did not move the selection")
	}
	if m.results.Heatmap().View() == r0 {
		t.Fatal("the overview did not change")
	}
	d.key("z")
	v = m.View()
	g := m.state.Results.Grid
	c := g.At(m.state.Selected)
	if want := fmt.Sprintf("hma %d x hma3 %d:", c.HMA, c.HMA3); !strings.Contains(v, want) {
		t.Errorf("back in detail the selection %q is not shown:\n%s", want, v)
	}
	if !strings.Contains(v, fmt.Sprintf("%3d", c.HMA)) {
		t.Errorf("the detail window does not show row hma %d:\n%s", c.HMA, v)
	}
}

// TestHeatmapValues: v prints the values in the cells (the cells widen to
// hold them), at the precision the metric needs.
func TestHeatmapValues(t *testing.T) {
	d := outlierDriver(t, 80, 24)
	d.key("v")
	v := d.m.View()
	checkSize(t, v, 80, 24)
	// The optimum, 2 at hma 250 x hma3 360, with the scale's decimals.
	if !regexp.MustCompile(`\[ *2\.00\]`).MatchString(v) {
		t.Errorf("the cursor's cell does not print its value:\n%s", v)
	}
	d.key("v")
	if strings.Contains(d.m.View(), "2.00]") {
		t.Error("v again does not hide the values")
	}
}

// TestGoldenHeatmap: the heatmap of outlierReport at 80x24 and 120x40:
// the detail window (quantile scale, the optimum in the top glyph), the
// same in linear (the defect: one glyph), the overview, and the values.
func TestGoldenHeatmap(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			d := outlierDriver(t, w, h)
			requireGolden(t, "quantile", d.m.View(), w, h)
			d.key("f", "f")
			requireGolden(t, "linear", d.m.View(), w, h)
			d.key("f", "z")
			requireGolden(t, "overview", d.m.View(), w, h)
			d.key("z", "v")
			requireGolden(t, "values", d.m.View(), w, h)
		})
	}
}

// TestHeatmapColour: with colour the cells are coloured (one level a
// colour), the combos left out are dots, and every mode fits the pane.
func TestHeatmapColour(t *testing.T) {
	d := &driver{t: t, m: newModel(context.Background(), Config{Registry: testRegistry(), Flags: smallFlags()}, termenv.TrueColor, true, true)}
	d.run(d.m.Init())
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.run(d.m.Do(common.ReportMsg{Report: outlierReport(), Asked: []engine.Precision{engine.FP64}}))
	d.m.results.SetFocus(results.HeatmapPane)
	for _, k := range []string{"", "v", "z", "f", "v"} {
		if k != "" {
			d.key(k)
		}
		v := d.m.View()
		checkSize(t, v, 80, 24)
		if k == "z" && !strings.Contains(v, "·") {
			t.Errorf("the overview shows no left-out dot:\n%s", v)
		}
	}
}

// TestPlateauMarkBesideValues: with the cells' values printed (v), the
// plateau best's P stands before its number, never over one of its
// digits (found by a fresh-user trial: "-P.23" for -1.23).
func TestPlateauMarkBesideValues(t *testing.T) {
	d := newDriver(t, robustFlags(), 120, 40)
	d.key("enter")
	d.settle()
	if d.m.state.Results == nil || d.m.state.Results.Robust == nil {
		t.Fatal("the study has no robustness section")
	}
	d.m.results.SetFocus(results.HeatmapPane)
	d.key("v")
	body := d.m.results.Heatmap().View()
	if !regexp.MustCompile(`P *-?[0-9][0-9.]*`).MatchString(body) || regexp.MustCompile(`[0-9.-]P[0-9.]`).MatchString(body) {
		t.Fatalf("the plateau mark with the values:\n%s", body)
	}
}

// TestHeatmapOneValue: a grid whose metric is the same everywhere (trades
// all 7 here) says so instead of a scale of equal edges ("quantile scale:
// 7 7 7 ...", seen on the all-datasets view's profitable counts, all 0).
func TestHeatmapOneValue(t *testing.T) {
	rep := outlierReport()
	for i := range rep.Runs[0].Results {
		rep.Runs[0].Results[i].TotalTrades = 7
	}
	rep.Objective = engine.Objective{Metric: "sharpe"}
	d := newDriver(t, smallFlags(), 100, 30)
	d.run(d.m.Do(common.ReportMsg{Report: rep, Asked: []engine.Precision{engine.FP64}}))
	d.m.results.SetFocus(results.HeatmapPane)
	d.send(common.MetricMsg{Name: "total_trades"})
	v := d.m.View()
	if !strings.Contains(v, "every cell 7") || strings.Contains(v, "scale:") {
		t.Fatalf("the legend of one value:\n%s", v)
	}
}
