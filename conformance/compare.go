package conformance

import (
	"math"
	"slices"
	"testing"
	"unsafe"

	"sweepbench/engine"
)

// SameMetrics reports whether a and b are bit-identical on every metric
// (any NaN equals any NaN); name is the first metric that differs.
func SameMetrics(a, b engine.Metrics) (name string, same bool) {
	for _, name := range engine.MetricNames {
		x, _ := a.Value(name)
		y, _ := b.Value(name)
		if !sameFloat(x, y) {
			return name, false
		}
	}
	return "", true
}

func sameFloat(x, y float64) bool { return SameFloat(x, y) }

// SameFloat reports whether a and b are the same float32 or float64, bit
// for bit, any NaN equal to any NaN.
func SameFloat[F engine.Float](a, b F) bool {
	return Bits(a) == Bits(b) || (a != a && b != b)
}

// Tolerance is how far a backend's metrics may sit from the reference's.
// The zero value wants every metric bit for bit.
type Tolerance struct {
	// Rel bounds the relative difference |got-want|/|want| (|got-want| when
	// want is 0) of every metric but cvar_95; 0 wants the same bits.
	Rel float64
	// CVaR bounds cvar_95's, whose sum may run in another order (the
	// kernels add the values of the VaR bin in their own order); 0 wants
	// the same bits.
	CVaR float64
	// Equity bounds total_return through the equity it comes from,
	// relDiff(1+got, 1+want) <= Rel, and checks cagr and calmar for
	// consistency with the backend's own total return and max drawdown
	// (cagr = (1+R)^k - 1 with want's exponent k, calmar = cagr / max
	// drawdown), each within Rel: a kernel that multiplies the equity in
	// another order (the bar-parallel fp32 one) moves it by a few ulps,
	// which a relative bound on a return near 0 (or on its annualised
	// power) magnifies without limit.
	Equity bool
}

// equityDiff is the difference of metric name between got and want as
// Tolerance.Equity measures it, and whether it measures that metric.
func equityDiff(name string, g, w engine.Metrics) (float64, bool) {
	switch name {
	case "total_return":
		return relDiff(1+g.TotalReturn, 1+w.TotalReturn), true
	case "cagr":
		lr := math.Log1p(w.TotalReturn)
		if lr == 0 || math.IsNaN(lr) || math.IsInf(lr, 0) || math.IsNaN(w.CAGR) || math.IsInf(w.CAGR, 0) {
			return 0, false
		}
		k := math.Log1p(w.CAGR) / lr
		return relDiff(g.CAGR, math.Expm1(k*math.Log1p(g.TotalReturn))), true
	case "calmar":
		if g.MaxDrawdown == 0 || math.IsNaN(g.Calmar) || math.IsInf(g.Calmar, 0) {
			return 0, false
		}
		return relDiff(g.Calmar, g.CAGR/g.MaxDrawdown), true
	}
	return 0, false
}

// relDiff is |a-b|/|b| (|a-b| when b = 0); 0 for equal values, equal
// infinities and two NaNs, +Inf when only one side is NaN or infinite.
func relDiff(a, b float64) float64 {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return 0
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return math.Inf(1)
	}
	d := math.Abs(a - b)
	if b != 0 {
		d /= math.Abs(b)
	}
	return d
}

// CompareMetrics checks got against want combo by combo (combo i of grid):
// trade counts identical, every other metric within tol (bit for bit where
// tol's bound is 0; the trade metrics only where got has them: a GPU lane
// of today leaves them NaN). It reports up to ten differences, then their count, and
// logs the worst relative difference per metric.
func CompareMetrics(t testing.TB, label string, got, want []engine.Metrics, grid engine.Grid, tol Tolerance) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", label, len(got), len(want))
	}
	worst := map[string]float64{}
	bad, trades := 0, 0
	report := func(format string, args ...any) {
		t.Helper()
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	for i := range want {
		g, w := got[i], want[i]
		trades += w.TotalTrades
		if g.TotalTrades != w.TotalTrades {
			report("%s combo %d %+v: total_trades %d, want %d", label, i, grid.At(i), g.TotalTrades, w.TotalTrades)
		}
		for _, name := range engine.MetricNames {
			if !g.HasTradeMetrics() && slices.Contains(engine.TradeMetrics, name) {
				continue // a GPU lane of today leaves them NaN (Metrics.NoTradeMetrics): issue 29
			}
			gv, _ := g.Value(name)
			wv, _ := w.Value(name)
			lim := tol.Rel
			if name == "cvar_95" {
				lim = tol.CVaR
			}
			d := relDiff(gv, wv)
			if tol.Equity {
				if e, ok := equityDiff(name, g, w); ok {
					d = e
				}
			}
			worst[name] = math.Max(worst[name], d)
			if lim == 0 && !sameFloat(gv, wv) || d > lim {
				report("%s combo %d %+v: %s = %v, want %v (rel %.3g, allowed %.1g)", label, i, grid.At(i), name, gv, wv, d, lim)
			}
		}
	}
	t.Logf("%s: %d combos, %d trades in the reference; worst relative difference per metric: %v", label, len(want), trades, worst)
	if bad > 10 {
		t.Errorf("%s: %d differences in all", label, bad)
	}
}

// NearMetrics checks one combo's metrics against values worked out by hand:
// the counts exactly, every ratio within rel of want (or abs of it, near
// 0); infinities and NaN must match.
func NearMetrics(t testing.TB, label string, got, want engine.Metrics, rel, abs float64) {
	t.Helper()
	for _, name := range engine.MetricNames {
		g, _ := got.Value(name)
		w, _ := want.Value(name)
		switch name {
		case "total_trades", "long_bars", "short_bars", "flat_bars":
			if g != w {
				t.Errorf("%s: %s = %v, want %v", label, name, g, w)
			}
		default:
			if !Near(g, w, rel, abs) {
				t.Errorf("%s: %s = %v, want %v", label, name, g, w)
			}
		}
	}
}

// Near reports whether got is within rel (relative to want) or abs of want;
// infinities must match exactly, NaN matches only NaN.
func Near(got, want, rel, abs float64) bool {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		return math.IsNaN(want) && math.IsNaN(got)
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		return got == want
	}
	return math.Abs(got-want) <= max(rel*math.Abs(want), abs)
}

// SameSeries reports whether got and want (same length) are bit-identical,
// any NaN equal to any NaN (the reference and a kernel write different NaN
// payloads), and else the first index where they differ.
func SameSeries[F engine.Float](got, want []F) (at int, same bool) {
	if len(got) != len(want) {
		return min(len(got), len(want)), false
	}
	for i := range want {
		if !SameFloat(got[i], want[i]) {
			return i, false
		}
	}
	return -1, true
}

// Bits is v's IEEE bit pattern, float32 or float64.
func Bits[F engine.Float](v F) uint64 {
	if unsafe.Sizeof(v) == 4 {
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(float64(v))
}
