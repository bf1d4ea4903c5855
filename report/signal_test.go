package report

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"sweepbench/engine"
	"sweepbench/strategy"
)

// familySpec is `sweepbench run --head HEAD --strategy FAMILY --param ...
// --formulation prefix --backend reference` (both precisions): prefix is
// SPEC's fp32 trap, so there are flips to draw.
func familySpec(family string, params map[string]string, head int) engine.Spec {
	s := crossSpec()
	s.Head, s.Strategy, s.Params, s.WMA = head, family, params, "prefix"
	if family == "breakout" {
		s.WMA = "direct" // no prefix form: its channels are exact
	}
	return s
}

// signalOf is the study's combo i, its Signal in fp64 (direct) and fp32
// (the study's formulation) recomputed by strategy.SignalSeries, and its
// signal chart over bars lo..hi.
func signalOf(t *testing.T, src *Source, i, lo, hi int) (st *engine.Study, s64, s32 strategy.Signal, sc *signalChart) {
	t.Helper()
	st, err := src.Study(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sg, ok := strategy.GridOf(st.Grid.Strategy)
	if !ok {
		t.Fatal("not a strategy grid")
	}
	c, bars := sg.At(i), &st.Dataset.Bars
	if s64, err = strategy.SignalSeries(sg, c, strategy.NewInputs[float64](bars, st.Params.Source), engine.Direct); err != nil {
		t.Fatal(err)
	}
	if s32, err = strategy.SignalSeries(sg, c, strategy.NewInputs[float32](bars, st.Params.Source), st.WMA); err != nil {
		t.Fatal(err)
	}
	d64, err := engine.InspectIndex(context.Background(), bars, st.Grid, i, st.Params, engine.FP64, st.WMA)
	if err != nil {
		t.Fatal(err)
	}
	d32, err := engine.InspectIndex(context.Background(), bars, st.Grid, i, st.Params, engine.FP32, st.WMA)
	if err != nil {
		t.Fatal(err)
	}
	if sc, err = signalChartOf(d64.Signal, d32.Signal, lo, hi); err != nil {
		t.Fatal(err)
	}
	return st, s64, s32, sc
}

// at is line l's plotted value at bar x (ok false: not drawn there).
func at(l signalLine, x int) (float64, bool) {
	for _, p := range l.XY {
		if p.X == float64(x) {
			return p.Y, true
		}
	}
	return 0, false
}

// sameAt reports whether a drawn value (ok: drawn) is SignalSeries' want:
// equal, or not drawn where want is NaN.
func sameAt(v float64, ok bool, want float64) bool {
	if math.IsNaN(want) {
		return !ok
	}
	return ok && v == want
}

// lineNamed is the chart's line called name.
func lineNamed(t *testing.T, sc *signalChart, name string) signalLine {
	t.Helper()
	for _, l := range sc.Lines {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no line %q in the chart", name)
	return signalLine{}
}

// legendClear checks that panel k of f, laid out as Figure.Draw lays it
// out on f's size, has its legend (drawn by gonum at the top of the
// panel, below the title) above the data's largest value dataMax.
func legendClear(t *testing.T, f *Figure, k int, dataMax float64) {
	t.Helper()
	c := draw.New(vgsvg.New(f.Width, f.Height))
	total := 0.0
	for _, p := range f.panels {
		total += p.share
	}
	var at vg.Length
	for j := 0; j < k; j++ {
		at += vg.Length(f.panels[j].share / total * float64(f.Height))
	}
	part := vg.Length(f.panels[k].share / total * float64(f.Height))
	pc := draw.Crop(c, 0, 0, f.Height-at-part, -at)
	p := f.panels[k].p
	d := p.DataCanvas(pc)
	top := d.Min.Y + vg.Length((dataMax-p.Y.Min)/(p.Y.Max-p.Y.Min))*d.Size().Y
	under := pc.Max.Y
	if p.Title.Text != "" {
		under -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	bottom := under - p.Legend.Rectangle(pc).Size().Y
	if top >= bottom {
		t.Errorf("the legend reaches down to %.1f pt, the data up to %.1f pt: it covers the data", bottom.Points(), top.Points())
	}
}

// flipWindow is the bars the crossover chart draws around bar b of n.
func flipWindow(b, n int) (lo, hi int) { return max(b-DefaultWindow, 0), min(b+DefaultWindow, n-1) }

// sameAsSignal checks that each drawn value of sc is SignalSeries' at its
// bar, in its precision, and that every finite value of the window is
// drawn.
func sameAsSignal(t *testing.T, sc *signalChart, s64, s32 strategy.Signal) {
	t.Helper()
	if len(sc.Lines) != 2*len(s64.Lines) {
		t.Fatalf("%d lines drawn, want the %d of the Signal in both precisions", len(sc.Lines), len(s64.Lines))
	}
	for j, l := range sc.Lines {
		sig, p := s64, engine.FP64
		if j%2 == 1 {
			sig, p = s32, engine.FP32
		}
		want := sig.Lines[j/2]
		if l.Name != want.Name+" "+p.String() || l.Precision != p {
			t.Errorf("line %d: %q (%s), want %q in %s", j, l.Name, l.Precision, want.Name, p)
		}
		finite := 0
		for i := sc.Lo; i <= sc.Hi; i++ {
			if !math.IsNaN(want.Values[i]) {
				finite++
			}
		}
		if len(l.XY) != finite {
			t.Errorf("%s: %d points drawn, the Signal has %d finite values in bars %d..%d", l.Name, len(l.XY), finite, sc.Lo, sc.Hi)
		}
		for _, xy := range l.XY {
			if i := int(xy.X); xy.Y != want.Values[i] {
				t.Errorf("%s at bar %d: %v, SignalSeries %v", l.Name, i, xy.Y, want.Values[i])
				break
			}
		}
	}
}

// TestSignalChartZScore: the flip chart of a zscore study (length 20,
// entry 2, exit 0, prefix fp32 on 6,000 bars) draws z in both precisions,
// SignalSeries' values, fp64's equal to (close - mean) / sd over the 20
// bars to the flip's bar, against the levels +-2 and +-0 on a z-score
// axis, its legend above the data.
func TestSignalChartZScore(t *testing.T) {
	src := memorySource(t, familySpec("zscore", map[string]string{"length": "20", "entry": "2", "exit": "0"}, 6000))
	p := src.Report.Parity
	if p == nil || len(p.Flips) == 0 {
		t.Fatal("no flips to draw (zscore 20, 2, 0 in prefix fp32 on 6,000 bars has some)")
	}
	fl := p.Flips[0]
	lo, hi := flipWindow(fl.Bar, 6000)
	st, s64, s32, sc := signalOf(t, src, fl.Index, lo, hi)
	if sc.Scale != "z" || sc.Axis != "z-score" || sc.Lo != lo || sc.Hi != hi {
		t.Errorf("scale %q axis %q bars %d..%d", sc.Scale, sc.Axis, sc.Lo, sc.Hi)
	}
	sameAsSignal(t, sc, s64, s32)
	z64, z32 := lineNamed(t, sc, "z 20 fp64"), lineNamed(t, sc, "z 20 fp32")
	v64, ok64 := at(z64, fl.Bar)
	v32, ok32 := at(z32, fl.Bar)
	// fp32's z may be undefined there (a prefix variance below 0): not drawn.
	if !ok64 || !sameAt(v64, ok64, s64.Lines[0].Values[fl.Bar]) || !sameAt(v32, ok32, s32.Lines[0].Values[fl.Bar]) {
		t.Errorf("z at the flip's bar %d: fp64 %v (%v) fp32 %v (%v), SignalSeries %v %v", fl.Bar, v64, ok64, v32, ok32, s64.Lines[0].Values[fl.Bar], s32.Lines[0].Values[fl.Bar])
	}
	if st.Params.Source != engine.SourceClose {
		t.Fatalf("source %v, want the close", st.Params.Source)
	}
	cl := st.Dataset.Bars.Close[fl.Bar-19 : fl.Bar+1]
	m, v := 0.0, 0.0
	for _, x := range cl {
		m += x
	}
	m /= 20
	for _, x := range cl {
		v += (x - m) * (x - m)
	}
	if z := (cl[19] - m) / math.Sqrt(v/20); math.Abs(v64-z) > 1e-9*max(1, math.Abs(z)) {
		t.Errorf("fp64 z at bar %d: %v, recomputed %v", fl.Bar, v64, z)
	}
	if want := []strategy.Level{{Name: "+entry", Value: 2}, {Name: "-entry", Value: -2}, {Name: "+exit", Value: 0}, {Name: "-exit", Value: 0}}; !slices.Equal(sc.Levels, want) {
		t.Errorf("levels %v, want %v", sc.Levels, want)
	}
	if sc.YMin > -2 || sc.YMax < 2 || sc.YMin > v64 || sc.YMax < v64 || ok32 && (sc.YMin > v32 || sc.YMax < v32) {
		t.Errorf("y range [%g, %g] leaves out the levels +-2 or the flip's z %v, %v", sc.YMin, sc.YMax, v64, v32)
	}

	f, err := Make(context.Background(), src, Request{Name: "crossover"})
	if err != nil {
		t.Fatal(err)
	}
	top := f.panels[0].p
	if top.Y.Label.Text != "z-score" || top.X.Min != float64(lo) || top.X.Max != float64(hi) || top.Y.Min != sc.YMin {
		t.Errorf("axes y %q [%g, ...] x [%g, %g]", top.Y.Label.Text, top.Y.Min, top.X.Min, top.X.Max)
	}
	sh := shapeOf(t, render(t, f))
	for _, s := range []string{"Flip 1 of " + itoa(len(p.Flips)) + ": length 20, entry 2, exit 0 at bar " + itoa(fl.Bar), "z 20 fp64", "z 20 fp32", "+entry 2", "-entry -2", "+exit 0", "-exit 0", "short", "long"} {
		if !has(sh.Texts, s) {
			t.Errorf("no %q in %q", s, sh.Texts)
		}
	}
	if s := "the line its state machine compares (z 20) against its levels (+entry 2, -entry -2, +exit 0, -exit 0), y axis z-score"; !strings.Contains(f.Caption, s) {
		t.Errorf("caption %q does not say %q", f.Caption, s)
	}
	if undefined := strings.Contains(f.Caption, "At bar "+itoa(fl.Bar)+" fp32's z 20 is undefined (not drawn), fp64's is not."); undefined == ok32 {
		t.Errorf("fp32's z drawn at the flip's bar: %v; caption %q", ok32, f.Caption)
	}
	legendClear(t, f, 0, sc.YMax)
	legendClear(t, f, 1, 1) // the positions: long at 1
}

// TestSignalChartRSI: the flip chart of an rsi study (length 11, lower
// 30, upper 65, prefix fp32 on 6,000 bars: a flip at bar 5298) draws RSI
// (0..100) in both precisions, SignalSeries' values, against the levels
// lower and upper, named in its legend on an RSI axis.
func TestSignalChartRSI(t *testing.T) {
	src := memorySource(t, familySpec("rsi", map[string]string{"length": "11", "lower": "30", "upper": "65"}, 6000))
	p := src.Report.Parity
	if p == nil || len(p.Flips) == 0 {
		t.Fatal("no flips to draw (rsi 11, 30, 65 in prefix fp32 on 6,000 bars has one)")
	}
	fl := p.Flips[0]
	lo, hi := flipWindow(fl.Bar, 6000)
	_, s64, s32, sc := signalOf(t, src, fl.Index, lo, hi)
	if sc.Scale != "rsi" || sc.Axis != "RSI" {
		t.Errorf("scale %q axis %q", sc.Scale, sc.Axis)
	}
	sameAsSignal(t, sc, s64, s32)
	if want := []strategy.Level{{Name: "lower", Value: 30}, {Name: "upper", Value: 65}}; !slices.Equal(sc.Levels, want) {
		t.Errorf("levels %v, want %v", sc.Levels, want)
	}
	for _, l := range sc.Lines {
		for _, xy := range l.XY {
			if xy.Y < 0 || xy.Y > 100 {
				t.Errorf("%s at bar %g: %v, not an RSI", l.Name, xy.X, xy.Y)
			}
		}
	}
	v64, ok64 := at(lineNamed(t, sc, "rsi 11 fp64"), fl.Bar)
	v32, ok32 := at(lineNamed(t, sc, "rsi 11 fp32"), fl.Bar)
	if !sameAt(v64, ok64, s64.Lines[0].Values[fl.Bar]) || !ok64 || !sameAt(v32, ok32, s32.Lines[0].Values[fl.Bar]) {
		t.Errorf("RSI at the flip's bar %d: fp64 %v (%v) fp32 %v (%v), SignalSeries %v %v", fl.Bar, v64, ok64, v32, ok32, s64.Lines[0].Values[fl.Bar], s32.Lines[0].Values[fl.Bar])
	}
	if sc.YMin > 30 || sc.YMax < 65 {
		t.Errorf("y range [%g, %g] leaves out a level", sc.YMin, sc.YMax)
	}
	f, err := Make(context.Background(), src, Request{Name: "crossover"})
	if err != nil {
		t.Fatal(err)
	}
	if y := f.panels[0].p.Y.Label.Text; y != "RSI" {
		t.Errorf("y axis %q", y)
	}
	sh := shapeOf(t, render(t, f))
	for _, s := range []string{"at bar " + itoa(fl.Bar), "rsi 11 fp64", "rsi 11 fp32", "lower 30", "upper 65"} {
		if !has(sh.Texts, s) {
			t.Errorf("no %q in %q", s, sh.Texts)
		}
	}
	if s := "(rsi 11) against its levels (lower 30, upper 65), y axis RSI"; !strings.Contains(f.Caption, s) {
		t.Errorf("caption %q does not say %q", f.Caption, s)
	}
	legendClear(t, f, 0, sc.YMax)
	legendClear(t, f, 1, 1) // the positions: long at 1
}

// TestSignalChartBreakout: a breakout combo's signal chart is the close
// and its four channels in both precisions, SignalSeries' values: at bar
// 3000 the entry channel is the highest high and lowest low of the
// 20 bars before it, the exit channel of the 10 (fp32: the same prices
// rounded), on a price axis; the figure's ten legend lines sit above the
// data.
func TestSignalChartBreakout(t *testing.T) {
	src := memorySource(t, familySpec("breakout", map[string]string{"entry": "20", "exit": "10"}, 6000))
	p := src.Report.Parity
	bar := 3000
	lo, hi := flipWindow(bar, 6000)
	st, s64, s32, sc := signalOf(t, src, 0, lo, hi)
	if sc.Scale != "price" || sc.Axis != "price" || len(sc.Levels) != 0 {
		t.Errorf("scale %q axis %q levels %v", sc.Scale, sc.Axis, sc.Levels)
	}
	sameAsSignal(t, sc, s64, s32)
	b := &st.Dataset.Bars
	hiOf := func(L int) float64 { return slices.Max(b.High[bar-L : bar]) }
	loOf := func(L int) float64 { return slices.Min(b.Low[bar-L : bar]) }
	for _, c := range []struct {
		name string
		want float64
	}{{"close", b.Close[bar]}, {"up entry 20", hiOf(20)}, {"down entry 20", loOf(20)}, {"up exit 10", hiOf(10)}, {"down exit 10", loOf(10)}} {
		v64, ok64 := at(lineNamed(t, sc, c.name+" fp64"), bar)
		v32, ok32 := at(lineNamed(t, sc, c.name+" fp32"), bar)
		if !ok64 || !ok32 || v64 != c.want || v32 != float64(float32(c.want)) {
			t.Errorf("%s at bar %d: fp64 %v fp32 %v, want %v (fp32 %v)", c.name, bar, v64, v32, c.want, float32(c.want))
		}
	}
	// Breakout's levels are exact in any precision: no flips here. The
	// chart of one made up at bar 3000 (its ten legend lines).
	if p == nil {
		t.Fatal("no parity report")
	}
	f, err := src.strategyCrossover(context.Background(), Request{}, engine.Flip{Index: 0, Bar: bar, Time: b.Time[bar], Bars: 1}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	sh := shapeOf(t, render(t, f))
	for _, s := range []string{"close fp64", "close fp32", "up entry 20 fp64", "down entry 20 fp32", "up exit 10 fp64", "down exit 10 fp32"} {
		if !has(sh.Texts, s) {
			t.Errorf("no %q in %q", s, sh.Texts)
		}
	}
	if y := f.panels[0].p.Y.Label.Text; y != "price" {
		t.Errorf("y axis %q", y)
	}
	legendClear(t, f, 0, sc.YMax)
	legendClear(t, f, 1, 1) // the positions: long at 1
}
