package strategy

// Decimal parameter ranges, moving-average legs and the N-dimensional grid
// of SPEC Part 2 "Parameters and grids": a range is start + k*step
// computed as the decimal (never by repeated addition), a single value is
// a range of one, the grid is the Cartesian product of the family's
// parameters in the family's order with the last varying fastest, and a
// crossover grid may be restricted to fast length < slow length, the
// dropped combos taking no index.

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"sweepbench/engine"
)

// maxDigits bounds a decimal's significant digits and its decimal places,
// so that a range's values, aligned to one scale, stay within an int64.
const maxDigits = 17

// MaxRangeLen is the most values one range may hold.
const MaxRangeLen = 1 << 24

// MaxGridLen is the most combos a grid may hold (before the fast < slow
// restriction drops any).
const MaxGridLen = 1 << 40

// Decimal is an exact decimal number, mant * 10^-scale, normalised (no
// trailing zero in mant when scale > 0; zero is 0 with scale 0). The zero
// value is 0. Parse one with ParseDecimal; Float64 and Float32 are the
// nearest values of each precision to its decimal text (SPEC Part 2:
// "converts each decimal value to the working precision once, from the
// decimal text").
type Decimal struct {
	mant  int64
	scale int32
}

// ParseDecimal reads a plain decimal: an optional sign, digits, and an
// optional point with digits ("2", "-0.5", "0.25", ".5", "3."), at most 17
// significant digits and 17 decimal places. Exponents, "inf" and "nan"
// are refused.
func ParseDecimal(text string) (Decimal, error) {
	s := strings.TrimSpace(text)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	intPart, frac, hasPoint := strings.Cut(s, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) || hasPoint && strings.Contains(frac, ".") {
		return Decimal{}, fmt.Errorf("%q is not a decimal number", text)
	}
	frac = strings.TrimRight(frac, "0")
	digits := strings.TrimLeft(intPart+frac, "0")
	if len(digits) > maxDigits || len(frac) > maxDigits {
		return Decimal{}, fmt.Errorf("%q has more than %d digits", text, maxDigits)
	}
	var m int64
	for _, c := range digits {
		m = m*10 + int64(c-'0')
	}
	if neg {
		m = -m
	}
	return normalise(m, int32(len(frac))), nil
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func normalise(m int64, scale int32) Decimal {
	if m == 0 {
		return Decimal{}
	}
	for scale > 0 && m%10 == 0 {
		m /= 10
		scale--
	}
	return Decimal{m, scale}
}

// DecimalInt is the integer n as a Decimal.
func DecimalInt(n int64) Decimal { return Decimal{mant: n} }

// String is the canonical decimal text: "0.1", "2", "-0.5", "0".
func (d Decimal) String() string {
	neg := d.mant < 0
	m := d.mant
	if neg {
		m = -m
	}
	s := strconv.FormatInt(m, 10)
	if d.scale > 0 {
		if len(s) <= int(d.scale) {
			s = strings.Repeat("0", int(d.scale)-len(s)+1) + s
		}
		s = s[:len(s)-int(d.scale)] + "." + s[len(s)-int(d.scale):]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Float64 is the float64 nearest to the decimal.
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// Float32 is the float32 nearest to the decimal (rounded once from the
// text, not float32 of the float64).
func (d Decimal) Float32() float32 {
	f, _ := strconv.ParseFloat(d.String(), 32)
	return float32(f)
}

// IsInt says whether the decimal is an integer.
func (d Decimal) IsInt() bool { return d.scale == 0 }

// Int is the decimal as an int64 (truncated toward zero when it is not an
// integer).
func (d Decimal) Int() int64 {
	m := d.mant
	for i := int32(0); i < d.scale; i++ {
		m /= 10
	}
	return m
}

func (d Decimal) big() *big.Rat {
	r := new(big.Rat).SetInt64(d.mant)
	if d.scale > 0 {
		r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.scale)), nil)))
	}
	return r
}

// Cmp compares d and e exactly: -1, 0 or +1.
func (d Decimal) Cmp(e Decimal) int {
	if d.scale == e.scale {
		switch {
		case d.mant < e.mant:
			return -1
		case d.mant > e.mant:
			return 1
		}
		return 0
	}
	return d.big().Cmp(e.big())
}

// Neg is -d.
func (d Decimal) Neg() Decimal { return Decimal{-d.mant, d.scale} }

// aligned is d's mantissa at the larger scale s >= d.scale (the caller
// knows it fits: ParseRange checked).
func (d Decimal) aligned(s int32) int64 {
	m := d.mant
	for i := d.scale; i < s; i++ {
		m *= 10
	}
	return m
}

// Range is a parameter's values, Start + k*Step for k = 0..Len()-1, each
// at most Stop, computed as the decimal. Int marks an integer parameter
// (every value an integer). A single value v is Range{v, v, 1}. Build one
// with ParseRange, which checks what At relies on.
type Range struct {
	Start, Stop, Step Decimal
	Int               bool
}

// ParseRange reads `start:stop:step`, `start:stop` (step 1) or a single
// value for the parameter param (integer: an integer parameter, a length).
// Errors are *ParamError naming param: a value that is not a number, a
// non-integer for an integer parameter, a step that is not positive, an
// empty range (stop < start), more than MaxRangeLen values.
func ParseRange(param, text string, integer bool) (Range, error) {
	parts := strings.Split(strings.TrimSpace(text), ":")
	if strings.TrimSpace(text) == "" || len(parts) > 3 {
		return Range{}, paramErr(param, text, "want start:stop:step, start:stop (step 1) or one value")
	}
	var v [3]Decimal
	v[2] = DecimalInt(1)
	for i, p := range parts {
		d, err := ParseDecimal(p)
		if err != nil {
			return Range{}, paramErr(param, text, "%v (want start:stop:step, e.g. %s)", err, exampleRange(integer))
		}
		if integer && !d.IsInt() {
			return Range{}, paramErr(param, text, "%s is not an integer (want start:stop:step, e.g. %s)", d, exampleRange(integer))
		}
		v[i] = d
	}
	if len(parts) == 1 {
		v[1] = v[0]
	}
	r := Range{Start: v[0], Stop: v[1], Step: v[2], Int: integer}
	if r.Step.mant <= 0 {
		return Range{}, paramErr(param, text, "step %s must be positive", r.Step)
	}
	if r.Stop.Cmp(r.Start) < 0 {
		return Range{}, paramErr(param, text, "empty range (stop %s < start %s)", r.Stop, r.Start)
	}
	// Every value aligned to one scale must fit an int64, with room for
	// stop - start: the bound on digits is on the aligned mantissas.
	s := r.scale()
	lim := new(big.Int).Exp(big.NewInt(10), big.NewInt(maxDigits+1), nil)
	for _, d := range v {
		m := new(big.Int).Mul(big.NewInt(d.mant), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s-d.scale)), nil))
		if m.CmpAbs(lim) >= 0 {
			return Range{}, paramErr(param, text, "too many digits once its values share %d decimal places", s)
		}
	}
	if n := r.len64(); n > MaxRangeLen {
		return Range{}, paramErr(param, text, "%d values, more than the %d a range may hold", n, MaxRangeLen)
	}
	return r, nil
}

func exampleRange(integer bool) string {
	if integer {
		return "10:60:5"
	}
	return "1.5:3:0.25"
}

func (r Range) scale() int32 {
	return max(r.Start.scale, r.Stop.scale, r.Step.scale)
}

func (r Range) len64() int64 {
	if r.Step.mant <= 0 || r.Stop.Cmp(r.Start) < 0 {
		return 0
	}
	s := r.scale()
	return (r.Stop.aligned(s)-r.Start.aligned(s))/r.Step.aligned(s) + 1
}

// Len is the number of values in the range.
func (r Range) Len() int { return int(r.len64()) }

// At is the k-th value, Start + k*Step exactly, 0 <= k < Len().
func (r Range) At(k int) Decimal {
	s := max(r.Start.scale, r.Step.scale)
	return normalise(r.Start.aligned(s)+int64(k)*r.Step.aligned(s), s)
}

// Last is the range's largest value, At(Len()-1).
func (r Range) Last() Decimal { return r.At(r.Len() - 1) }

// IndexOf is the k with At(k) == d, or -1 when d is not a value of the
// range.
func (r Range) IndexOf(d Decimal) int {
	if d.Cmp(r.Start) < 0 || d.Cmp(r.Last()) > 0 {
		return -1
	}
	s := max(r.scale(), d.scale)
	diff := d.aligned(s) - r.Start.aligned(s)
	st := r.Step.aligned(s)
	if diff%st != 0 {
		return -1
	}
	return int(diff / st)
}

// String is the range as written back: one value, or start:stop:step with
// stop the last value reached.
func (r Range) String() string {
	if r.Len() == 1 {
		return r.Start.String()
	}
	return r.Start.String() + ":" + r.Last().String() + ":" + r.Step.String()
}

// Leg is one side of a crossover (SPEC Part 2 "Families", `cross`): a
// moving-average kind and its swept lengths, written KIND:RANGE
// ("ema:5:50:5", "sma:20") or "price" (the source itself, no length).
// price's Lengths is the single value 1, the length it counts as for the
// fast < slow restriction (being sma:1 bit for bit).
type Leg struct {
	Kind    Kind
	Lengths Range
}

// ParseLeg reads a leg for the parameter param: KIND:RANGE or price.
// Errors are *ParamError naming param: an unknown kind, a kind without
// lengths, price with lengths, a length below the kind's minimum, and
// ParseRange's.
func ParseLeg(param, text string) (Leg, error) {
	name, rng, hasRange := strings.Cut(strings.TrimSpace(text), ":")
	k := Kind(strings.ToLower(name))
	known := false
	var names []string
	for _, kk := range Kinds {
		names = append(names, string(kk))
		known = known || kk == k
	}
	if !known {
		return Leg{}, paramErr(param, text, "unknown kind %q (want KIND:RANGE, e.g. ema:5:50:5, or price; kinds: %s)", name, strings.Join(names, ", "))
	}
	if k == Price {
		if hasRange {
			return Leg{}, paramErr(param, text, "price has no length (write price alone)")
		}
		return Leg{Kind: Price, Lengths: Range{Start: DecimalInt(1), Stop: DecimalInt(1), Step: DecimalInt(1), Int: true}}, nil
	}
	if !hasRange {
		return Leg{}, paramErr(param, text, "%s needs lengths (want KIND:RANGE, e.g. %s:5:50:5)", k, k)
	}
	r, err := ParseRange(param, rng, true)
	if err != nil {
		err.(*ParamError).Value = text
		return Leg{}, err
	}
	if m := int64(MinLength(k)); r.Start.Int() < m {
		return Leg{}, paramErr(param, text, "length %s is below %s's minimum %d", r.Start, k, m)
	}
	return Leg{Kind: k, Lengths: r}, nil
}

// String is the leg as written: "ema:5:50:5", "price".
func (l Leg) String() string {
	if l.Kind == Price {
		return string(Price)
	}
	return string(l.Kind) + ":" + l.Lengths.String()
}

// Axis is one dimension of a grid: the parameter, its values and, for a
// leg parameter, the leg (whose Lengths is Range).
type Axis struct {
	Param Param
	Range Range
	Leg   *Leg
}

// Grid is a family's N-dimensional grid (SPEC Part 2 "Parameters and
// grids"): the Cartesian product of Axes in the family's order, the last
// varying fastest. With FastBelowSlow (cross only) the combos whose fast
// length is not below the slow length are dropped and take no index:
// Len counts the kept, Dropped the others. Build one with NewGrid.
type Grid struct {
	Family        string
	Axes          []Axis
	FastBelowSlow bool

	// With FastBelowSlow, fast is axis 0 and slow axis 1 (cross's
	// order): cum[a] is how many (fast, slow) pairs are kept with a fast
	// index below a, firstSlow[a] the first slow index kept with fast a.
	cum       []int64
	firstSlow []int
	rest      int64 // product of the axes after the pair
	total     int64 // the full product, before the restriction
}

// Combo is one point of a grid: Index its index in the grid, Values one
// per axis (a leg's length; price's 1), Kinds one per axis (a leg's kind,
// "" for the other axes).
type Combo struct {
	Index  int
	Values []Decimal
	Kinds  []Kind
}

// NewGrid builds family's grid from the parameters given (name -> text:
// a range, or a leg for a leg parameter), each parameter not given taking
// its default, then the stops given (StopParams, in their order; every
// family but hull), each an axis after the family's own. Errors are
// *ParamError: "strategy" for an unknown family,
// the name of an unknown parameter, of a value below its minimum, of one
// breaking a rule between parameters (zscore: -entry < exit < entry; rsi:
// 0 < lower < upper < 100, for every combo; a stop not above 0, a
// stop_loss or trail not below 1, any stop of hull), "grid" for more than
// MaxGridLen combos, "fast-below-slow" for the restriction on a family
// without fast and slow legs.
func NewGrid(family string, given map[string]string, fastBelowSlow bool) (Grid, error) {
	f, err := Lookup(family)
	if err != nil {
		return Grid{}, err
	}
	var names []string
	for _, p := range f.Params {
		names = append(names, p.Name)
	}
	keys := make([]string, 0, len(given))
	for k := range given {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := f.Param(k); ok {
			continue
		}
		if _, ok := stopParam(k); ok {
			if f.Name == "hull" {
				return Grid{}, paramErr(k, given[k], "%s", engine.HullStops)
			}
			continue
		}
		also := ""
		if f.Name != "hull" {
			also = "; and the stops " + stopNames()
		}
		return Grid{}, paramErr(k, given[k], "unknown parameter of %s (its parameters: %s%s)", f.Name, strings.Join(names, ", "), also)
	}
	g := Grid{Family: f.Name, FastBelowSlow: fastBelowSlow}
	byName := map[string]Range{}
	for _, p := range f.Params {
		text, ok := given[p.Name]
		if !ok {
			text = p.Default
		}
		ax := Axis{Param: p}
		if p.Kind == LegParam {
			leg, err := ParseLeg(p.Name, text)
			if err != nil {
				return Grid{}, err
			}
			ax.Leg, ax.Range = &leg, leg.Lengths
		} else {
			r, err := parseAxis(p, text)
			if err != nil {
				return Grid{}, err
			}
			ax.Range = r
		}
		byName[p.Name] = ax.Range
		g.Axes = append(g.Axes, ax)
	}
	for _, p := range StopParams {
		text, ok := given[p.Name]
		if !ok {
			continue
		}
		r, err := parseAxis(p, text)
		if err != nil {
			return Grid{}, err
		}
		if p.Name != "take_profit" && r.Last().Cmp(DecimalInt(1)) >= 0 {
			return Grid{}, paramErr(p.Name, text, "%s is not below 1: want 0 < %s < 1 (a fraction of the price, 0.02 = 2%%)", r.Last(), p.Name)
		}
		g.Axes = append(g.Axes, Axis{Param: p, Range: r})
	}
	if err := crossRules(f.Name, byName, given); err != nil {
		return Grid{}, err
	}
	total := new(big.Int).SetInt64(1)
	for _, ax := range g.Axes {
		total.Mul(total, big.NewInt(int64(ax.Range.Len())))
	}
	if total.Cmp(big.NewInt(MaxGridLen)) > 0 {
		return Grid{}, paramErr("grid", g.String(), "%s combos, more than the %d a grid may hold", total, int64(MaxGridLen))
	}
	g.total = total.Int64()
	if fastBelowSlow {
		if len(g.Axes) < 2 || g.Axes[0].Param.Name != "fast" || g.Axes[1].Param.Name != "slow" {
			return Grid{}, paramErr("fast-below-slow", "", "%s has no fast and slow legs to restrict", f.Name)
		}
		g.restrict()
	}
	return g, nil
}

// stopNames lists the stop parameters: "stop_loss, take_profit, trail".
func stopNames() string {
	names := make([]string, len(StopParams))
	for i, p := range StopParams {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// parseAxis is the range of the integer or decimal parameter p from text,
// checked against p's minimum: ParseRange's errors, and a *ParamError for
// a start below the minimum.
func parseAxis(p Param, text string) (Range, error) {
	r, err := ParseRange(p.Name, text, p.Kind == IntegerParam)
	if err != nil {
		return Range{}, err
	}
	if !math.IsInf(p.Min, 0) {
		min := new(big.Rat).SetFloat64(p.Min)
		if c := r.Start.big().Cmp(min); c < 0 || c == 0 && p.MinExclusive {
			lo := strconv.FormatFloat(p.Min, 'f', -1, 64)
			if p.MinExclusive {
				return Range{}, paramErr(p.Name, text, "%s is not above %s: want %s > %s", r.Start, lo, p.Name, lo)
			}
			return Range{}, paramErr(p.Name, text, "%s is below the minimum: want >= %s", r.Start, lo)
		}
	}
	return r, nil
}

// isStop reports whether the axis is a stop parameter's (StopParams).
func (ax Axis) isStop() bool {
	_, ok := stopParam(ax.Param.Name)
	return ok
}

// HasStops reports whether the grid has a stop axis (stop_loss,
// take_profit or trail): its positions then depend on the prices of the
// precision that computes them, and the family has memory (SPEC Part 2
// "Parity for families with memory").
func (g Grid) HasStops() bool {
	for _, ax := range g.Axes {
		if ax.isStop() {
			return true
		}
	}
	return false
}

// Stops is combo c's stops, read off its stop axes (the float64 nearest
// each decimal; an axis not in the grid is 0, no such exit).
func (g Grid) Stops(c Combo) engine.Stops {
	var s engine.Stops
	for k, ax := range g.Axes {
		if k >= len(c.Values) {
			break
		}
		switch ax.Param.Name {
		case "stop_loss":
			s.Loss = c.Values[k].Float64()
		case "take_profit":
			s.Take = c.Values[k].Float64()
		case "trail":
			s.Trail = c.Values[k].Float64()
		}
	}
	return s
}

// crossRules checks the rules between parameters over every combo, by
// the ranges' extremes.
func crossRules(family string, r map[string]Range, given map[string]string) error {
	text := func(name string) string {
		if t, ok := given[name]; ok {
			return t
		}
		return r[name].String()
	}
	switch family {
	case "zscore":
		entryMin, exit := r["entry"].Start, r["exit"]
		if exit.Last().Cmp(entryMin) >= 0 {
			return paramErr("exit", text("exit"), "exit %s is not below entry %s (want -entry < exit < entry for every combo)", exit.Last(), entryMin)
		}
		if exit.Start.Cmp(entryMin.Neg()) <= 0 {
			return paramErr("exit", text("exit"), "exit %s is not above -entry %s (want -entry < exit < entry for every combo)", exit.Start, entryMin.Neg())
		}
	case "rsi":
		lower, upper := r["lower"], r["upper"]
		hundred := DecimalInt(100)
		if upper.Last().Cmp(hundred) >= 0 {
			return paramErr("upper", text("upper"), "upper %s is not below 100 (want 0 < lower < upper < 100)", upper.Last())
		}
		if lower.Last().Cmp(upper.Start) >= 0 {
			return paramErr("lower", text("lower"), "lower %s is not below upper %s (want 0 < lower < upper < 100 for every combo)", lower.Last(), upper.Start)
		}
	}
	return nil
}

// restrict counts, for each fast index, the slow indices kept (slow
// length > fast length: the slow lengths increase, so they are the slow
// indices from the first one above the fast length on).
func (g *Grid) restrict() {
	fast, slow := g.Axes[0].Range, g.Axes[1].Range
	nf, ns := fast.Len(), slow.Len()
	g.cum = make([]int64, nf+1)
	g.firstSlow = make([]int, nf)
	g.rest = 1
	for _, ax := range g.Axes[2:] {
		g.rest *= int64(ax.Range.Len())
	}
	for a := 0; a < nf; a++ {
		fl := fast.At(a)
		// smallest b with slow(b) > fl
		b := sort.Search(ns, func(b int) bool { return slow.At(b).Cmp(fl) > 0 })
		g.firstSlow[a] = b
		g.cum[a+1] = g.cum[a] + int64(ns-b)
	}
}

// Len is the number of combos (kept by the restriction, if any).
func (g Grid) Len() int {
	if g.FastBelowSlow && g.cum != nil {
		return int(g.cum[len(g.cum)-1] * g.rest)
	}
	return int(g.total)
}

// Dropped is how many combos the fast < slow restriction dropped (0
// without it).
func (g Grid) Dropped() int { return int(g.total) - g.Len() }

// At is the combo of index i, 0 <= i < Len(), computed from the ranges
// (the grid is never materialised).
func (g Grid) At(i int) Combo {
	n := len(g.Axes)
	c := Combo{Index: i, Values: make([]Decimal, n), Kinds: make([]Kind, n)}
	idx := make([]int, n)
	rem := int64(i)
	lo := 0
	if g.FastBelowSlow && g.cum != nil {
		lo = 2
	}
	for ax := n - 1; ax >= lo; ax-- {
		l := int64(g.Axes[ax].Range.Len())
		idx[ax] = int(rem % l)
		rem /= l
	}
	if lo == 2 {
		// rem is the index of the kept (fast, slow) pair.
		a := sort.Search(len(g.firstSlow), func(a int) bool { return g.cum[a+1] > rem })
		idx[0] = a
		idx[1] = g.firstSlow[a] + int(rem-g.cum[a])
	}
	for ax := range g.Axes {
		c.Values[ax] = g.Axes[ax].Range.At(idx[ax])
		if g.Axes[ax].Leg != nil {
			c.Kinds[ax] = g.Axes[ax].Leg.Kind
		}
	}
	return c
}

// Index is the index of the combo with c's Values (c.Index is not read),
// or -1 when they are not a combo of the grid (a value off its range, a
// combo the restriction dropped, the wrong number of values).
func (g Grid) Index(c Combo) int {
	if len(c.Values) != len(g.Axes) {
		return -1
	}
	idx := make([]int, len(g.Axes))
	for ax := range g.Axes {
		if idx[ax] = g.Axes[ax].Range.IndexOf(c.Values[ax]); idx[ax] < 0 {
			return -1
		}
	}
	lo := 0
	var i int64
	if g.FastBelowSlow && g.cum != nil {
		a, b := idx[0], idx[1]
		if b < g.firstSlow[a] {
			return -1
		}
		i = g.cum[a] + int64(b-g.firstSlow[a])
		lo = 2
	}
	for ax := lo; ax < len(g.Axes); ax++ {
		i = i*int64(g.Axes[ax].Range.Len()) + int64(idx[ax])
	}
	return int(i)
}

// String names the grid by its axes: "length 10:60:5 x entry 1.5:3:0.25 x
// exit 0:1:0.5"; a leg is written as one ("fast ema:5:50:5").
func (g Grid) String() string {
	parts := make([]string, len(g.Axes))
	for i, ax := range g.Axes {
		if ax.Leg != nil {
			parts[i] = ax.Param.Name + " " + ax.Leg.String()
		} else {
			parts[i] = ax.Param.Name + " " + ax.Range.String()
		}
	}
	s := strings.Join(parts, " x ")
	if g.FastBelowSlow {
		s += " (fast < slow)"
	}
	return s
}
