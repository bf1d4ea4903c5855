package data

import (
	"fmt"
	"math"
	"slices"
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
	for i := 1; i < n; i++ {
		if d := spacing(b.Time[i-1], b.Time[i]); d > med {
			in.Gaps++
			in.LargestGap = max(in.LargestGap, time.Duration(d))
		}
	}
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
