package report

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// niceTicks are gonum's default ticks labelled with the fewest
// significant digits that tell them apart (4.1012 and 4.1014, not 4.1 and
// 4.1; 25 and 75, not 25.00).
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	var major []int
	for i, t := range ts {
		if t.Label != "" {
			major = append(major, i)
		}
	}
	for prec := 1; prec <= 12; prec++ {
		seen, ok := map[string]bool{}, true
		for _, i := range major {
			l := label(ts[i].Value, prec)
			if v, _ := strconv.ParseFloat(l, 64); seen[l] || math.Abs(v-ts[i].Value) > 1e-9*math.Max(math.Abs(ts[i].Value), math.Abs(hi-lo)) {
				ok = false
				break
			}
			seen[l] = true
		}
		if ok {
			for _, i := range major {
				ts[i].Label = label(ts[i].Value, prec)
			}
			break
		}
	}
	return ts
}

// label is v to prec significant digits, in plain notation from 1e-4 to
// 1e6 (100, not 1e+02), else in exponent notation.
func label(v float64, prec int) string {
	g := strconv.FormatFloat(v, 'g', prec, 64)
	if a := math.Abs(v); a == 0 || (a >= 1e-4 && a < 1e6) {
		r, _ := strconv.ParseFloat(g, 64)
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return g
}

// logTicks mark every decade of a log axis (labelled 1e-07, 0.01, 10,
// 1e+05 ...; every other one beyond 8 decades) and, over 6 decades or
// fewer, the 2..9 multiples unlabelled.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	k0, k1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	every := 1
	if k1-k0 > 8 {
		every = 2
	}
	var ts []plot.Tick
	for k := k0; k <= k1; k++ {
		v := math.Pow(10, float64(k))
		t := plot.Tick{Value: v}
		if (k-k0)%every == 0 {
			t.Label = decade(k)
		}
		ts = append(ts, t)
		if k1-k0 <= 6 && k < k1 {
			for m := 2; m < 10; m++ {
				ts = append(ts, plot.Tick{Value: float64(m) * v})
			}
		}
	}
	return ts
}

// decade labels 10^k: plainly from 0.001 to 10,000, else 1e-07.
func decade(k int) string {
	if k >= -3 && k <= 4 {
		return strconv.FormatFloat(math.Pow(10, float64(k)), 'f', -1, 64)
	}
	return fmt.Sprintf("1e%+03d", k)
}

// roomForLegend widens p's y range so that a legend of entries lines at
// the top (or, with bottom, the bottom) sits clear of the data: about 6%
// of the range a line.
func roomForLegend(p *plot.Plot, entries int, bottom bool) {
	span := p.Y.Max - p.Y.Min
	if !(span > 0) || entries == 0 {
		return
	}
	extra := span * 0.065 * float64(entries)
	if bottom {
		p.Y.Min -= extra
	} else {
		p.Y.Max += extra
	}
}

// gridTicks mark a heatmap axis at the grid's own values: a label at
// every stride-th value from the first (stride 1, 2, 5, 10, 20 ... values,
// the least that keeps at most maxGridLabels labels), an unlabelled tick
// at every other value (up to 60 values), so that every label names a
// value the grid has, drawn at its column's (row's) centre, inside the
// grid. vals are the values' positions, text their labels.
type gridTicks struct {
	vals []float64
	text []string
}

// maxGridLabels is the most labels gridTicks put on an axis.
const maxGridLabels = 6

// stride is the step, in values, between gridTicks' labels.
func (g gridTicks) stride() int {
	n := len(g.vals)
	for s := 1; ; s *= 10 {
		for _, m := range []int{1, 2, 5} {
			if ceilDiv(n, s*m) <= maxGridLabels {
				return s * m
			}
		}
	}
}

func (g gridTicks) Ticks(lo, hi float64) []plot.Tick {
	if len(g.vals) == 0 {
		return nil
	}
	st := g.stride()
	var ts []plot.Tick
	for i, v := range g.vals {
		if v < lo || v > hi {
			continue
		}
		t := plot.Tick{Value: v}
		if i%st == 0 {
			t.Label = g.text[i]
		} else if len(g.vals) > 60 {
			continue
		}
		ts = append(ts, t)
	}
	return ts
}
