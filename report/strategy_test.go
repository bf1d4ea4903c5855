package report

import (
	"bytes"
	"context"
	"errors"
	"math"
	"regexp"
	"slices"
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
		"fp64 and fp32 on reference; fp32 formulation direct",
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
	if !strings.Contains(page, htmlEscape("Equity of "+want)) {
		t.Errorf("the equity section does not name the selected combo %q", want)
	}
}

// TestStrategyEquity: the equity chart of a cross study's selected combo
// recomputes it by the family's arithmetic and the sweep's backtest: its
// legend gives each run's saved return, bit for bit, and its trades.
func TestStrategyEquity(t *testing.T) {
	src := memorySource(t, crossSpec())
	g := src.Report.Grid
	for _, i := range []int{bestBy(src.Run(engine.FP64), "sharpe"), 0, g.Len() - 1} {
		var f *Figure
		var err error
		if i == bestBy(src.Run(engine.FP64), "sharpe") {
			f, err = Make(context.Background(), src, Request{Name: "equity"}) // the selected
		} else {
			f, err = Make(context.Background(), src, Request{Name: "equity", Index: &i})
		}
		if err != nil {
			t.Fatal(err)
		}
		sh := shapeOf(t, render(t, f))
		r64, r32 := src.Run(engine.FP64).Lookup(i), src.Run(engine.FP32).Lookup(i)
		for _, s := range []string{"Equity of " + g.Label(i), "fp64 (return " + pct(r64.TotalReturn) + ")", "fp32 (return " + pct(r32.TotalReturn) + ")", "buy and hold"} {
			if !has(sh.Texts, s) {
				t.Errorf("combo %d: no %q in %q", i, s, sh.Texts)
			}
		}
		// Bit for bit: the sweep's metrics, recomputed.
		_, _, d64, d32, err := src.strategyInspect(context.Background(), "equity", i)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			d *engine.ComboDetail
			r *engine.ComboResult
		}{{d64, r64}, {d32, r32}} {
			if c.d == nil || c.r == nil {
				t.Fatalf("combo %d: not recomputed or not in the run", i)
			}
			if c.d.TotalReturn != c.r.TotalReturn || c.d.Sharpe != c.r.Sharpe || c.d.MaxDrawdown != c.r.MaxDrawdown || c.d.TotalTrades != c.r.TotalTrades || len(c.d.Trades) != c.r.TotalTrades {
				t.Errorf("combo %d %s: recomputed return %v sharpe %v dd %v trades %d (%d), the run's %v %v %v %d", i, c.d.Precision,
					c.d.TotalReturn, c.d.Sharpe, c.d.MaxDrawdown, c.d.TotalTrades, len(c.d.Trades), c.r.TotalReturn, c.r.Sharpe, c.r.MaxDrawdown, c.r.TotalTrades)
			}
		}
		if !strings.Contains(f.Caption, "its "+itoa(r64.TotalTrades)+" trades") {
			t.Errorf("combo %d: caption %q, want its %d trades", i, f.Caption, r64.TotalTrades)
		}
	}
	n := g.Len()
	_, err := Make(context.Background(), src, Request{Name: "equity", Index: &n})
	var un *UnavailableError
	if !errors.As(err, &un) || !strings.Contains(un.Why, "has no combo 9") {
		t.Errorf("combo 9 of 9: %v", err)
	}
}

// TestStrategyCrossover: the crossover chart of a cross study's worst
// flip is its signal chart: its combo's two legs (from the grid's point
// of the flip's index), strategy.SignalSeries' in both precisions,
// around the flip's root bar.
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
	// The legs drawn are strategy.SignalSeries' in each precision, the
	// legend above them.
	lo, hi := flipWindow(fl.Bar, 3000)
	_, s64, s32, sc := signalOf(t, src, fl.Index, lo, hi)
	sameAsSignal(t, sc, s64, s32)
	if sc.Axis != "price" || top.Y.Label.Text != "price" || len(sc.Levels) != 0 {
		t.Errorf("axis %q (%q), levels %v", sc.Axis, top.Y.Label.Text, sc.Levels)
	}
	legendClear(t, f, 0, sc.YMax)
	legendClear(t, f, 1, 1)
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
	h := newStrategyHeat(src.Report.Grid, DefaultCells, [2]int{0, 1})
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
	h, _, err = zs.strategyHeat(ctx, "sharpe", "fp64", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got := h.val[k[0]*2+k[1]]; got != v {
			t.Errorf("cell length %d entry %d: %v, want the best over exit %v", k[0], k[1], got, v)
		}
	}

	// Other axes: exit (columns) by length (rows), entry reduced.
	f, err = Make(ctx, zs, Request{Name: "heatmap", Axes: []string{"length", "exit"}})
	if err != nil {
		t.Fatal(err)
	}
	m = f.panels[0].p
	if m.Y.Label.Text != "length" || m.X.Label.Text != "exit" || m.X.Min != -0.25 || m.X.Max != 0.75 || !strings.Contains(f.Caption, "each cell the best over entry") {
		t.Errorf("axes %q x %q [%g, %g], caption %q", m.Y.Label.Text, m.X.Label.Text, m.X.Min, m.X.Max, f.Caption)
	}
	h, _, err = zs.strategyHeat(ctx, "sharpe", "fp64", []string{"length", "exit"})
	if err != nil {
		t.Fatal(err)
	}
	byExit := map[[2]int]float64{}
	for _, r := range zs.Run(engine.FP64).Results {
		co := zg.Strategy.Coords(r.Index)
		k := [2]int{co[0], co[2]}
		if v, ok := byExit[k]; !ok || r.Sharpe > v {
			byExit[k] = r.Sharpe
		}
	}
	for k, v := range byExit {
		if got := h.val[k[0]*2+k[1]]; got != v {
			t.Errorf("cell length %d exit %d: %v, want the best over entry %v", k[0], k[1], got, v)
		}
	}
	// The HTML report's heatmaps along the axes HTMLOptions.Axes names.
	var page bytes.Buffer
	if _, err := WriteHTML(ctx, &page, zs, HTMLOptions{Axes: []string{"length", "exit"}}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), "each cell the best over entry"); n == 0 || strings.Contains(page.String(), "each cell the best over exit") {
		t.Errorf("HTMLOptions.Axes length, exit: %d heatmaps reduce entry", n)
	}
	if err := CheckAxes(zg, []string{"length", "exit"}); err != nil {
		t.Errorf("CheckAxes length, exit: %v", err)
	}
	if err := CheckAxes(robustSource(t).Report.Grid, []string{"hma", "hma3"}); err == nil || !strings.Contains(err.Error(), "a hull study's heatmaps are hma by hma3") {
		t.Errorf("CheckAxes of a hull grid: %v", err)
	}
	for _, axes := range [][]string{{"length", "fast"}, {"length"}, {"exit", "exit"}} {
		_, err := Make(ctx, zs, Request{Name: "heatmap", Axes: axes})
		var un *UnavailableError
		if !errors.As(err, &un) || !strings.Contains(err.Error(), "length, entry, exit") {
			t.Errorf("axes %q: %v", axes, err)
		}
	}
}

// TestStrategyHeatCells: a strategy heatmap's cells, recomputed from the
// runs' results: blocks beyond Options.Cells take their best (the least
// for max_drawdown), the fp32 - fp64 map its largest |difference|,
// --fast-below-slow leaves the dropped pairs empty, and a constraint greys
// the cells none of whose combos meets it.
func TestStrategyHeatCells(t *testing.T) {
	ctx := context.Background()
	src := memorySource(t, crossSpec())
	g := src.Report.Grid
	src.opt.Cells = 2 // 3 x 3 values: blocks of 2 x 2
	want := func(run *engine.Run, v func(r *engine.ComboResult) float64, better func(a, b float64) bool) [4]float64 {
		w := [4]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
		for i := range run.Results {
			r := &run.Results[i]
			co := g.Strategy.Coords(r.Index)
			k := co[0]/2*2 + co[1]/2
			if x := v(r); math.IsNaN(w[k]) || better(x, w[k]) {
				w[k] = x
			}
		}
		return w
	}
	r64, r32 := src.Run(engine.FP64), src.Run(engine.FP32)
	for _, c := range []struct {
		metric, of string
		want       [4]float64
	}{
		{"sharpe", "fp64", want(r64, func(r *engine.ComboResult) float64 { return r.Sharpe }, func(a, b float64) bool { return a > b })},
		{"sharpe", "fp32", want(r32, func(r *engine.ComboResult) float64 { return r.Sharpe }, func(a, b float64) bool { return a > b })},
		{"max_drawdown", "fp64", want(r64, func(r *engine.ComboResult) float64 { return r.MaxDrawdown }, func(a, b float64) bool { return a < b })},
		{"total_return", "diff", want(r32, func(r *engine.ComboResult) float64 { return r.TotalReturn - r64.Lookup(r.Index).TotalReturn },
			func(a, b float64) bool { return math.Abs(a) > math.Abs(b) })},
	} {
		h, _, err := src.strategyHeat(ctx, c.metric, c.of, nil)
		if err != nil {
			t.Fatal(err)
		}
		if h.rows != 2 || h.cols != 2 || h.br != 2 || h.bc != 2 {
			t.Fatalf("%d x %d cells of %d x %d", h.rows, h.cols, h.br, h.bc)
		}
		for k := range c.want {
			if h.val[k] != c.want[k] {
				t.Errorf("%s %s: cell %d = %v, want %v", c.metric, c.of, k, h.val[k], c.want[k])
			}
		}
	}
	f, err := Make(ctx, src, Request{Name: "heatmap"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Caption, "Each cell is a block of 2 x 2 values, drawn by its best.") {
		t.Errorf("caption %q", f.Caption)
	}

	// A minimum of trades between the combos' least and most: the cells
	// whose combo has fewer are grey, the others not.
	var trades []int
	for _, r := range r64.Results {
		trades = append(trades, r.TotalTrades)
	}
	slices.Sort(trades)
	src.opt.Cells = DefaultCells
	src.Report.Objective.MinTrades = trades[len(trades)/2]
	defer func() { src.Report.Objective.MinTrades = 0 }()
	h, _, err := src.strategyHeat(ctx, "sharpe", "fp64", nil)
	if err != nil {
		t.Fatal(err)
	}
	greys := 0
	for _, r := range r64.Results {
		k, _ := h.cellOf(r.Index)
		if h.grey[k] != (r.TotalTrades < trades[len(trades)/2]) {
			t.Errorf("combo %d (%d trades, minimum %d): grey %v", r.Index, r.TotalTrades, trades[len(trades)/2], h.grey[k])
		}
		if h.grey[k] {
			greys++
		}
	}
	if greys == 0 || greys == len(trades) {
		t.Errorf("%d of %d cells grey", greys, len(trades))
	}

	// --fast-below-slow: fast 10..30 x slow 20..40 keeps 6 of 9 pairs.
	spec := crossSpec()
	spec.Precision = "fp64"
	spec.Params = map[string]string{"fast": "ema:10:30:10", "slow": "sma:20:40:10"}
	spec.FastBelowSlow = true
	fs := memorySource(t, spec)
	if fs.Report.Grid.Len() != 6 {
		t.Fatalf("%d combos, want 6", fs.Report.Grid.Len())
	}
	h, _, err = fs.strategyHeat(ctx, "sharpe", "fp64", nil)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 3; r++ {
		for c := 0; c < 3; c++ {
			kept := 10+10*r < 20+10*c
			v := h.val[r*3+c]
			if kept == math.IsNaN(v) {
				t.Errorf("fast %d slow %d: value %v (kept %v)", 10+10*r, 20+10*c, v, kept)
			}
			if kept {
				i := fs.Report.Grid.Strategy.IndexOf([]int{r, c})
				if got := fs.Run(engine.FP64).Lookup(i).Sharpe; got != v {
					t.Errorf("fast %d slow %d: %v, want combo %d's %v", 10+10*r, 20+10*c, v, i, got)
				}
			}
		}
	}
	f, err = Make(ctx, fs, Request{Name: "heatmap"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Caption, "White: no combo (--fast-below-slow") {
		t.Errorf("caption %q", f.Caption)
	}
}

// TestStrategyFamiliesReport: every family's report draws each figure it
// plans (no note), its head and heatmap named by its own parameters: the
// first two along the axes, the third reduced by the best, the selected
// combo marked by its label; a price leg is an axis of one value.
func TestStrategyFamiliesReport(t *testing.T) {
	for _, c := range []struct {
		family string
		params map[string]string
		y, x   string // the heatmap's axes
		over   string
	}{
		{"zscore", map[string]string{"length": "20:40:20", "entry": "1.5:2:0.5", "exit": "0:0.5:0.5"}, "length", "entry", " over exit"},
		{"breakout", map[string]string{"entry": "20:40:20", "exit": "10:20:10"}, "entry", "exit", ""},
		{"rsi", map[string]string{"length": "7:14:7", "lower": "25:30:5", "upper": "70:75:5"}, "length", "lower", " over upper"},
		{"cross", map[string]string{"fast": "price", "slow": "sma:20:40:10"}, "fast price", "slow sma length (bars)", ""},
	} {
		t.Run(c.family, func(t *testing.T) {
			spec := crossSpec()
			spec.Strategy, spec.Params = c.family, c.params
			spec.WMA = "prefix" // SPEC's fp32 trap: flips to draw
			if c.family == "breakout" {
				spec.WMA = "direct" // no prefix form
			}
			src := memorySource(t, spec)
			g := src.Report.Grid
			var b bytes.Buffer
			notes, err := WriteHTML(context.Background(), &b, src, HTMLOptions{})
			if err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if len(notes) > 0 {
				t.Errorf("notes %q", notes)
			}
			for _, n := range regexp.MustCompile(`<p class="note">[^<]*`).FindAllString(page, -1) {
				if !strings.Contains(n, "has no flips") {
					t.Errorf("note %q", n)
				}
			}
			if p := src.Report.Parity; p != nil && len(p.Flips) > 0 {
				if !strings.Contains(page, htmlEscape("Flip 1 of "+itoa(len(p.Flips))+": "+p.Flips[0].Label())) {
					t.Errorf("no crossover chart of the flip of %s", p.Flips[0].Label())
				}
				if fl := p.Flips[0]; fl.Bars > 1 {
					f, err := Make(context.Background(), src, Request{Name: "crossover"})
					if err != nil {
						t.Fatal(err)
					}
					if s := "The positions differ over " + itoa(fl.Bars) + " bars from the root, moving " + itoa(fl.Trades) + " trades"; !strings.Contains(f.Caption, s) {
						t.Errorf("caption %q does not say %q", f.Caption, s)
					}
				}
			} else {
				t.Logf("%s: no flips", c.family)
			}
			sel, ok := src.Selected()
			if !ok || sel.Index != bestBy(src.Run(engine.FP64), "sharpe") {
				t.Fatalf("selected %d", sel.Index)
			}
			for _, s := range []string{
				"<title>Session 1: embedded:btcusdt-1m[:3000], " + c.family + " " + htmlEscape(g.Text()) + "</title>",
				htmlEscape("x selected: " + g.Label(sel.Index)),
				htmlEscape("Equity of " + g.Label(sel.Index)),
			} {
				if !strings.Contains(page, s) {
					t.Errorf("the page does not say %q", s)
				}
			}
			f, err := Make(context.Background(), src, Request{Name: "heatmap"})
			if err != nil {
				t.Fatal(err)
			}
			m := f.panels[0].p
			if m.Y.Label.Text != c.y || m.X.Label.Text != c.x {
				t.Errorf("axes y %q x %q, want %q %q", m.Y.Label.Text, m.X.Label.Text, c.y, c.x)
			}
			if c.over != "" && !strings.Contains(f.Caption, "each cell the best"+c.over) {
				t.Errorf("caption %q", f.Caption)
			}
		})
	}
}

// TestStrategyComboRequest: a hull combo named for a strategy study's
// charts of one combo is refused, saying how a strategy combo is named.
func TestStrategyComboRequest(t *testing.T) {
	src := memorySource(t, crossSpec())
	for _, name := range []string{"crossover", "equity"} {
		_, err := Make(context.Background(), src, Request{Name: name, Combo: &engine.Combo{HMA: 20, HMA3: 30}})
		var un *UnavailableError
		if !errors.As(err, &un) || !strings.Contains(err.Error(), "figure "+name+": session 1 is a cross study (fast ema:5:15:5 x slow sma:20:40:10): its combos have no hma and hma3 lengths, so --combo 20:30 names none: name one by its parameters (--combo fast=5,slow=20)") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestEachResultFromStore: a session read from the store (its runs kept
// as summaries) gives every combo of a run through eachResult, batch by
// batch, as the store holds them.
func TestEachResultFromStore(t *testing.T) {
	src := robustSource(t)
	run := src.Run(engine.FP64)
	if !run.Kept {
		t.Fatal("the store's summary run is not kept: eachResult would not read the store")
	}
	full, _, err := src.store.OpenRun(context.Background(), src.ID, engine.FP64)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]engine.ComboResult{}
	err = src.eachResult(context.Background(), "heatmap", engine.FP64, func(rs []engine.ComboResult) error {
		for _, r := range rs {
			got[r.Index] = r
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != src.Report.Grid.Len() || len(full.Results) != len(got) {
		t.Fatalf("%d combos read, the run has %d of %d", len(got), len(full.Results), src.Report.Grid.Len())
	}
	for _, r := range full.Results {
		if g := got[r.Index]; g.Sharpe != r.Sharpe || g.TotalTrades != r.TotalTrades {
			t.Errorf("combo %d: sharpe %v trades %d, the store's %v %d", r.Index, g.Sharpe, g.TotalTrades, r.Sharpe, r.TotalTrades)
		}
	}
}

// TestStrategyPlateauMark: a zscore study with --blocks (robustness saved
// beside it) marks its plateau best on the heatmap at that combo's own
// coordinates (Strategy.Coords of PlateauBest.Index), whichever two
// parameters are shown, and the caption says that the cells reduce the
// third, giving the marked combo's value of it.
func TestStrategyPlateauMark(t *testing.T) {
	ctx := context.Background()
	st, err := sessions.Open(t.TempDir() + "/sessions.db")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	z := engine.DefaultSpec()
	z.Data, z.Head, z.Backend, z.Precision, z.Blocks = "embedded:btcusdt-1m", 20000, "reference", "fp64", 8
	z.Strategy, z.HMA, z.HMA3 = "zscore", "", ""
	z.Params = map[string]string{"length": "10:30:10", "entry": "1.5:2.5:0.5", "exit": "0:1:0.5"}
	id, err := saveStudy(ctx, st, z)
	if err != nil {
		t.Fatal(err)
	}
	src, err := Open(ctx, st, id, Options{Registry: registry()})
	if err != nil {
		t.Fatal(err)
	}
	sm := src.Robust
	if sm == nil || sm.PlateauK == 0 {
		t.Fatalf("no plateau in the robustness summary: %+v", sm)
	}
	g := src.Report.Grid
	best := sm.PlateauBest.Index
	if best < 0 || best >= g.Len() || sm.PlateauBest.Label != g.Label(best) {
		t.Fatalf("plateau best %+v, grid label %q", sm.PlateauBest, g.Label(best))
	}
	pt := g.Point(best) // length, entry, exit
	co := g.Strategy.Coords(best)
	axes := g.Strategy.Axes()
	for k := range co {
		if axes[k].Values[co[k]] != pt[k].Text {
			t.Fatalf("coords %v of combo %d: axis %s value %s, point %s", co, best, axes[k].Name, axes[k].Values[co[k]], pt[k].Text)
		}
	}
	for _, c := range []struct {
		axes    []string
		x, y    float64
		reduced string
	}{
		{nil, pt[1].Value, pt[0].Value, "exit " + pt[2].Text},
		{[]string{"length", "exit"}, pt[2].Value, pt[0].Value, "entry " + pt[1].Text},
		{[]string{"exit", "entry"}, pt[1].Value, pt[2].Value, "length " + pt[0].Text},
	} {
		ax, err := heatAxes(g, c.axes)
		if err != nil {
			t.Fatal(err)
		}
		h := newStrategyHeat(g, DefaultCells, ax)
		var found bool
		for _, m := range src.marks() {
			if m.label != "plateau best" {
				continue
			}
			found = true
			xy, note, ok := h.place(m)
			if !ok || m.index != best || xy.X != c.x || xy.Y != c.y || note != "o plateau best: "+g.Label(best) {
				t.Errorf("axes %q: plateau mark of combo %d at (%g, %g) %q (ok %v), want combo %d at (%g, %g)", c.axes, m.index, xy.X, xy.Y, note, ok, best, c.x, c.y)
			}
			// Its cell is the one of its coordinates along the shown axes.
			k, ok := h.cellOf(best)
			if want := co[ax[0]]*h.cols + co[ax[1]]; !ok || k != want {
				t.Errorf("axes %q: plateau best in cell %d, want %d", c.axes, k, want)
			}
		}
		if !found {
			t.Fatal("no plateau mark")
		}
		f, err := Make(ctx, src, Request{Name: "heatmap", Axes: c.axes})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f.Caption, "the plateau best (o, robustness)") ||
			!strings.Contains(f.Caption, "need not be the marked combo's own value") ||
			!strings.Contains(f.Caption, "the plateau best has "+c.reduced) {
			t.Errorf("axes %q: caption %q", c.axes, f.Caption)
		}
		if sh := shapeOf(t, render(t, f)); !has(sh.Texts, "o plateau best: "+g.Label(best)) {
			t.Errorf("axes %q: texts %q", c.axes, sh.Texts)
		}
	}
}
