package tui

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// TestMetricsCellsWhole (issue 15, defect 7): at 80x24 and 120x40, in the
// compact and the full layout, for every metric chosen, every number the
// Metrics pane shows is whole: read back from the screen it equals the
// combo's value to the decimals it shows; a column has one number of
// decimals, counts and their differences none; no "-0".
func TestMetricsCellsWhole(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprint(sz[0], "x", sz[1]), func(t *testing.T) {
			d := newDriver(t, smallFlags(), sz[0], sz[1])
			m := d.m
			d.key("enter")
			d.settle()
			if !m.results.Metrics().Compact() {
				t.Fatal("the narrow pane does not default to the compact layout")
			}
			for _, layout := range []string{"compact", "full"} {
				if layout == "full" {
					d.key("c")
					if m.results.Metrics().Compact() {
						t.Fatal("c did not switch to the full layout")
					}
				}
				for range len(common.Columns()) {
					checkMetricsCells(t, m, layout)
					d.key("m")
				}
			}
		})
	}
}

var negZero = regexp.MustCompile(`^-0(\.0*)?$`)

// checkMetricsCells reads the Metrics pane's table back: each cell is
// found under the title that ends where it ends (cells and titles are
// right-aligned).
func checkMetricsCells(t *testing.T, m *Model, layout string) {
	t.Helper()
	view := m.results.Metrics().View()
	lines := strings.Split(view, "\n")
	header := lines[0]
	decimals := map[string]int{}
	for _, line := range lines[1:] {
		toks := fields(line)
		if len(toks) < 3 || toks[0].end > 3 {
			continue // not a row (help line, blank)
		}
		if toks[0].end <= 3 {
			toks = toks[1:] // the cursor marker
		}
		hma, err1 := strconv.Atoi(toks[0].s)
		hma3, err2 := strconv.Atoi(toks[1].s)
		if err1 != nil || err2 != nil {
			continue
		}
		idx := -1
		for i := range m.state.Results.Grid.Len() {
			if c := m.state.Results.Grid.At(i); c.HMA == hma && c.HMA3 == hma3 {
				idx = i
			}
		}
		if idx < 0 {
			t.Fatalf("%s, %s: row %q names no combo", layout, m.state.Metric, line)
		}
		prev := 3
		for _, tok := range toks {
			title := strings.TrimSpace(header[prev:tok.end])
			prev = tok.end
			name, prec, delta := titleColumn(m, title)
			if name == "hma" || name == "hma3" {
				continue
			}
			if negZero.MatchString(tok.s) {
				t.Errorf("%s, %s: column %q shows %q", layout, m.state.Metric, title, tok.s)
			}
			want, ok := shownValue(m, idx, name, prec, delta)
			if !ok {
				if tok.s != "-" {
					t.Errorf("%s: column %q of a combo without the value shows %q", layout, title, tok.s)
				}
				continue
			}
			s := strings.ReplaceAll(strings.TrimPrefix(tok.s, "+"), ",", "")
			got, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Errorf("%s, %s: column %q shows %q, not a number", layout, m.state.Metric, title, tok.s)
				continue
			}
			dec := 0
			if i := strings.IndexByte(s, '.'); i >= 0 {
				dec = len(s) - i - 1
			}
			if common.IsCount(name) && (dec > 0 || strings.ContainsAny(s, "e")) {
				t.Errorf("%s: count column %q shows %q", layout, title, tok.s)
			}
			if d, seen := decimals[title]; seen && d != dec {
				t.Errorf("%s, %s: column %q has %d and %d decimals (%q)", layout, m.state.Metric, title, d, dec, tok.s)
			}
			decimals[title] = dec
			if tol := 0.5*math.Pow(10, -float64(dec)) + 1e-9*math.Abs(want); !(math.Abs(got-want) <= tol) && !strings.Contains(s, "e") {
				t.Errorf("%s, %s: column %q of hma %d x hma3 %d shows %q, the value is %v (cut?)\n%s",
					layout, m.state.Metric, title, hma, hma3, tok.s, want, view)
			}
		}
	}
}

type field struct {
	s   string
	end int
}

// fields are the words of line with the cell each ends at.
func fields(line string) []field {
	var out []field
	for _, loc := range regexp.MustCompile(`\S+`).FindAllStringIndex(line, -1) {
		out = append(out, field{line[loc[0]:loc[1]], loc[1]})
	}
	return out
}

// titleColumn is the column a title heads: its name, precision and
// whether it is the chosen metric's difference.
func titleColumn(m *Model, title string) (string, engine.Precision, bool) {
	prec := m.results.Metrics().Prec()
	short := map[string]string{"trades": "total_trades", "return%": "total_return", "maxdd%": "max_drawdown"}
	switch {
	case title == "d 32-64":
		return m.state.Metric, prec, true
	case strings.HasSuffix(title, " fp64"):
		return strings.TrimSuffix(strings.TrimSuffix(title, " fp64"), "%"), engine.FP64, false
	case strings.HasSuffix(title, " fp32"):
		return strings.TrimSuffix(strings.TrimSuffix(title, " fp32"), "%"), engine.FP32, false
	case short[title] != "":
		return short[title], prec, false
	}
	return strings.TrimSuffix(title, "%"), prec, false
}

// shownValue is what a cell should read, computed here from the results:
// a fraction as a percentage, a difference fp32 - fp64 in points.
func shownValue(m *Model, idx int, name string, p engine.Precision, delta bool) (float64, bool) {
	r := m.state.Results
	scale := 1.0
	if common.IsPercent(name) {
		scale = 100
	}
	if !delta {
		v, ok := r.Value(idx, name, p)
		return v * scale, ok
	}
	v64, ok64 := r.Value(idx, name, engine.FP64)
	v32, ok32 := r.Value(idx, name, engine.FP32)
	if v64 == v32 {
		return 0, ok64 && ok32
	}
	return (v32 - v64) * scale, ok64 && ok32
}

// TestCompactPreset: at 80 columns the Metrics pane shows trades, return,
// Sharpe, max DD and dn whole, with no column out of view; v switches to
// the full layout and back.
func TestCompactPreset(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	m := d.m
	d.key("enter")
	d.settle()
	header := strings.Split(m.results.Metrics().View(), "\n")[0]
	for _, title := range []string{"hma", "hma3", "trades", "return%", "sharpe", "maxdd%", "dn"} {
		if !strings.Contains(" "+header+" ", " "+title+" ") {
			t.Errorf("the compact header lacks %q: %q", title, header)
		}
	}
	if strings.TrimSpace(header[:3]) != "" {
		t.Errorf("columns out of view in the compact layout at 80 columns: %q", header)
	}
	d.key("c")
	if m.results.Metrics().Compact() || !strings.Contains(m.results.Metrics().View(), "sharpe fp32") {
		t.Fatalf("c did not show the full layout:\n%s", m.results.Metrics().View())
	}
	d.key("c")
	if !m.results.Metrics().Compact() {
		t.Fatal("c did not switch back to the compact layout")
	}
	// The filter takes the compact titles.
	d.key("/")
	d.key("trades>500")
	d.key("enter")
	if err := m.results.Metrics().Err(); err != nil || !strings.HasPrefix(m.results.Metrics().Title(), "Metrics: 5 of 9") {
		t.Fatalf("filter trades>500: %v, %q", err, m.results.Metrics().Title())
	}
}
