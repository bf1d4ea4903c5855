package data

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// setStats fills the fields of Info that describe the bars: count, first and
// last time, spacing, gaps and price range. The median spacing is the lower
// median of the n-1 differences between consecutive open times (an actual
// spacing of the file, never an average of two); a gap is a spacing larger
// than it (SPEC "Input files": gaps are counted, not errors).
func (in *Info) setStats(b *Bars) {
	n := b.Len()
	in.Bars = n
	in.First, in.Last = b.First(), b.Last()
	in.Gaps, in.LargestGap, in.MedianSpacing = 0, 0, 0
	in.Calendar, in.CalendarWhy = "", ""
	in.MinPrice, in.MaxPrice = 0, 0
	if n == 0 {
		return
	}
	in.MinPrice, in.MaxPrice = b.Low[0], b.High[0]
	for i := 1; i < n; i++ {
		in.MinPrice = min(in.MinPrice, b.Low[i])
		in.MaxPrice = max(in.MaxPrice, b.High[i])
	}
	if n < 2 {
		return
	}
	med := medianSpacing(b.Time)
	in.MedianSpacing = time.Duration(med)
	var gapHours [24]int // the UTC hour of the last bar before each gap
	for i := 1; i < n; i++ {
		if d := spacing(b.Time[i-1], b.Time[i]); d > med {
			in.Gaps++
			in.LargestGap = max(in.LargestGap, time.Duration(d))
			gapHours[time.Unix(0, b.Time[i-1]).UTC().Hour()]++
		}
	}
	in.Calendar, in.CalendarWhy = calendarOf(n, spacing(b.Time[0], b.Time[n-1]), med, in.Gaps, gapHours)
}

// The calendars a series can follow (Info.Calendar).
const (
	Calendar247      = "24/7"     // bars around the clock (gaps, if any, irregular)
	CalendarSessions = "sessions" // regular gaps: nights, weekends (exchange sessions)
)

// minCalendarSpan: a series shorter than this (a week) does not show its
// calendar.
const minCalendarSpan = 7 * 24 * time.Hour

// calendarOf tells a series that follows exchange sessions from one that
// runs around the clock, from n bars over span with median spacing med,
// gaps of them and the UTC hour of the bar before each gap. Sessions: the
// bars cover under 90% of the span at the median spacing, and the gaps are
// regular: about one a week or more, 80% or more of them after the
// same two hours of the day (two, for the DST shift of a local close).
// A 24/7 series with outages has irregular gaps; a daily or hourly equity
// series has a gap every night or weekend after its close. "" when the
// span is under a week; why says what was seen.
func calendarOf(n int, span, med int64, gaps int, gapHours [24]int) (calendar, why string) {
	if time.Duration(span) < minCalendarSpan || med <= 0 {
		return "", "under a week of bars: too short to tell the calendar"
	}
	coverage := float64(n-1) * float64(med) / float64(span)
	cover := fmt.Sprintf("bars cover %.0f%% of the time", 100*min(coverage, 1))
	if coverage >= 0.9 {
		return Calendar247, cover
	}
	slices.Sort(gapHours[:])
	top2 := gapHours[23] + gapHours[22]
	weeks := float64(span) / float64(7*24*time.Hour)
	share := float64(top2) / float64(max(gaps, 1))
	noun := "gaps"
	if gaps == 1 {
		noun = "gap"
	}
	gapText := fmt.Sprintf("%s %s, %.0f%% of them after the same two hours of the day", thousands(gaps), noun, 100*share)
	if float64(gaps+1) >= weeks && share >= 0.8 { // +1: a week cut at either end

		return CalendarSessions, cover + "; " + gapText
	}
	return Calendar247, cover + "; irregular gaps (" + gapText + ")"
}

// ObservedBarsPerYear is the number of bars per average year (365.25 days)
// over the series' span: (bars - 1) / (last - first). 0 for fewer than two
// bars.
func (in *Info) ObservedBarsPerYear() float64 {
	span := in.Last.Sub(in.First)
	if in.Bars < 2 || span <= 0 {
		return 0
	}
	return float64(in.Bars-1) / (span.Hours() / (365.25 * 24))
}

// medianSpacing returns the lower median of the differences between
// consecutive times (nanoseconds); 0 for fewer than two times.
func medianSpacing(t []int64) int64 {
	if len(t) < 2 {
		return 0
	}
	d := make([]int64, len(t)-1)
	for i := range d {
		d[i] = spacing(t[i], t[i+1])
	}
	slices.Sort(d)
	return d[(len(d)-1)/2]
}

// spacing returns b-a for increasing times, saturating at the int64 maximum
// (bars at both ends of the representable range, 1678 and 2262, are more
// than 292 years apart).
func spacing(a, b int64) int64 {
	d := b - a
	if d < 0 {
		return math.MaxInt64
	}
	return d
}

// Head returns the first n bars as a new Dataset (sharing the arrays) with
// every statistic of Info (bars, last time, gaps, spacing, price range)
// recomputed for those bars; Name gets a "[:n]" suffix so reports say the
// data was trimmed. n <= 0 or n >= the bar count returns d unchanged.
func (d *Dataset) Head(n int) *Dataset {
	if n <= 0 || n >= d.Bars.Len() {
		return d
	}
	nd := &Dataset{Info: d.Info, Bars: d.Bars.Slice(0, n)}
	nd.Info.Name = fmt.Sprintf("%s[:%d]", d.Info.Name, n)
	nd.Info.setStats(&nd.Bars)
	return nd
}

// Window returns the bars whose open time t satisfies from <= t < to (a
// zero from or to: no bound), sharing d's arrays, with the window in its
// name. Errors: *Error naming the range when no bar is inside it.
func (d *Dataset) Window(from, to time.Time) (*Dataset, error) {
	if from.IsZero() && to.IsZero() {
		return d, nil
	}
	lo, hi := 0, d.Bars.Len()
	if !from.IsZero() {
		f := from.UnixNano()
		lo = sort.Search(hi, func(i int) bool { return d.Bars.Time[i] >= f })
	}
	if !to.IsZero() {
		e := to.UnixNano()
		hi = sort.Search(hi, func(i int) bool { return d.Bars.Time[i] >= e })
	}
	if lo >= hi {
		first, last := time.Unix(0, d.Bars.Time[0]).UTC(), time.Unix(0, d.Bars.Time[d.Bars.Len()-1]).UTC()
		return nil, &Error{File: d.Info.Name, Reason: fmt.Sprintf("no bar from %s to %s: the bars run from %s to %s",
			windowEdge(from, "the start"), windowEdge(to, "the end"), first.Format("2006-01-02 15:04"), last.Format("2006-01-02 15:04 MST"))}
	}
	nd := &Dataset{Info: d.Info, Bars: d.Bars.Slice(lo, hi)}
	nd.Info.Name = fmt.Sprintf("%s[%s..%s]", d.Info.Name, windowEdge(from, ""), windowEdge(to, ""))
	nd.Info.setStats(&nd.Bars)
	return nd, nil
}

func windowEdge(t time.Time, none string) string {
	if t.IsZero() {
		return none
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// ReadAs says how the file's numbers were read, for the dataset summary:
// the convention that decided it, the price scale and the times' form and
// zone, e.g. "LEAN equity/usa (from the path): prices / 10,000, local
// times in America/New_York" or "prices as stored, Unix times (UTC)".
// Everything from the path is sanitised. "" when the Info was not made by
// a loader (an old saved session).
func (in *Info) ReadAs() string {
	var parts []string
	switch {
	case in.PriceScale == 1:
		parts = append(parts, "prices as stored")
	case in.PriceScale > 0:
		parts = append(parts, "prices / "+thousands(int(in.PriceScale)))
	}
	switch in.Times {
	case TimesUnix:
		parts = append(parts, "Unix times (UTC)")
	case TimesOffset:
		parts = append(parts, "times with UTC offsets")
	case TimesLocal:
		parts = append(parts, "local times in "+in.TimeZone)
	case TimesMixed:
		s := "times in mixed forms"
		if in.TimeZone != "" {
			s += " (local ones in " + in.TimeZone + ")"
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, ", ")
	if in.Convention != "" {
		s = in.Convention + ": " + s
	}
	return Sanitize(s)
}
