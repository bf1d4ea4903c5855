package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

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

// calendarTicks mark a time axis of Unix seconds (UTC) on round calendar
// steps: whole years (1, 2, 5, 10 ...), quarters or half-years, months,
// weeks (Mondays), days, hours (1, 2, 3, 6, 12) or minutes (5, 10, 15,
// 30), the least step that
// gives at most maxTicks labelled ticks (fewer of longer labels: most),
// labelled as that step needs (2021, 2021-04, 2021-04-05, 04-05 12:00,
// 12:00 within a day). Each labelled tick is at the
// start of its step (January the first, the first of a month, midnight,
// the hour); the next smaller step's boundaries are unlabelled minor
// ticks where they are few enough.
type calendarTicks struct{}

// maxTicks is the most labelled ticks calendarTicks puts on an axis.
const maxTicks = 8

// calStep is one calendar step: n units of unit.
type calStep struct {
	unit string // "hour", "day", "week", "month", "year"
	n    int
}

var calSteps = []calStep{
	{"minute", 5}, {"minute", 10}, {"minute", 15}, {"minute", 30},
	{"hour", 1}, {"hour", 2}, {"hour", 3}, {"hour", 6}, {"hour", 12},
	{"day", 1}, {"week", 1}, {"month", 1}, {"month", 3}, {"month", 6},
	{"year", 1}, {"year", 2}, {"year", 5}, {"year", 10}, {"year", 20}, {"year", 50}, {"year", 100},
}

// floor is t at or before t on a boundary of s.
func (s calStep) floor(t time.Time) time.Time {
	y, m, d := t.Date()
	switch s.unit {
	case "minute":
		return time.Date(y, m, d, t.Hour(), t.Minute()-t.Minute()%s.n, 0, 0, time.UTC)
	case "hour":
		return time.Date(y, m, d, t.Hour()-t.Hour()%s.n, 0, 0, 0, time.UTC)
	case "day":
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case "week":
		return time.Date(y, m, d-(int(t.Weekday())+6)%7, 0, 0, 0, 0, time.UTC)
	case "month":
		return time.Date(y, m-time.Month((int(m)-1)%s.n), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(y-((y%s.n)+s.n)%s.n, 1, 1, 0, 0, 0, 0, time.UTC)
}

// next is the boundary of s after boundary t.
func (s calStep) next(t time.Time) time.Time {
	switch s.unit {
	case "minute":
		return t.Add(time.Duration(s.n) * time.Minute)
	case "hour":
		return t.Add(time.Duration(s.n) * time.Hour)
	case "day":
		return t.AddDate(0, 0, s.n)
	case "week":
		return t.AddDate(0, 0, 7*s.n)
	case "month":
		return t.AddDate(0, s.n, 0)
	}
	return t.AddDate(s.n, 0, 0)
}

// format is the label layout of s's ticks on a span that crosses a year
// (multiYear), a day (multiDay), or neither (the clock alone: the
// figure's title or caption dates it).
func (s calStep) format(multiYear, multiDay bool) string {
	switch s.unit {
	case "minute", "hour":
		switch {
		case multiYear:
			return "2006-01-02 15:04"
		case multiDay:
			return "01-02 15:04"
		}
		return "15:04"
	case "day", "week":
		return "2006-01-02"
	case "month":
		return "2006-01"
	}
	return "2006"
}

// most is the most labelled ticks of layout an axis holds: 8 short
// labels (2021, 2021-04, 12:00), 6 of 10 or 11 characters (2021-04-05,
// 04-05 12:00), 5 longer.
func most(layout string) int {
	switch {
	case len(layout) <= 7:
		return maxTicks
	case len(layout) <= 11:
		return 6
	}
	return 5
}

// boundaries are the boundaries of s in [lo, hi], at most limit+1 of them
// (ok false: more).
func (s calStep) boundaries(lo, hi time.Time, limit int) (ts []time.Time, ok bool) {
	for t := s.floor(lo); !t.After(hi); t = s.next(t) {
		if t.Before(lo) {
			continue
		}
		if ts = append(ts, t); len(ts) > limit {
			return ts, false
		}
	}
	return ts, true
}

func (calendarTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	tl, th := time.Unix(int64(math.Ceil(lo)), 0).UTC(), time.Unix(int64(math.Floor(hi)), 0).UTC()
	multiYear := tl.Year() != th.Year()
	multiDay := multiYear || tl.YearDay() != th.YearDay()
	for i, s := range calSteps {
		layout := s.format(multiYear, multiDay)
		major, ok := s.boundaries(tl, th, most(layout))
		if !ok {
			continue
		}
		if len(major) < 3 && i > 0 {
			// Too many of the smaller step, too few of this one (8 to 20
			// days: two Mondays or fewer): the smaller step's boundaries,
			// every k-th labelled.
			all, _ := calSteps[i-1].boundaries(tl, th, 1<<16)
			prev := calSteps[i-1].format(multiYear, multiDay)
			k := (len(all) + most(prev) - 1) / most(prev)
			ts := make([]plot.Tick, len(all))
			for j, t := range all {
				ts[j].Value = float64(t.Unix())
				if j%k == 0 {
					ts[j].Label = t.Format(prev)
				}
			}
			return ts
		}
		var ts []plot.Tick
		seen := map[int64]bool{}
		for _, t := range major {
			ts = append(ts, plot.Tick{Value: float64(t.Unix()), Label: t.Format(layout)})
			seen[t.Unix()] = true
		}
		if i > 0 {
			if minor, ok := calSteps[i-1].boundaries(tl, th, 5*maxTicks); ok {
				for _, t := range minor {
					if !seen[t.Unix()] {
						ts = append(ts, plot.Tick{Value: float64(t.Unix())})
					}
				}
			}
		}
		return ts
	}
	return nil
}

// upTo ticks an axis as niceTicks would [lo, min(hi, Max)]: a drawdown's
// axis, raised above 0 for its legend, labels no positive drawdown.
type upTo struct{ Max float64 }

func (u upTo) Ticks(lo, hi float64) []plot.Tick {
	return niceTicks{}.Ticks(lo, math.Min(hi, u.Max))
}

// barTimeTicks tick an axis of bar numbers at the bars that open a round
// calendar step (calendarTicks over the bars' times), labelled with their
// time: Time is each bar's, Unix ns. A bar between boundaries (a gap in
// the data) gets no tick.
type barTimeTicks struct{ Time []int64 }

func (b barTimeTicks) Ticks(lo, hi float64) []plot.Tick {
	n := len(b.Time)
	i0, i1 := max(int(math.Ceil(lo)), 0), min(int(math.Floor(hi)), n-1)
	if i0 >= i1 {
		return nil
	}
	var ts []plot.Tick
	for _, t := range (calendarTicks{}).Ticks(float64(b.Time[i0])/1e9, float64(b.Time[i1])/1e9) {
		at := int64(t.Value) * 1e9
		j, found := slices.BinarySearch(b.Time[i0:i1+1], at)
		if found {
			ts = append(ts, plot.Tick{Value: float64(i0 + j), Label: t.Label})
		}
	}
	return ts
}
