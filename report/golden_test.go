package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sweepbench/engine"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// svgShape is what a golden file keeps of an SVG: how many elements of
// each kind and every text in document order (titles, axis labels, tick
// labels: the axis ranges), not the bytes (coordinates move with the
// plotting library's layout).
type svgShape struct {
	Elements map[string]int `json:"elements"`
	Texts    []string       `json:"texts"`
}

func shapeOf(t *testing.T, svg []byte) svgShape {
	t.Helper()
	sh := svgShape{Elements: map[string]int{}}
	d := xml.NewDecoder(bytes.NewReader(svg))
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			sh.Elements[e.Name.Local]++
			inText = e.Name.Local == "text"
		case xml.CharData:
			if s := strings.TrimSpace(string(e)); inText && s != "" {
				sh.Texts = append(sh.Texts, s)
			}
		case xml.EndElement:
			inText = false
		}
	}
	return sh
}

// checkGolden compares sh with testdata/figures/name.json (-update
// rewrites it).
func checkGolden(t *testing.T, name string, sh svgShape) {
	t.Helper()
	path := filepath.Join("testdata", "figures", name+".json")
	got, err := json.MarshalIndent(sh, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./report -run Golden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: the SVG's structure changed (go test ./report -run Golden -update, and review the diff)\ngot:\n%s", name, got)
	}
}

func render(t *testing.T, f *Figure) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func has(texts []string, s string) bool {
	return slices.ContainsFunc(texts, func(x string) bool { return strings.Contains(x, s) })
}

// TestFiguresGolden draws every figure of the robustness session and
// checks its SVG's structure against its golden file, and the facts each
// must show whatever the layout: the cells and bands drawn, titles, axis
// labels and ranges from the session's own numbers.
func TestFiguresGolden(t *testing.T) {
	src := robustSource(t)
	ctx := context.Background()
	g := src.Report.Grid // 10 x 10 combos
	p := src.Report.Parity
	sel, ok := src.Selected()
	if !ok {
		t.Fatal("no selected combo")
	}
	cases := []struct {
		golden string
		req    Request
		check  func(t *testing.T, f *Figure, sh svgShape)
	}{
		{"heatmap-sharpe-fp64", Request{Name: "heatmap"}, func(t *testing.T, f *Figure, sh svgShape) {
			m := f.panels[0].p
			// One path per cell, the grid's lengths +- half a step.
			if m.X.Min != 6 || m.X.Max != 126 || m.Y.Min != 5 || m.Y.Max != 105 {
				t.Errorf("axes x [%g, %g] y [%g, %g], want x [6, 126] (hma3 12..120 step 12) y [5, 105]", m.X.Min, m.X.Max, m.Y.Min, m.Y.Max)
			}
			if !has(sh.Texts, "sharpe fp64 over the grid") || !has(sh.Texts, "HMA3 length (bars)") || !has(sh.Texts, "HMA length (bars)") {
				t.Errorf("texts %q", sh.Texts)
			}
			c := sel.Combo
			if !has(sh.Texts, "selected: hma "+itoa(c.HMA)+", hma3 "+itoa(c.HMA3)) || !has(sh.Texts, "plateau best: hma") || !has(sh.Texts, "grey: constrained out") {
				t.Errorf("the marks are not named: %q", sh.Texts)
			}
			// The key's edges are the quantiles of the 100 Sharpe ratios:
			// its first and last the least and largest.
			lo, hi := 1e300, -1e300
			hm := src.Run(engine.FP64).Summary.Heatmap("sharpe")
			for r := 0; r < hm.Rows; r++ {
				for c := 0; c < hm.Cols; c++ {
					lo, hi = min(lo, hm.Cell(r, c).Mean), max(hi, hm.Cell(r, c).Mean)
				}
			}
			if !has(sh.Texts, g3(lo)) || !has(sh.Texts, g3(hi)) {
				t.Errorf("the key does not span %s .. %s: %q", g3(lo), g3(hi), sh.Texts)
			}
		}},
		{"heatmap-total_return-diff", Request{Name: "heatmap", Metric: "total_return", Of: "diff"}, func(t *testing.T, f *Figure, sh svgShape) {
			if !has(sh.Texts, "total_return, fp32 - fp64 over the grid") {
				t.Errorf("texts %q", sh.Texts)
			}
		}},
		{"parity-dn", Request{Name: "parity-dn"}, func(t *testing.T, f *Figure, sh svgShape) {
			// The key runs from -max|dn| to +max|dn|.
			if !has(sh.Texts, "+"+itoa(p.MaxAbsDn)) || !has(sh.Texts, "-"+itoa(p.MaxAbsDn)) {
				t.Errorf("the key does not span +-%d: %q", p.MaxAbsDn, sh.Texts)
			}
		}},
		{"parity-dpnl", Request{Name: "parity-dpnl"}, nil},
		{"flip-margins", Request{Name: "flip-margins"}, func(t *testing.T, f *Figure, sh svgShape) {
			if !has(sh.Texts, "borderline tolerance 1e-05") || !has(sh.Texts, "flips listed ("+itoa(len(p.Flips))+" of "+itoa(p.FlipCount)+")") {
				t.Errorf("texts %q", sh.Texts)
			}
			m := f.panels[0].p
			if m.X.Max < engine.DefaultBorderline {
				t.Errorf("the axis ends at %g, before the tolerance", m.X.Max)
			}
		}},
		{"indicator-error", Request{Name: "indicator-error"}, func(t *testing.T, f *Figure, sh svgShape) {
			if !has(sh.Texts, "collapse limit 0.0001") || !has(sh.Texts, "1e-04") {
				t.Errorf("texts %q", sh.Texts)
			}
		}},
		{"crossover", Request{Name: "crossover"}, func(t *testing.T, f *Figure, sh svgShape) {
			fl := p.Flips[0]
			top, bottom := f.panels[0].p, f.panels[1].p
			if top.X.Min != float64(fl.Bar-DefaultWindow) || top.X.Max != float64(fl.Bar+DefaultWindow) || bottom.X.Min != top.X.Min {
				t.Errorf("x [%g, %g], want the flip's bar %d +- %d", top.X.Min, top.X.Max, fl.Bar, DefaultWindow)
			}
			for _, s := range []string{"h fp64", "h3 fp32", "short", "long", "at bar " + itoa(fl.Bar)} {
				if !has(sh.Texts, s) {
					t.Errorf("no %q in %q", s, sh.Texts)
				}
			}
		}},
		{"equity", Request{Name: "equity"}, func(t *testing.T, f *Figure, sh svgShape) {
			if !has(sh.Texts, "Equity of hma "+itoa(sel.HMA)+" x hma3 "+itoa(sel.HMA3)) || !has(sh.Texts, "buy and hold") ||
				!has(sh.Texts, "drawdown (%)") || !has(sh.Texts, "long entry") {
				t.Errorf("texts %q", sh.Texts)
			}
			// The legend gives the saved run's return, recomputed bit for bit.
			if !has(sh.Texts, "fp64 (return "+pct(sel.TotalReturn)+")") {
				t.Errorf("no fp64 return %s in %q", pct(sel.TotalReturn), sh.Texts)
			}
		}},
		{"pbo-logits", Request{Name: "pbo-logits"}, func(t *testing.T, f *Figure, sh svgShape) {
			if !has(sh.Texts, "logits of 70 splits") { // C(8, 4)
				t.Errorf("texts %q", sh.Texts)
			}
			e := src.Robust.LogitHistogram.Edges
			if m := f.panels[0].p; m.X.Min != e[0] || m.X.Max != e[len(e)-1] {
				t.Errorf("x [%g, %g], want the histogram's [%g, %g]", m.X.Min, m.X.Max, e[0], e[len(e)-1])
			}
		}},
		{"is-oos", Request{Name: "is-oos"}, func(t *testing.T, f *Figure, sh svgShape) {
			if !has(sh.Texts, "In sample vs out of sample (sharpe)") || !has(sh.Texts, "OOS = ") {
				t.Errorf("texts %q", sh.Texts)
			}
			if n := len(src.Robust.ISOOS.IS); n == 0 || n > 70 {
				t.Errorf("%d points for 70 splits", n)
			}
		}},
		{"wf-equity", Request{Name: "wf-equity"}, func(t *testing.T, f *Figure, sh svgShape) {
			if !has(sh.Texts, "Walk-forward anchored") {
				t.Errorf("texts %q", sh.Texts)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			f, err := Make(ctx, src, c.req)
			if err != nil {
				t.Fatal(err)
			}
			sh := shapeOf(t, render(t, f))
			if sh.Elements["svg"] != 1 || sh.Elements["text"] == 0 || sh.Elements["path"] == 0 {
				t.Errorf("elements %v", sh.Elements)
			}
			if c.check != nil {
				c.check(t, f, sh)
			}
			checkGolden(t, c.golden, sh)
			if strings.HasPrefix(c.req.Name, "heatmap") || strings.HasPrefix(c.req.Name, "parity-d") {
				// 100 cells, the key's bands, and the axes' lines and marks.
				if sh.Elements["path"] < g.Len()+Levels {
					t.Errorf("%d paths for %d cells", sh.Elements["path"], g.Len())
				}
			}
		})
	}
}

func itoa(v int) string { return strconv.Itoa(v) }

func pct(v float64) string { return fmt.Sprintf("%+.2f%%", 100*v) }
