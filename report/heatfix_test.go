package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"sweepbench/engine"
)

// labelled is the labelled ticks of axis a of p, over its range.
func labelled(a *plot.Axis) []plot.Tick {
	var out []plot.Tick
	for _, t := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if t.Label != "" {
			out = append(out, t)
		}
	}
	return out
}

// checkGridTicks: every labelled tick of a is at one of vals (a column's
// or row's centre), labelled by that value's text, and there are at
// least two of them (for two values or more) and at most maxGridLabels.
func checkGridTicks(t *testing.T, what string, a *plot.Axis, vals []float64, text []string) {
	t.Helper()
	ts := labelled(a)
	if len(ts) > maxGridLabels || (len(vals) > 1 && len(ts) < 2) || len(ts) == 0 {
		t.Errorf("%s: %d labelled ticks (%v) for %d values", what, len(ts), ts, len(vals))
	}
	for _, tk := range ts {
		k := slices.Index(vals, tk.Value)
		if k < 0 {
			t.Errorf("%s: tick %q at %g is not a grid value (%v)", what, tk.Label, tk.Value, vals)
			continue
		}
		if tk.Label != text[k] {
			t.Errorf("%s: tick at %g labelled %q, want %q", what, tk.Value, tk.Label, text[k])
		}
		if tk.Value < a.Min || tk.Value > a.Max {
			t.Errorf("%s: tick %q outside the grid's range [%g, %g]", what, tk.Label, a.Min, a.Max)
		}
	}
}

func rangeVals(r engine.Range) ([]float64, []string) {
	var v []float64
	var s []string
	for i := 0; i < r.Len(); i++ {
		v = append(v, float64(r.At(i)))
		s = append(s, strconv.Itoa(r.At(i)))
	}
	return v, s
}

// TestHeatTicksOnGrid: a hull heatmap's ticks are the grid's lengths
// (hma3 12:120:12 read 25/75/125, 125 past the last column), whatever
// the blocks; a strategy heatmap's are its parameters' values, for every
// pair of axes.
func TestHeatTicksOnGrid(t *testing.T) {
	black := func(float64) color.Color { return color.Black }
	for _, g := range []engine.Grid{
		{HMA: engine.Range{Start: 10, Stop: 200, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 120, Step: 12}},
		{HMA: engine.Range{Start: 5, Stop: 7, Step: 1}, HMA3: engine.Range{Start: 3, Stop: 300, Step: 3}},
	} {
		for _, b := range []int{1, 3} {
			p := heatPlot(newHeat(g, b, b), "t", black, nil)
			v, s := rangeVals(g.HMA3)
			checkGridTicks(t, "hma3 "+g.HMA3.String(), &p.X, v, s)
			v, s = rangeVals(g.HMA)
			checkGridTicks(t, "hma "+g.HMA.String(), &p.Y, v, s)
		}
	}
	src := memorySource(t, crossSpec())
	g := src.Report.Grid
	all := g.Strategy.Axes()
	for i := range all {
		for j := range all {
			if i == j {
				continue
			}
			h := newStrategyHeat(g, DefaultCells, [2]int{i, j})
			p := heatPlot(h, "t", black, nil)
			checkGridTicks(t, all[j].Name, &p.X, h.ax[1].pos, all[j].Values)
			checkGridTicks(t, all[i].Name, &p.Y, h.ax[0].pos, all[i].Values)
		}
	}
}

// keyLabels is the labels of a heatmap figure's key, bottom to top.
func keyLabels(f *Figure) []string {
	k := &f.panels[1].p.Y
	var out []string
	for _, t := range k.Tick.Marker.Ticks(k.Min, k.Max) {
		out = append(out, t.Label)
	}
	return out
}

// TestDivScale: centred on 0 (white exactly at 0, the sides mirrored),
// values of 0.01 beside one of 0.3 spread over the shades (not all in
// the first of four even steps to 0.3), the largest |value| the top edge;
// an integer count's edges integers.
func TestDivScale(t *testing.T) {
	mid := len(diverging) / 2
	var vals []float64
	for k := 1; k <= 40; k++ {
		vals = append(vals, 0.005+0.0005*float64(k), -0.004-0.0004*float64(k))
	}
	vals = append(vals, 0.292, 0, math.NaN())
	d := newDivScale(vals, false)
	if d.Lim() != 0.292 || d.Level(0) != mid {
		t.Fatalf("lim %g, level of 0 %d", d.Lim(), d.Level(0))
	}
	count := map[int]int{}
	for _, v := range vals {
		if v == v && v != 0 {
			count[d.Level(v)]++
			if l := d.Level(v); (v > 0) != (l > mid) || d.Level(-v) != 2*mid-l {
				t.Errorf("level of %g is %d, of %g %d: not diverging about %d", v, l, -v, d.Level(-v), mid)
			}
		}
	}
	if len(count) < 6 {
		t.Errorf("the values take %d shades (%v), want them spread", len(count), count)
	}
	for l, n := range count {
		if n > len(vals)/3 {
			t.Errorf("shade %d holds %d of %d values", l, n, len(vals))
		}
	}
	for _, c := range []struct {
		vals []float64
		want []float64
	}{
		{[]float64{1, -3, 2, 0}, []float64{1, 2, 3}},
		{[]float64{1, 1, 1, 2, 7, -9, 13, 5, 5, 6}, nil},
	} {
		d := newDivScale(c.vals, true)
		for _, e := range d.edges {
			if e != math.Trunc(e) {
				t.Errorf("%v: edge %g not an integer", c.vals, e)
			}
		}
		if c.want != nil && !slices.Equal(d.edges, c.want) {
			t.Errorf("%v: edges %v, want %v", c.vals, d.edges, c.want)
		}
	}
}

// TestParityKeys: the dn key's labels are integers (no half steps) from
// -max|dn| to +max|dn|, symmetric about 0; the dPnL key's and the
// fp32 - fp64 heatmap's are symmetric about 0 up to the largest |value|,
// their captions say how (no "white is 0" over near-white shades).
func TestParityKeys(t *testing.T) {
	src := robustSource(t)
	ctx := context.Background()
	p := src.Report.Parity
	for _, r := range []Request{{Name: "parity-dn"}, {Name: "parity-dpnl"}, {Name: "heatmap", Of: "diff"}} {
		f, err := Make(ctx, src, r)
		if err != nil {
			t.Fatal(err)
		}
		ls := keyLabels(f)
		n := len(ls)
		if n%2 != 1 || strings.TrimLeft(ls[n/2], "+") != "0" {
			t.Fatalf("%s: key %q not centred on 0", r.Name, ls)
		}
		for i := 0; i < n/2; i++ {
			if strings.TrimPrefix(ls[i], "-") != strings.TrimPrefix(ls[n-1-i], "+") || ls[i][0] != '-' || ls[n-1-i][0] != '+' {
				t.Errorf("%s: key %q not symmetric", r.Name, ls)
			}
		}
		if !strings.Contains(f.Caption, "white is exactly 0") || !strings.Contains(f.Caption, "blue fp32 below fp64, red above") {
			t.Errorf("%s: caption %q", r.Name, f.Caption)
		}
		if r.Name == "parity-dn" {
			for _, l := range ls {
				if _, err := strconv.Atoi(l); err != nil {
					t.Errorf("dn key label %q is not an integer (%q)", l, ls)
				}
			}
			if ls[n-1] != "+"+itoa(p.MaxAbsDn) {
				t.Errorf("dn key tops at %s, max |dn| %d", ls[n-1], p.MaxAbsDn)
			}
		}
	}
}

// svgTitles is the text of every <title> of svg, in order.
func svgTitles(t *testing.T, svg []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var out []string
	in := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			in = e.Name.Local == "title"
		case xml.CharData:
			if in {
				out = append(out, string(e))
			}
		case xml.EndElement:
			in = false
		}
	}
}

// TestHeatCellTitles: every cell of every heatmap of the report has a
// hover <title> naming its combo's parameters and its value, in the
// figure's SVG and in the HTML page (no script).
func TestHeatCellTitles(t *testing.T) {
	src := robustSource(t)
	ctx := context.Background()
	g := src.Report.Grid
	for _, r := range []Request{{Name: "heatmap"}, {Name: "heatmap", Of: "diff"}, {Name: "parity-dn"}, {Name: "parity-dpnl"}} {
		f, err := Make(ctx, src, r)
		if err != nil {
			t.Fatal(err)
		}
		ts := svgTitles(t, render(t, f))
		cells := f.hover.rects
		if len(ts) != len(cells) || len(cells) != g.HMA.Len()*g.HMA3.Len() {
			t.Fatalf("%s %s: %d titles, %d cells, grid %d x %d", r.Name, r.Of, len(ts), len(cells), g.HMA.Len(), g.HMA3.Len())
		}
		want0 := fmt.Sprintf("hma %d, hma3 %d: ", g.HMA.At(0), g.HMA3.At(0))
		last := fmt.Sprintf("hma %d, hma3 %d: ", g.HMA.At(g.HMA.Len()-1), g.HMA3.At(g.HMA3.Len()-1))
		if !strings.HasPrefix(ts[0], want0) || !strings.HasPrefix(ts[len(ts)-1], last) {
			t.Errorf("%s: titles %q ... %q", r.Name, ts[0], ts[len(ts)-1])
		}
		for _, s := range ts {
			_, v, _ := strings.Cut(s, ": ")
			v, _, _ = strings.Cut(v, ",")
			if _, err := strconv.ParseFloat(v, 64); err != nil && v != "no value" && v != "constrained out" {
				t.Errorf("%s: title %q has no value", r.Name, s)
			}
		}
	}
	var b bytes.Buffer
	if _, err := WriteHTML(ctx, &b, src, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<title>hma "); n < 4*g.Len() {
		t.Errorf("the page has %d cell titles, want %d (4 heatmaps of %d cells)", n, 4*g.Len(), g.Len())
	}
	if strings.Contains(b.String(), "<script") {
		t.Error("the page has a script")
	}
	// A strategy heatmap's cells name their parameters.
	ss := memorySource(t, crossSpec())
	f, err := Make(ctx, ss, Request{Name: "heatmap"})
	if err != nil {
		t.Fatal(err)
	}
	ts := svgTitles(t, render(t, f))
	axes := ss.Report.Grid.Strategy.Axes()
	if len(ts) == 0 || !strings.HasPrefix(ts[0], axes[0].Name+" "+axes[0].Values[0]+", "+axes[1].Name+" "+axes[1].Values[0]) {
		t.Errorf("strategy heatmap titles %q", ts)
	}
}
