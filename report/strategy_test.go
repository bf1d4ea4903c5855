package report

import (
	"bytes"
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/sessions"
	_ "sweepbench/strategy"
)

// memorySource is the study of spec run in memory (engine.RunStudy with
// the reference backend, no store), as a Source: the session a report
// would read, its dataset already loaded.
func memorySource(t *testing.T, spec engine.Spec) *Source {
	t.Helper()
	ctx := context.Background()
	ds, err := spec.LoadContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := spec.Study(ds, registry())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ss := &sessions.Session{ID: 1, Created: time.Unix(0, 0), Status: engine.StatusComplete, Dataset: rep.Dataset,
		Spec: spec, Asked: spec, Grid: rep.Grid, Params: rep.Params, Precisions: st.Precisions, WMA: rep.WMA, Backend: rep.Backend}
	if rep.Parity != nil {
		ss.Parity = string(rep.Parity.Verdict)
	}
	src := &Source{ID: 1, Session: ss, Report: rep, opt: Options{Cells: DefaultCells}}
	src.studyOnce.Do(func() { src.study = st })
	return src
}

// crossSpec is `sweepbench run --head 3000 --strategy cross --fast
// ema:5:15:5 --slow sma:20:40:10 --backend reference`: 3 x 3 combos.
func crossSpec() engine.Spec {
	s := engine.DefaultSpec()
	s.Data, s.Head, s.Backend = "embedded:btcusdt-1m", 3000, "reference"
	s.Strategy, s.HMA, s.HMA3 = "cross", "", ""
	s.Params = map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}
	return s
}

// bestBy is the index of the best combo of run by metric (higher is
// better), recomputed from its results.
func bestBy(run *engine.Run, metric string) int {
	best, bv := -1, math.Inf(-1)
	for _, r := range run.Results {
		if v, _ := r.Metrics.Value(metric); v > bv {
			best, bv = r.Index, v
		}
	}
	return best
}

// TestStrategyReport: the HTML report of a cross study names the family
// and its grid in its head, the best combo by its parameters (recomputed
// from the grid: fast ema 5..15, slow sma 20..40), never a hull length.
func TestStrategyReport(t *testing.T) {
	src := memorySource(t, crossSpec())
	g := src.Report.Grid
	if g.Strategy == nil || g.Len() != 9 {
		t.Fatalf("grid %s: %d combos, want cross 3 x 3", g.Text(), g.Len())
	}
	best := bestBy(src.Run(engine.FP64), "sharpe")
	sel, ok := src.Selected()
	if !ok || sel.Index != best {
		t.Fatalf("selected %d (%v), want the best by Sharpe %d", sel.Index, ok, best)
	}
	// The label from the grid's own axes: fast ema (5, 10, 15), slow sma (20, 30, 40).
	co := g.Strategy.Coords(best)
	want := "fast ema " + itoa(5+5*co[0]) + ", slow sma " + itoa(20+10*co[1])
	if g.Label(best) != want {
		t.Fatalf("label %q, want %q", g.Label(best), want)
	}
	var b bytes.Buffer
	notes, err := WriteHTML(context.Background(), &b, src, HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) > 0 {
		t.Errorf("notes %q", notes)
	}
	page := b.String()
	if !strings.Contains(page, "<title>Session 1: embedded:btcusdt-1m[:3000], cross fast ema:5:15:5 x slow sma:20:40:10</title>") ||
		!strings.Contains(page, "<dt>grid</dt><dd>cross: fast ema:5:15:5 x slow sma:20:40:10 = 9 combos</dd>") {
		t.Errorf("the head does not name the family and its grid")
	}
	for _, s := range []string{
		"Session 1: embedded:btcusdt-1m[:3000], cross fast ema:5:15:5 x slow sma:20:40:10",
		"cross: fast ema:5:15:5 x slow sma:20:40:10 = 9 combos",
		"x selected: " + want,
		"fast ema length (bars)", "slow sma length (bars)",
	} {
		if !strings.Contains(page, htmlEscape(s)) {
			t.Errorf("the page does not say %q", s)
		}
	}
	// The runs' table is engine/output's (output.WriteTable, as `sessions
	// show` prints it): what report draws around it names no hull length;
	// once the table does not either, neither does the page.
	var table bytes.Buffer
	if err := output.WriteTable(&table, src.Report, 10); err != nil {
		t.Fatal(err)
	}
	pre := regexp.MustCompile(`(?s)<section id="runs">.*?</section>`)
	own := pre.ReplaceAllString(page, "")
	for _, s := range []string{"hma 0", "hma3 0", "HMA length", "HMA3 length", "h3-h"} {
		if strings.Contains(own, s) {
			t.Errorf("the page says %q", s)
		}
		if !strings.Contains(table.String(), s) && strings.Contains(page, s) {
			t.Errorf("the page says %q (its runs' table does not)", s)
		}
	}
	// The selected combo's section names it, and why no equity chart.
	if !strings.Contains(page, htmlEscape("so its selected combo ("+want+") is not drawn")) {
		t.Errorf("the equity section does not name the selected combo %q", want)
	}
}

// TestStrategyCrossover: the crossover chart of a cross study's worst
// flip draws its combo's two legs (from the grid's point of the flip's
// index) in both precisions around the flip's root bar.
func TestStrategyCrossover(t *testing.T) {
	src := memorySource(t, crossSpec())
	p := src.Report.Parity
	if p == nil || len(p.Flips) == 0 {
		t.Fatal("no flips to draw (the cross 3 x 3 study on 3,000 bars has two)")
	}
	fl := p.Flips[0]
	pt := src.Report.Grid.Point(fl.Index)
	f, err := Make(context.Background(), src, Request{Name: "crossover"})
	if err != nil {
		t.Fatal(err)
	}
	top := f.panels[0].p
	if top.X.Min != float64(fl.Bar-DefaultWindow) || top.X.Max != float64(fl.Bar+DefaultWindow) {
		t.Errorf("x [%g, %g], want the flip's bar %d +- %d", top.X.Min, top.X.Max, fl.Bar, DefaultWindow)
	}
	sh := shapeOf(t, render(t, f))
	for _, s := range []string{
		"Flip 1 of " + itoa(len(p.Flips)) + ": " + src.Report.Grid.Label(fl.Index) + " at bar " + itoa(fl.Bar),
		"fast " + pt[0].Kind + " " + pt[0].Text + " fp64", "fast " + pt[0].Kind + " " + pt[0].Text + " fp32",
		"slow " + pt[1].Kind + " " + pt[1].Text + " fp64", "slow " + pt[1].Kind + " " + pt[1].Text + " fp32",
		"short", "long",
	} {
		if !has(sh.Texts, s) {
			t.Errorf("no %q in %q", s, sh.Texts)
		}
	}
	// --combo for a strategy grid is its index: a combo with no flip says so.
	for i := 0; i < src.Report.Grid.Len(); i++ {
		flipped := false
		for _, x := range p.Flips {
			flipped = flipped || x.Index == i
		}
		if flipped {
			continue
		}
		_, err := Make(context.Background(), src, Request{Name: "crossover", Index: &i})
		var un *UnavailableError
		if !errors.As(err, &un) || !strings.Contains(un.Why, "lists no flip of "+src.Report.Grid.Label(i)) {
			t.Errorf("combo %d without a flip: %v", i, err)
		}
		break
	}
}

// TestStrategyHeatmap: a cross study's heatmap has the fast lengths along
// y and the slow along x, each cell the combo's own Sharpe (two axes:
// nothing to reduce); a zscore study's reduces exit, best of each cell.
func TestStrategyHeatmap(t *testing.T) {
	ctx := context.Background()
	src := memorySource(t, crossSpec())
	f, err := Make(ctx, src, Request{Name: "heatmap"})
	if err != nil {
		t.Fatal(err)
	}
	m := f.panels[0].p
	// fast 5..15 step 5 (y), slow 20..40 step 10 (x), +- half a step.
	if m.X.Min != 15 || m.X.Max != 45 || m.Y.Min != 2.5 || m.Y.Max != 17.5 {
		t.Errorf("axes x [%g, %g] y [%g, %g], want x [15, 45] (slow) y [2.5, 17.5] (fast)", m.X.Min, m.X.Max, m.Y.Min, m.Y.Max)
	}
	if m.X.Label.Text != "slow sma length (bars)" || m.Y.Label.Text != "fast ema length (bars)" {
		t.Errorf("axis labels x %q y %q", m.X.Label.Text, m.Y.Label.Text)
	}
	sh := shapeOf(t, render(t, f))
	if !has(sh.Texts, "sharpe fp64 over the grid") {
		t.Errorf("texts %q", sh.Texts)
	}
	// Each cell is its combo: the cells' values are the 9 Sharpe ratios.
	h := newStrategyHeat(src.Report.Grid, DefaultCells)
	if h.rows != 3 || h.cols != 3 || h.rest != nil {
		t.Fatalf("heat %d x %d, rest %q", h.rows, h.cols, h.rest)
	}
	for _, r := range src.Run(engine.FP64).Results {
		k, ok := h.cellOf(r.Index)
		co := src.Report.Grid.Strategy.Coords(r.Index)
		if !ok || k != co[0]*3+co[1] {
			t.Errorf("combo %d (%v) in cell %d", r.Index, co, k)
		}
	}

	// zscore: length x entry, exit reduced by the best.
	z := engine.DefaultSpec()
	z.Data, z.Head, z.Backend, z.Precision = "embedded:btcusdt-1m", 3000, "reference", "fp64"
	z.Strategy, z.HMA, z.HMA3 = "zscore", "", ""
	z.Params = map[string]string{"length": "20:40:20", "entry": "1.5:2:0.5", "exit": "0:0.5:0.5"}
	zs := memorySource(t, z)
	f, err = Make(ctx, zs, Request{Name: "heatmap"})
	if err != nil {
		t.Fatal(err)
	}
	m = f.panels[0].p
	if m.Y.Label.Text != "length" || m.X.Label.Text != "entry" || m.Y.Min != 10 || m.Y.Max != 50 || m.X.Min != 1.25 || m.X.Max != 2.25 {
		t.Errorf("axes %q [%g, %g] x %q [%g, %g], want length [10, 50] x entry [1.25, 2.25]", m.Y.Label.Text, m.Y.Min, m.Y.Max, m.X.Label.Text, m.X.Min, m.X.Max)
	}
	if !strings.Contains(f.Caption, "each cell the best over exit") || !strings.Contains(f.Title, "best over exit") {
		t.Errorf("title %q caption %q", f.Title, f.Caption)
	}
	// Recomputed: cell (length, entry) holds the largest Sharpe over exit.
	zg := zs.Report.Grid
	want := map[[2]int]float64{}
	for _, r := range zs.Run(engine.FP64).Results {
		co := zg.Strategy.Coords(r.Index)
		k := [2]int{co[0], co[1]}
		if v, ok := want[k]; !ok || r.Sharpe > v {
			want[k] = r.Sharpe
		}
	}
	sh = shapeOf(t, render(t, f))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range want {
		lo, hi = min(lo, v), max(hi, v)
	}
	if len(want) != 4 || !has(sh.Texts, g3(lo)) || !has(sh.Texts, g3(hi)) {
		t.Errorf("%d cells; the key does not span %s .. %s: %q", len(want), g3(lo), g3(hi), sh.Texts)
	}
}
