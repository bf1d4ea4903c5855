package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseRange(t *testing.T) {
	ok := []struct {
		in     string
		want   Range
		values []int
	}{
		{"20:200:20", Range{20, 200, 20}, []int{20, 40, 60, 80, 100, 120, 140, 160, 180, 200}},
		{"5", Range{5, 5, 1}, []int{5}},
		{"10:20", Range{10, 20, 1}, []int{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}},
		{" 30:240:30 ", Range{30, 240, 30}, []int{30, 60, 90, 120, 150, 180, 210, 240}},
		{"10:25:10", Range{10, 25, 10}, []int{10, 20}}, // stop need not be on the step
		{"7:7:3", Range{7, 7, 3}, []int{7}},
	}
	for _, c := range ok {
		r, err := ParseRange("--hma", c.in)
		if err != nil {
			t.Errorf("ParseRange(%q): %v", c.in, err)
			continue
		}
		if r != c.want || !slices.Equal(r.Values(), c.values) || r.Len() != len(c.values) || r.Last() != c.values[len(c.values)-1] {
			t.Errorf("ParseRange(%q) = %+v values %v, want %+v values %v", c.in, r, r.Values(), c.want, c.values)
		}
	}
	bad := []struct {
		flag, in string
		want     string // in the message, besides the flag name
	}{
		{"--hma", "", "want start:stop:step"},
		{"--hma3", "   ", "is not an integer"},
		{"--hma", "200:20:20", "empty range"},
		{"--hma3", "10:20:0", "step 0 must be positive"},
		{"--hma", "10:20:-5", "step -5 must be positive"},
		{"--hma", "1.5:3", `"1.5" is not an integer`},
		{"--hma3", "a:b:c", `"a" is not an integer`},
		{"--hma", "10:x", `"x" is not an integer`},
		{"--hma", "1:2:3:4", "want start:stop:step"},
		{"--hma3", "20:", `"" is not an integer`},
	}
	for _, c := range bad {
		_, err := ParseRange(c.flag, c.in)
		if err == nil {
			t.Errorf("ParseRange(%q, %q): no error", c.flag, c.in)
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || "--"+fe.Field != c.flag || fe.Value != c.in || !strings.Contains(fe.Err.Error(), c.want) {
			t.Errorf("ParseRange(%q, %q) = %#v (%q), want a FieldError of %s, value %q, saying %q", c.flag, c.in, fe, err, c.flag, c.in, c.want)
		}
	}
}

// TestGridIndexing: combo i is (HMA.At(i / n3), HMA3.At(i % n3)),
// HMA-major, and Index inverts it.
func TestGridIndexing(t *testing.T) {
	g := Grid{HMA: Range{20, 200, 20}, HMA3: Range{30, 240, 30}}
	if g.Len() != 80 {
		t.Fatalf("Len = %d, want 10*8 = 80", g.Len())
	}
	for _, c := range []struct {
		i    int
		want Combo
	}{{0, Combo{HMA: 20, HMA3: 30}}, {1, Combo{HMA: 20, HMA3: 60}}, {7, Combo{HMA: 20, HMA3: 240}}, {8, Combo{HMA: 40, HMA3: 30}}, {79, Combo{HMA: 200, HMA3: 240}}} {
		if got := g.At(c.i); got != c.want {
			t.Errorf("At(%d) = %+v, want %+v", c.i, got, c.want)
		}
	}
	for row := range g.HMA.Len() {
		for col := range g.HMA3.Len() {
			if c := g.At(g.Index(row, col)); c.HMA != g.HMA.At(row) || c.HMA3 != g.HMA3.At(col) {
				t.Fatalf("At(Index(%d, %d)) = %+v", row, col, c)
			}
		}
	}
}

// TestGridValidateBars: SPEC "How many bars are enough": the longest combo
// needs max(W, W3) + 2 bars, and the error names the combo and the counts.
// For hma 200: W = 199 + (round(sqrt 200) - 1) = 199 + 13 = 212; for hma3
// 240: W3 = 2*(120-1) = 238; so 240 bars.
func TestGridValidateBars(t *testing.T) {
	g := Grid{HMA: Range{20, 200, 20}, HMA3: Range{30, 240, 30}}
	if got := BarsNeeded(Combo{HMA: 200, HMA3: 240}); got != 240 {
		t.Errorf("BarsNeeded(200, 240) = %d, want 240", got)
	}
	if got := BarsNeeded(Combo{HMA: 200, HMA3: 30}); got != 214 {
		t.Errorf("BarsNeeded(200, 30) = %d, want 212 + 2", got)
	}
	if err := g.Validate(240); err != nil {
		t.Errorf("Validate(240): %v", err)
	}
	err := g.Validate(239)
	if err == nil {
		t.Fatal("Validate(239): no error")
	}
	for _, w := range []string{"hma 200", "hma3 240", "needs 240 bars", "has 239"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate(239) = %q, want it to contain %q", err, w)
		}
	}
	if err := (Grid{HMA: Range{2, 1 << 21, 1}, HMA3: Range{6, 1 << 20, 1}}).Validate(0); err == nil || !strings.Contains(err.Error(), "combos") {
		t.Errorf("a grid above MaxCombos: err %v", err)
	}
	if err := (Grid{HMA: Range{10, 5, 1}, HMA3: Range{6, 6, 1}}).Validate(0); err == nil || fieldOf(err) != FieldHMA {
		t.Errorf("an empty HMA range: err %v, want a FieldError of hma", err)
	}
}

func TestParseOptions(t *testing.T) {
	if m, err := ParseMode("long-only"); err != nil || m != LongOnly {
		t.Errorf("ParseMode(long-only) = %v, %v", m, err)
	}
	if m, err := ParseMode("LONG-SHORT"); err != nil || m != LongShort {
		t.Errorf("ParseMode(LONG-SHORT) = %v, %v", m, err)
	}
	if _, err := ParseMode("short-only"); fieldOf(err) != FieldMode || !strings.Contains(err.Error(), "want long-short or long-only") {
		t.Errorf("ParseMode(short-only): %v", err)
	}
	for i, name := range []string{"close", "hl2", "hlc3", "ohlc4"} {
		if s, err := ParseSource(name); err != nil || s != Source(i) || s.String() != name {
			t.Errorf("ParseSource(%q) = %v, %v", name, s, err)
		}
	}
	if _, err := ParseSource("typical"); fieldOf(err) != FieldSource || !strings.Contains(err.Error(), "want close") {
		t.Errorf("ParseSource(typical): %v", err)
	}
	if ps, err := ParsePrecisions("both"); err != nil || !slices.Equal(ps, []Precision{FP64, FP32}) {
		t.Errorf("ParsePrecisions(both) = %v, %v (fp64 first)", ps, err)
	}
	if _, err := ParsePrecisions("fp16"); fieldOf(err) != FieldPrecision || !strings.Contains(err.Error(), "want fp64") {
		t.Errorf("ParsePrecisions(fp16): %v", err)
	}
	if f, err := ParseFormulation("prefix"); err != nil || f != Prefix {
		t.Errorf("ParseFormulation(prefix) = %v, %v", f, err)
	}
	for _, p := range []Params{{Fee: -0.1, BarsPerYear: 1}, {Fee: 1, BarsPerYear: 1}, {Fee: 0, BarsPerYear: 0}} {
		if err := p.Validate(); err == nil {
			t.Errorf("Params %+v: no error", p)
		}
	}
	if err := (Params{Fee: DefaultFee, BarsPerYear: 525600}).Validate(); err != nil {
		t.Errorf("default params: %v", err)
	}
	// SPEC: 525,600 one-minute bars a year, 8,760 hourly (24/7 calendar).
	if got := BarsPerYear(time.Minute); got != 525600 {
		t.Errorf("BarsPerYear(1m) = %v", got)
	}
	if got := BarsPerYear(time.Hour); got != 8760 {
		t.Errorf("BarsPerYear(1h) = %v", got)
	}
	if got := BarsPerYear(0); got != 0 {
		t.Errorf("BarsPerYear(0) = %v", got)
	}
}

// fieldOf is the Field of err's *FieldError, "" when it has none.
func fieldOf(err error) string {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}
