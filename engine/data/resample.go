package data

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// timeframes are the bar widths the product offers, finest first.
var timeframes = []struct {
	name string
	d    time.Duration
}{
	{"1m", time.Minute}, {"5m", 5 * time.Minute}, {"15m", 15 * time.Minute}, {"30m", 30 * time.Minute},
	{"1h", time.Hour}, {"4h", 4 * time.Hour}, {"1d", 24 * time.Hour},
}

// Timeframes lists the names ParseTimeframe accepts, finest first.
func Timeframes() []string {
	out := make([]string, len(timeframes))
	for i, tf := range timeframes {
		out[i] = tf.name
	}
	return out
}

// ParseTimeframe reads a bar width: 1m, 5m, 15m, 30m, 1h, 4h or 1d (surrounding
// spaces ignored, case-sensitive: "1M" would read as a month elsewhere). ""
// means no resampling and returns 0.
func ParseTimeframe(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	for _, tf := range timeframes {
		if tf.name == s {
			return tf.d, nil
		}
	}
	return 0, fmt.Errorf("unknown timeframe %q: use one of %s", s, strings.Join(Timeframes(), ", "))
}

// FormatTimeframe names a bar width the way ParseTimeframe reads it ("5m",
// "1h", "1d"); other widths in the largest whole unit ("90s" otherwise).
// 0 gives "".
func FormatTimeframe(d time.Duration) string {
	switch {
	case d == 0:
		return ""
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// Resample aggregates bars into buckets of width tf (SPEC "Input": left-
// labelled, UTC-aligned): a bar at open time t goes to the bucket starting at
// floor(t/tf)*tf (Unix epoch origin, so 1d buckets are UTC days and 4h
// buckets start at 00:00, 04:00, ... UTC). Per bucket: open = first open,
// high = max high, low = min low, close = last close, volume = sum of
// volumes in time order; the bucket's time is its start. Buckets without bars
// are skipped, not filled. tf = 0 returns b unchanged. tf must be at least
// the median spacing of b and a whole multiple of it; a finer or misaligned
// width is an error. The result has new arrays.
func Resample(b Bars, tf time.Duration) (Bars, error) {
	if tf == 0 {
		return b, nil
	}
	if tf < 0 {
		return Bars{}, fmt.Errorf("resample: negative timeframe %v", tf)
	}
	n := b.Len()
	if n == 0 {
		return Bars{}, errors.New("resample: no bars")
	}
	if len(b.Time) != n || len(b.Open) != n || len(b.High) != n || len(b.Low) != n || len(b.Volume) != n {
		return Bars{}, errors.New("resample: the bars' columns have different lengths")
	}
	for i := 1; i < n; i++ {
		if b.Time[i] <= b.Time[i-1] {
			return Bars{}, fmt.Errorf("resample: bar %d is not after bar %d in time", i, i-1)
		}
	}
	w := int64(tf)
	if med := medianSpacing(b.Time); n >= 2 {
		if w < med {
			return Bars{}, fmt.Errorf("resample to %s: the bars are %s apart (median spacing), coarser than %s; "+
				"pick a timeframe of at least %s", FormatTimeframe(tf), time.Duration(med), FormatTimeframe(tf), time.Duration(med))
		}
		if w%med != 0 {
			return Bars{}, fmt.Errorf("resample to %s: not a whole multiple of the bars' median spacing %s",
				FormatTimeframe(tf), time.Duration(med))
		}
	}
	if b.Time[0] < math.MinInt64+w {
		return Bars{}, fmt.Errorf("resample to %s: first bar %s is too early to bucket", FormatTimeframe(tf), fmtTime(b.Time[0]))
	}
	bucket := func(t int64) int64 {
		q := t / w
		if t%w < 0 {
			q--
		}
		return q * w
	}
	est := n
	if span := spacing(b.Time[0], b.Time[n-1]); span/w+2 < int64(n) {
		est = int(span/w + 2)
	}
	out := Bars{
		Time: make([]int64, 0, est), Open: make([]float64, 0, est), High: make([]float64, 0, est),
		Low: make([]float64, 0, est), Close: make([]float64, 0, est), Volume: make([]float64, 0, est),
	}
	cur := bucket(b.Time[0])
	o, h, l, c, v := b.Open[0], b.High[0], b.Low[0], b.Close[0], b.Volume[0]
	overflow := false
	flush := func() {
		overflow = overflow || math.IsInf(v, 0)
		out.Time = append(out.Time, cur)
		out.Open = append(out.Open, o)
		out.High = append(out.High, h)
		out.Low = append(out.Low, l)
		out.Close = append(out.Close, c)
		out.Volume = append(out.Volume, v)
	}
	for i := 1; i < n; i++ {
		if k := bucket(b.Time[i]); k != cur {
			flush()
			cur = k
			o, h, l, c, v = b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]
			continue
		}
		h = max(h, b.High[i])
		l = min(l, b.Low[i])
		c = b.Close[i]
		v += b.Volume[i]
	}
	flush()
	if overflow {
		return Bars{}, fmt.Errorf("resample to %s: a bucket's volume overflows float64", FormatTimeframe(tf))
	}
	return out, nil
}

// Resample returns a new Dataset with the bars aggregated to tf (see the
// function Resample) and Info updated: Timeframe, Bars, First, Last, gaps,
// spacing and price range recomputed; SourceBars keeps the file's bar count.
// tf = 0 returns a Dataset sharing d's bars. d is not changed.
func (d *Dataset) Resample(tf time.Duration) (*Dataset, error) {
	if tf == 0 {
		nd := *d
		return &nd, nil
	}
	nb, err := Resample(d.Bars, tf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Info.Name, err)
	}
	nd := &Dataset{Info: d.Info, Bars: nb}
	nd.Info.Timeframe = FormatTimeframe(tf)
	nd.Info.setStats(&nd.Bars)
	return nd, nil
}
