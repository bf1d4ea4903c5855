package strategy

// The moving-average kinds of docs/SPEC.md Part 2 "Moving-average kinds":
// sma, wma, ema, dema, tema, hma, hma3 and price, each over a source x that
// is NaN before its first defined index s and finite from s, with the
// evaluation order SPEC pins (and "Part 2 conventions sweepbench chose").
// wma, hma and hma3 are Part 1's, computed by package reference; this file
// adds the others and the common warm-up, minimum and parsing rules.

import (
	"fmt"
	"math"
	"strings"

	"sweepbench/engine"
	"sweepbench/reference"
)

// MinLength is kind's minimum length (SPEC Part 2 "Moving-average kinds",
// column "min L"): sma, wma, ema, dema, tema 1; hma 2 (engine.MinHMA); hma3
// 6 (engine.MinHMA3); price 0, having no length. An unknown kind gives 0
// (MA rejects it).
func MinLength(k Kind) int {
	switch k {
	case SMA, WMA, EMA, DEMA, TEMA:
		return 1
	case HMA:
		return engine.MinHMA
	case HMA3:
		return engine.MinHMA3
	}
	return 0
}

// FirstValid is kind's first defined index (a bar index, as s) for length L
// over a source first defined at index s (SPEC Part 2 "First valid bar"
// table; TA-Lib's lookbacks with unstable period 0):
//
//	sma, wma, ema  s+L-1
//	dema           s+2(L-1)
//	tema           s+3(L-1)
//	hma            s+(L-1)+(round(sqrt(L))-1)   (s + engine.HMAWarmup(L))
//	hma3           s+2(p-1), p = floor(L/2)     (s + engine.HMA3Warmup(L))
//	price          s
//
// L is assumed >= MinLength(k); the index may be >= the series length, in
// which case the whole series is NaN. An unknown kind gives s.
func FirstValid(k Kind, L, s int) int {
	switch k {
	case SMA, WMA, EMA:
		return s + L - 1
	case DEMA:
		return s + 2*(L-1)
	case TEMA:
		return s + 3*(L-1)
	case HMA:
		return s + engine.HMAWarmup(L)
	case HMA3:
		return s + engine.HMA3Warmup(L)
	}
	return s
}

// known reports whether k is one of Kinds.
func known(k Kind) bool {
	for _, c := range Kinds {
		if c == k {
			return true
		}
	}
	return false
}

// kindList is "sma, wma, ema, dema, tema, hma, hma3, price" (SPEC's order).
func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// ParseKind reads a kind's name as SPEC writes it ("ema"; exact, lower
// case). An unknown name is a *ParamError naming param, with the name as its
// Value and a Reason that lists the kinds.
func ParseKind(param, name string) (Kind, error) {
	k := Kind(name)
	if known(k) {
		return k, nil
	}
	return "", paramErr(param, name, "unknown moving-average kind (the kinds are %s)", kindList())
}

// MA writes kind k of x with length L into out (SPEC Part 2
// "Moving-average kinds").
//
// Shapes: x has n = len(x) values (prices or any series in their units), NaN
// before index s and finite from s (0 <= s <= n); out has n values, in x's
// units, and must not alias x. out[i] is NaN for i < FirstValid(k, L, s),
// defined from there. L is a length in bars (ignored by price, which copies
// x).
//
// f selects the formulation of sma, wma, hma and hma3 (Direct: each window
// summed from its own values, oldest bar first; Prefix: differences of
// running sums in F, SPEC's trap). ema, dema and tema are recursions with
// one formulation and ignore f.
//
// Every operation is rounded in F, in SPEC's order:
//   - sma direct: the window summed oldest bar first, then divided by L.
//   - sma prefix: P[i] = P[i-1] + x[i] from P[s-1] = 0, sma = (P[i]-P[i-L])/L.
//   - ema: a = 2/(L+1) and 1-a computed once in F; e[s+L-1] is the direct
//     sma there; e[i] = (a*x[i]) + ((1-a)*e[i-1]).
//   - dema: (2*e1) - e2, e1 = ema(x, L), e2 = ema(e1, L) seeded at e1's first
//     valid index + L-1 by the mean of e1's first L values.
//   - tema: ((3*e1) - (3*e2)) + e3, e3 = ema(e2, L) seeded likewise.
//   - wma, hma, hma3: reference.WMA / WMAPrefix / HMA / HMA3 (Part 1).
//
// With L = 1 the direct sma, wma and ema, dema and tema equal x exactly.
//
// Errors: a *ParamError with Param "length" when L < MinLength(k) or
// len(out) != len(x); a *ParamError with Param "kind" for an unknown kind;
// an error when s is outside [0, n] or out aliases x.
func MA[F Float](k Kind, x []F, L, s int, f Formulation, out []F) error {
	n := len(x)
	if !known(k) {
		return paramErr("kind", string(k), "unknown moving-average kind (the kinds are %s)", kindList())
	}
	if L < MinLength(k) {
		return paramErr("length", fmt.Sprint(L), "%s needs a length of at least %d", k, MinLength(k))
	}
	if len(out) != n {
		return paramErr("length", fmt.Sprint(L), "%s output has %d values for a series of %d", k, len(out), n)
	}
	if s < 0 || s > n {
		return fmt.Errorf("strategy: %s source start %d outside [0, %d]", k, s, n)
	}
	if n > 0 && &out[0] == &x[0] {
		return fmt.Errorf("strategy: %s output aliases its source", k)
	}
	switch k {
	case Price:
		copy(out, x)
	case SMA:
		if f == Prefix {
			smaPrefix(x, L, s, out)
		} else {
			smaDirect(x, L, s, out)
		}
	case EMA:
		ema(x, L, s, out)
	case DEMA:
		dema(x, L, s, out)
	case TEMA:
		tema(x, L, s, out)
	case WMA:
		if f == Prefix {
			reference.WMAPrefix(x, L, s, out, nil)
		} else {
			reference.WMA(x, L, s, out)
		}
	case HMA, HMA3:
		// reference's Hull averages take x defined from index 0: run them on
		// x[s:] and the result lands at offset s.
		fillNaN(out[:s])
		if s == n {
			return nil
		}
		if k == HMA {
			return reference.HMA(x[s:], L, f, out[s:])
		}
		return reference.HMA3(x[s:], L, f, out[s:])
	}
	return nil
}

// fillNaN sets every element of v to NaN.
func fillNaN[F Float](v []F) {
	nan := F(math.NaN())
	for i := range v {
		v[i] = nan
	}
}

// smaDirect writes sma(x, L) from s: each window summed oldest bar first in
// F, then divided by L in F. out is NaN before s+L-1.
func smaDirect[F Float](x []F, L, s int, out []F) {
	n := len(x)
	first := s + L - 1
	fillNaN(out[:min(first, n)])
	den := F(L)
	i := first
	// Four windows at a time: independent sums, each oldest bar first (the
	// bits of the one-window loop below, TestSMADirectFourWindows).
	for ; i+3 < n; i += 4 {
		w := x[i-L+1 : i+4]
		var a0, a1, a2, a3 F
		for j := range L {
			v := w[j : j+4 : j+4]
			a0 += v[0]
			a1 += v[1]
			a2 += v[2]
			a3 += v[3]
		}
		out[i], out[i+1], out[i+2], out[i+3] = a0/den, a1/den, a2/den, a3/den
	}
	for ; i < n; i++ {
		var acc F
		for _, v := range x[i-L+1 : i+1] {
			acc += v
		}
		out[i] = acc / den
	}
}

// smaPrefix writes sma(x, L) from s as (P[i]-P[i-L])/L over the running sum
// P[i] = P[i-1] + x[i], P[s-1] = 0, kept in F (SPEC's prefix formulation:
// in fp32 P grows to n times the price and the window's digits are lost).
func smaPrefix[F Float](x []F, L, s int, out []F) {
	n := len(x)
	first := s + L - 1
	fillNaN(out[:min(first, n)])
	if first >= n {
		return
	}
	// p[j] is P[s-1+j]: p[0] = P[s-1] = 0.
	p := make([]F, n-s+1)
	for j := 1; j < len(p); j++ {
		p[j] = p[j-1] + x[s+j-1]
	}
	den := F(L)
	for i := first; i < n; i++ {
		j := i - s + 1
		out[i] = (p[j] - p[j-L]) / den
	}
}

// ema writes ema(x, L) for x defined from s: a = 2/(L+1) and 1-a rounded in
// F once; the seed at s+L-1 is the direct sma there; then
// e[i] = F(a*x[i]) + F((1-a)*e[i-1]), each product rounded (no fused
// multiply-add). out is NaN before s+L-1.
func ema[F Float](x []F, L, s int, out []F) {
	n := len(x)
	first := s + L - 1
	fillNaN(out[:min(first, n)])
	if first >= n {
		return
	}
	a := F(2) / F(L+1)
	b := F(1) - a
	var acc F
	for _, v := range x[s : first+1] {
		acc += v
	}
	e := acc / F(L)
	out[first] = e
	for i := first + 1; i < n; i++ {
		e = F(a*x[i]) + F(b*e)
		out[i] = e
	}
}

// dema writes (2*e1) - e2 with e1 = ema(x, L) from s and e2 = ema(e1, L)
// from s+L-1 (so defined from s+2(L-1)), each operation rounded in F.
func dema[F Float](x []F, L, s int, out []F) {
	n := len(x)
	e1 := make([]F, n)
	ema(x, L, s, e1)
	ema(e1, L, min(s+L-1, n), out) // out holds e2
	for i := range out {
		out[i] = F(F(2)*e1[i]) - out[i]
	}
}

// tema writes ((3*e1) - (3*e2)) + e3 with e1 = ema(x, L) from s,
// e2 = ema(e1, L) from s+L-1, e3 = ema(e2, L) from s+2(L-1) (so defined
// from s+3(L-1)), each operation rounded in F.
func tema[F Float](x []F, L, s int, out []F) {
	n := len(x)
	e1 := make([]F, n)
	e2 := make([]F, n)
	ema(x, L, s, e1)
	ema(e1, L, min(s+L-1, n), e2)
	ema(e2, L, min(s+2*(L-1), n), out) // out holds e3
	for i := range out {
		out[i] = F(F(F(3)*e1[i])-F(F(3)*e2[i])) + out[i]
	}
}
