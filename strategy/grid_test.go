package strategy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func mustRange(t *testing.T, text string, integer bool) Range {
	t.Helper()
	r, err := ParseRange("p", text, integer)
	if err != nil {
		t.Fatalf("ParseRange(%q): %v", text, err)
	}
	return r
}

func values(r Range) []string {
	var out []string
	for k := 0; k < r.Len(); k++ {
		out = append(out, r.At(k).String())
	}
	return out
}

func TestDecimalRangeExact(t *testing.T) {
	r := mustRange(t, "0.1:0.3:0.1", false)
	if got := values(r); strings.Join(got, " ") != "0.1 0.2 0.3" {
		t.Fatalf("0.1:0.3:0.1 = %v, want 0.1 0.2 0.3", got)
	}
	for k, text := range []string{"0.1", "0.2", "0.3"} {
		want64, _ := strconv.ParseFloat(text, 64)
		w32, _ := strconv.ParseFloat(text, 32)
		if got := r.At(k).Float64(); got != want64 {
			t.Errorf("At(%d).Float64() = %v, want %v", k, got, want64)
		}
		if got := r.At(k).Float32(); got != float32(w32) {
			t.Errorf("At(%d).Float32() = %v, want %v", k, got, float32(w32))
		}
	}
	// Repeated addition would give 0.30000000000000004 for the third.
	sum, step := 0.1, 0.1
	sum += step
	sum += step
	if sum == r.At(2).Float64() {
		t.Fatal("the third value equals the float sum, not 0.3")
	}
	// float32 of "0.1" from the text, and a text where float32(float64)
	// rounds twice: 1.00000005960464477550 lies just above the midpoint of
	// 1 and 1+2^-23, its float64 is the midpoint itself, which rounds to 1.
	d, _ := ParseDecimal("0.1")
	if d.Float32() != float32(0.1) {
		t.Errorf("Float32(0.1) = %v", d.Float32())
	}
	twice, err := ParseDecimal("1.0000000596046448")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := strconv.ParseFloat("1.0000000596046448", 32)
	if twice.Float32() != float32(w) {
		t.Errorf("Float32(%s) = %v, want %v", twice, twice.Float32(), float32(w))
	}
	if twice.Float32() == float32(twice.Float64()) {
		t.Errorf("the double-rounding case does not round twice: %v", twice.Float32())
	}

	cases := map[string]string{
		"1.5:3:0.25":   "1.5 1.75 2 2.25 2.5 2.75 3",
		"0:1:0.5":      "0 0.5 1",
		"-0.5:0.5:0.5": "-0.5 0 0.5",
		"10:62:5":      "10 15 20 25 30 35 40 45 50 55 60",
		"3:5":          "3 4 5",
		"7":            "7",
		"2.50":         "2.5",
		"0.3:0.3":      "0.3",
	}
	for text, want := range cases {
		if got := strings.Join(values(mustRange(t, text, false)), " "); got != want {
			t.Errorf("%s = %s, want %s", text, got, want)
		}
	}
	if r := mustRange(t, "10:62:5", true); r.String() != "10:60:5" || r.Len() != 11 {
		t.Errorf("10:62:5 String %q Len %d", r.String(), r.Len())
	}
	if r := mustRange(t, "7", true); r.String() != "7" || r.Len() != 1 {
		t.Errorf("7 String %q Len %d", r.String(), r.Len())
	}
}

func TestDecimalText(t *testing.T) {
	for in, want := range map[string]string{"0.1": "0.1", "2": "2", "-0.5": "-0.5", "2.000": "2", "+3": "3", ".5": "0.5", "-0": "0", "0.000": "0", "0012.50": "12.5"} {
		d, err := ParseDecimal(in)
		if err != nil {
			t.Errorf("ParseDecimal(%q): %v", in, err)
			continue
		}
		if d.String() != want {
			t.Errorf("ParseDecimal(%q) = %s, want %s", in, d, want)
		}
	}
	for _, in := range []string{"", "-", ".", "1e3", "nan", "inf", "1.2.3", "0x10", "1,5", "123456789012345678"} {
		if _, err := ParseDecimal(in); err == nil {
			t.Errorf("ParseDecimal(%q) accepted", in)
		}
	}
}

func wantParamErr(t *testing.T, err error, param string) {
	t.Helper()
	var pe *ParamError
	if !errors.As(err, &pe) {
		t.Fatalf("want *ParamError for %s, got %v", param, err)
	}
	if pe.Param != param {
		t.Fatalf("ParamError.Param = %q, want %q (%v)", pe.Param, param, err)
	}
	if !errors.Is(err, ErrParam) {
		t.Fatalf("%v does not wrap ErrParam", err)
	}
}

func TestRangeErrors(t *testing.T) {
	for _, c := range []struct {
		text    string
		integer bool
	}{
		{"", false},
		{"1:2:3:4", false},
		{"5:1", false},          // empty
		{"1:5:0", false},        // step 0
		{"1:5:-1", false},       // negative step
		{"1.5:3", true},         // not an integer
		{"1:3:0.5", true},       // step not an integer
		{"a:3", false},          // not a number
		{"1:2:x", false},        // not a number
		{"0:100000000:1", true}, // more than MaxRangeLen values
		{"0:1:0.00000000000000001", false},
		{"1:2:1e-3", false},
	} {
		_, err := ParseRange("length", c.text, c.integer)
		if err == nil {
			t.Errorf("ParseRange(%q, %v) accepted", c.text, c.integer)
			continue
		}
		wantParamErr(t, err, "length")
	}
}

func TestParseLeg(t *testing.T) {
	l, err := ParseLeg("fast", "ema:5:50:5")
	if err != nil || l.Kind != EMA || l.Lengths.Len() != 10 || l.String() != "ema:5:50:5" {
		t.Fatalf("ema:5:50:5 = %+v, %v", l, err)
	}
	l, err = ParseLeg("slow", "sma:20")
	if err != nil || l.Kind != SMA || strings.Join(values(l.Lengths), " ") != "20" {
		t.Fatalf("sma:20 = %+v, %v", l, err)
	}
	l, err = ParseLeg("slow", "price")
	if err != nil || l.Kind != Price || strings.Join(values(l.Lengths), " ") != "1" || l.String() != "price" {
		t.Fatalf("price = %+v, %v", l, err)
	}
	if _, err := ParseLeg("fast", "hma:2:10:2"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseLeg("fast", "hma3:6"); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "foo:5", "ema", "price:5", "hma:1:10", "hma3:5:10", "sma:0:10", "ema:5:1", "ema:1.5"} {
		_, err := ParseLeg("fast", text)
		if err == nil {
			t.Errorf("ParseLeg(%q) accepted", text)
			continue
		}
		wantParamErr(t, err, "fast")
	}
}

func comboText(c Combo) string {
	var parts []string
	for i, v := range c.Values {
		if c.Kinds[i] != "" {
			parts = append(parts, string(c.Kinds[i])+":"+v.String())
		} else {
			parts = append(parts, v.String())
		}
	}
	return strings.Join(parts, " ")
}

func listGrid(g Grid) []string {
	var out []string
	for i := 0; i < g.Len(); i++ {
		out = append(out, comboText(g.At(i)))
	}
	return out
}

func TestGridSmallByHand(t *testing.T) {
	g, err := NewGrid("zscore", map[string]string{"length": "10:20:10", "entry": "1.5:2:0.5", "exit": "0:0.5:0.5"}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"10 1.5 0", "10 1.5 0.5", "10 2 0", "10 2 0.5",
		"20 1.5 0", "20 1.5 0.5", "20 2 0", "20 2 0.5",
	}
	if got := listGrid(g); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("grid = %v\nwant %v", got, want)
	}
	if g.Len() != 8 || g.Dropped() != 0 {
		t.Fatalf("Len %d Dropped %d", g.Len(), g.Dropped())
	}
	if s := g.String(); s != "length 10:20:10 x entry 1.5:2:0.5 x exit 0:0.5:0.5" {
		t.Fatalf("String = %q", s)
	}
}

func TestGridRoundTrip3D(t *testing.T) {
	g, err := NewGrid("rsi", map[string]string{"length": "7:28:7", "lower": "20:35:5", "upper": "65:80:5"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 4*4*4 {
		t.Fatalf("Len = %d", g.Len())
	}
	// Last axis fastest: index = (i_len*4 + i_lower)*4 + i_upper.
	for il := 0; il < 4; il++ {
		for ilo := 0; ilo < 4; ilo++ {
			for iu := 0; iu < 4; iu++ {
				i := (il*4+ilo)*4 + iu
				c := g.At(i)
				want := fmt.Sprintf("%d %d %d", 7+7*il, 20+5*ilo, 65+5*iu)
				if comboText(c) != want || c.Index != i {
					t.Fatalf("At(%d) = %s (index %d), want %s", i, comboText(c), c.Index, want)
				}
				if back := g.Index(c); back != i {
					t.Fatalf("Index(At(%d)) = %d", i, back)
				}
			}
		}
	}
	// A value off the grid has no index.
	c := g.At(5)
	c.Values[2], _ = ParseDecimal("66")
	if g.Index(c) != -1 {
		t.Fatal("Index of an off-grid value")
	}
}

func TestHullDefaultIndexIsToday(t *testing.T) {
	g, err := NewGrid("hull", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	// engine's default 20:200:20 x 30:240:30: index = i_hma*n_hma3 + i_hma3.
	if g.Len() != 10*8 {
		t.Fatalf("Len = %d", g.Len())
	}
	if got := comboText(g.At(3*8 + 5)); got != "80 180" {
		t.Fatalf("At(29) = %s", got)
	}
}

func TestFastBelowSlowByHand(t *testing.T) {
	g, err := NewGrid("cross", map[string]string{"fast": "ema:5:20:5", "slow": "sma:10:20:5"}, true)
	if err != nil {
		t.Fatal(err)
	}
	// fast 5 10 15 20 x slow 10 15 20: kept where fast < slow.
	want := []string{
		"ema:5 sma:10", "ema:5 sma:15", "ema:5 sma:20",
		"ema:10 sma:15", "ema:10 sma:20",
		"ema:15 sma:20",
	}
	if got := listGrid(g); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("grid = %v\nwant %v", got, want)
	}
	if g.Len() != 6 || g.Dropped() != 12-6 {
		t.Fatalf("Len %d Dropped %d", g.Len(), g.Dropped())
	}
	for i := 0; i < g.Len(); i++ {
		if back := g.Index(g.At(i)); back != i {
			t.Fatalf("Index(At(%d)) = %d", i, back)
		}
	}
	// A dropped combo has no index.
	c := g.At(0)
	c.Values[0], _ = ParseDecimal("20")
	if g.Index(c) != -1 {
		t.Fatal("a dropped combo has an index")
	}
	if s := g.String(); s != "fast ema:5:20:5 x slow sma:10:20:5 (fast < slow)" {
		t.Fatalf("String = %q", s)
	}

	// Without the restriction: all 12, last axis fastest.
	full, err := NewGrid("cross", map[string]string{"fast": "ema:5:20:5", "slow": "sma:10:20:5"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if full.Len() != 12 || full.Dropped() != 0 || comboText(full.At(4)) != "ema:10 sma:15" {
		t.Fatalf("full Len %d At(4) %s", full.Len(), comboText(full.At(4)))
	}

	// price counts as length 1: price < sma:1 is false, price < sma:2 true.
	p, err := NewGrid("cross", map[string]string{"fast": "price", "slow": "sma:1:3"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := listGrid(p); strings.Join(got, "|") != "price:1 sma:2|price:1 sma:3" || p.Dropped() != 1 {
		t.Fatalf("price grid = %v, dropped %d", got, p.Dropped())
	}
	// Everything dropped.
	e, err := NewGrid("cross", map[string]string{"fast": "sma:30:40:10", "slow": "sma:10:20:10"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if e.Len() != 0 || e.Dropped() != 4 {
		t.Fatalf("Len %d Dropped %d", e.Len(), e.Dropped())
	}
}

func TestFastBelowSlowDefaultMatchesBruteForce(t *testing.T) {
	g, err := NewGrid("cross", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := NewGrid("cross", nil, false)
	var kept []string
	for i := 0; i < full.Len(); i++ {
		c := full.At(i)
		if c.Values[0].Cmp(c.Values[1]) < 0 {
			kept = append(kept, comboText(c))
		}
	}
	if got := listGrid(g); strings.Join(got, "|") != strings.Join(kept, "|") {
		t.Fatalf("restricted grid differs from the brute-force filter")
	}
	if g.Dropped() != full.Len()-len(kept) {
		t.Fatalf("Dropped %d, want %d", g.Dropped(), full.Len()-len(kept))
	}
}

func TestGridErrors(t *testing.T) {
	for _, c := range []struct {
		family string
		given  map[string]string
		fbs    bool
		param  string
	}{
		{"nope", nil, false, "strategy"},
		{"zscore", map[string]string{"lenght": "10"}, false, "lenght"},
		{"zscore", map[string]string{"length": "1:10"}, false, "length"},
		{"zscore", map[string]string{"entry": "0:1:0.5"}, false, "entry"},
		{"zscore", map[string]string{"entry": "1:2", "exit": "0:1"}, false, "exit"},  // exit 1 = entry 1
		{"zscore", map[string]string{"entry": "1:2", "exit": "-1:0"}, false, "exit"}, // exit -1 = -entry
		{"zscore", map[string]string{"length": "10.5"}, false, "length"},
		{"breakout", map[string]string{"entry": "0:10"}, false, "entry"},
		{"breakout", map[string]string{"exit": "0"}, false, "exit"},
		{"rsi", map[string]string{"length": "1"}, false, "length"},
		{"rsi", map[string]string{"lower": "0:10"}, false, "lower"},
		{"rsi", map[string]string{"lower": "20:70:5"}, false, "lower"}, // 70 >= upper 65
		{"rsi", map[string]string{"upper": "65:100:5"}, false, "upper"},
		{"hull", map[string]string{"hma": "1:10"}, false, "hma"},
		{"hull", map[string]string{"hma3": "5:10"}, false, "hma3"},
		{"cross", map[string]string{"fast": "wma"}, false, "fast"},
		{"cross", map[string]string{"slow": "hma:1:5"}, false, "slow"},
		{"zscore", nil, true, "fast-below-slow"},
		{"zscore", map[string]string{"length": "2:16000000", "entry": "0.001:100:0.001", "exit": "0"}, false, "grid"},
	} {
		_, err := NewGrid(c.family, c.given, c.fbs)
		if err == nil {
			t.Errorf("NewGrid(%s, %v) accepted", c.family, c.given)
			continue
		}
		wantParamErr(t, err, c.param)
	}
	_, err := NewGrid("zscore", map[string]string{"lenght": "10"}, false)
	if !strings.Contains(err.Error(), "length, entry, exit") {
		t.Errorf("unknown parameter error does not list the parameters: %v", err)
	}
}

func TestDefaultGrids(t *testing.T) {
	want := map[string]string{
		"hull":     "hma 20:200:20 x hma3 30:240:30",
		"cross":    "fast ema:5:50:5 x slow sma:20:200:10",
		"zscore":   "length 10:60:5 x entry 1.5:3:0.25 x exit 0:1:0.5",
		"breakout": "entry 10:100:10 x exit 5:50:5",
		"rsi":      "length 7:28:7 x lower 20:35:5 x upper 65:80:5",
	}
	for _, f := range Families {
		g, err := NewGrid(f.Name, nil, false)
		if err != nil {
			t.Fatalf("%s default grid: %v", f.Name, err)
		}
		if g.String() != want[f.Name] {
			t.Errorf("%s default grid %q, want %q", f.Name, g.String(), want[f.Name])
		}
	}
}
