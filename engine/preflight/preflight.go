package preflight

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/memlimit"
	"sweepbench/engine/text"
)

// The thresholds of Preflight, the check a front end makes before a study
// computes.
const (
	// ConfirmTime: a study on the CPU reference estimated to take longer
	// than this starts only once the user has confirmed it (`run --yes`, a
	// second enter in the workbench): hours of CPU a mistyped range can
	// cost.
	ConfirmTime = 5 * time.Minute
	// ShowEstimateOver: a study estimated to take longer than this has its
	// estimate said before it starts.
	ShowEstimateOver = 10 * time.Second
	// ConfirmMemoryFraction: a study whose memory forecast exceeds this
	// fraction of the memory available (memlimit.SystemMemoryLimit) starts only
	// once confirmed too: it leaves the machine little else.
	ConfirmMemoryFraction = 0.5
)

// Rates bound the CPU reference's speed per core for the arithmetic part
// of Preflight (no calibration): Fast is a floor on the time of one
// backtest bar (faster than any machine runs it: the time of a study at
// that rate is a lower bound), Slow and SlowSeries ceilings on a backtest
// bar and on one bar of a WMA window of length 1 (the direct WMA costs the
// length per bar; a study under ShowEstimateOver at those rates is not
// calibrated), and Typical a realistic time of one backtest bar with its
// share of the series: the estimate ("about") of a study too long to
// calibrate (0: none known, the floor is said instead, as a lower bound).
// Nanoseconds.
type Rates struct {
	Fast, Slow, SlowSeries float64
	Typical                float64
}

// DefaultRates: about 40 times faster and 5 times slower than a 2023
// server core, and that core (a backtest bar ~10 ns with its share of the
// series).
var DefaultRates = Rates{Fast: 0.25, Slow: 50, SlowSeries: 2, Typical: 10}

// PreflightOptions say how the study will run and how to check it.
type PreflightOptions struct {
	Discard bool // the per-combo results are not kept (StudyOptions.Discard)
	Yes     bool // the user has confirmed already (`--yes`): no ConfirmError
	// Calibrate times the study (nil: EstimateStudy); Rates bound it
	// without calibration (zero: DefaultRates). Tests inject both, so that
	// nothing depends on the host's speed.
	Calibrate func(context.Context, *engine.Study) (Estimate, error)
	Rates     Rates
	Workers   int // cores the work is spread over (0: GOMAXPROCS)
}

// Preflight is what is known of a study before it computes.
type Preflight struct {
	Memory engine.MemoryForecast
	Limit  memlimit.MemoryLimit // SystemMemoryLimit when checked (LimitNone: unknown)
	// Floor and Ceiling bound the study's time on the CPU reference from
	// arithmetic alone (Rates; 0 for another backend).
	Floor, Ceiling time.Duration
	// About is its time from arithmetic alone at Rates.Typical (0: no
	// typical rate known, or another backend), on Workers cores.
	About   time.Duration
	Workers int
	// Estimate is the calibration's (EstimateStudy), when it ran: a CPU
	// reference study over ShowEstimateOver at the slow rates, under
	// ConfirmTime at the fast one.
	Estimate *Estimate
	// Uncalibrated: a strategy grid's study, which EstimateStudy does not
	// time; its time is About (the grid's size and the bars at
	// Rates.Typical), said and confirmed as a calibrated estimate is.
	Uncalibrated bool
}

// Time is the study's expected time: the calibrated estimate, else when
// the floor alone is over ConfirmTime (too long to calibrate) the typical
// rate's figure (About), or the floor where no typical rate is known (the
// study is that long at least), else 0 (short, or not the CPU reference).
func (p Preflight) Time() time.Duration {
	switch {
	case p.Estimate != nil:
		return p.Estimate.Total
	case p.Uncalibrated && p.About > 0:
		return p.About
	case p.Floor > ConfirmTime && p.About > 0:
		return p.About
	case p.Floor > ConfirmTime:
		return p.Floor
	}
	return 0
}

// Show reports whether the estimate is worth saying before the study
// starts (its time is over ShowEstimateOver).
func (p Preflight) Show() bool { return p.Time() > ShowEstimateOver }

// Describe is the estimate in words: the calibration's one line
// (Estimate.String), "about 51 days on 2 cores (from the grid's size and
// the bars alone)" at the typical rate, or "at least ~3h0m0s (...)" where
// only the floor is known.
func (p Preflight) Describe() string {
	if p.Estimate != nil {
		return p.Estimate.String()
	}
	if p.About > 0 {
		return fmt.Sprintf("about %s on %s (from the grid's size and the bars alone)", longDuration(p.About), text.Plural(p.Workers, "core"))
	}
	if p.Floor > 0 {
		return fmt.Sprintf("at least ~%s (from the grid's size and the bars alone)", longDuration(p.Floor))
	}
	return "an unknown time"
}

// longDuration is d as Describe says it: in days from two days up ("51
// days"), to the minute from an hour up, else roundDuration's.
func longDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d >= 2*day:
		return text.Plural(int((d+day/2)/day), "day")
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	}
	return roundDuration(d).String()
}

// heavyMemory reports whether the forecast is over ConfirmMemoryFraction
// of the memory available.
func (p Preflight) heavyMemory() bool {
	return p.Limit.Available > 0 && float64(p.Memory.Total()) > ConfirmMemoryFraction*float64(p.Limit.Available)
}

// ConfirmError asks for the user's confirmation before a study starts
// (PreflightStudy without Yes): its time is over ConfirmTime (Long), or
// its memory over ConfirmMemoryFraction of what is available (Heavy).
type ConfirmError struct {
	Size        string // Study.Size
	Precisions  int    // how many the study runs (one precision is quicker only with two)
	Strategy    string // a strategy grid's family ("" for hull): only the CPU reference computes it
	Long, Heavy bool
	Preflight   Preflight
}

func (e *ConfirmError) Error() string {
	var why []string
	if e.Long {
		why = append(why, fmt.Sprintf("on the CPU reference would take %s", e.Preflight.Describe()))
	}
	if e.Heavy {
		why = append(why, e.Memory())
	}
	s := e.Size
	for i, w := range why {
		if i > 0 {
			s += " and"
		}
		s += " " + w
	}
	return s + ": it needs a confirmation"
}

// Memory says the forecast against the limit: "would take about 9.1 GiB of
// memory, more than half of the 12.0 GiB available (bound by ...)".
func (e *ConfirmError) Memory() string {
	p := e.Preflight
	return fmt.Sprintf("would take about %s of memory, more than half of the %s available (bound by %s)",
		text.Bytes(p.Memory.Total()), text.Bytes(p.Limit.Available), p.Limit.Describe())
}

// PreflightStudy checks s before it computes, cheapest first: from
// arithmetic alone, a study that cannot fit (checkMemory: its per-combo
// results, or one combo's series, beyond the memory available) is refused
// with *MemoryError and one whose time at the fast rate is over ConfirmTime
// (a 10^10-combo grid) with *ConfirmError (unless opt.Yes), at once; then
// a CPU reference study that could take over ShowEstimateOver at the slow
// rates is calibrated (opt.Calibrate), and one estimated over ConfirmTime,
// or whose memory forecast is over ConfirmMemoryFraction of the limit, is
// refused with *ConfirmError unless opt.Yes. The Preflight is returned with
// any error (Show: the estimate is worth saying before the study starts).
func PreflightStudy(ctx context.Context, s *engine.Study, opt PreflightOptions) (Preflight, error) {
	var p Preflight
	if err := s.Validate(); err != nil {
		return p, err
	}
	p.Memory = engine.ForecastMemoryWith(s, opt.Discard)
	var err error
	if p.Limit, err = engine.CheckMemory(s, opt.Discard); err != nil {
		return p, err
	}
	confirm := func() error {
		if opt.Yes {
			return nil
		}
		long := p.Time() > ConfirmTime
		if !long && !p.heavyMemory() {
			return nil
		}
		ce := &ConfirmError{Size: s.Size(), Precisions: len(s.Precisions), Long: long, Heavy: p.heavyMemory(), Preflight: p}
		if s.Grid.Strategy != nil {
			ce.Strategy = s.Grid.Family()
		}
		return ce
	}
	// A strategy grid (or an option only the reference computes) runs on
	// the fallback, the CPU reference, whatever the backend
	// (Study.FallbackNote).
	onCPU := s.OnReference()
	if !onCPU {
		return p, confirm()
	}
	r := opt.Rates
	if r == (Rates{}) {
		r = DefaultRates
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = max(1, runtime.GOMAXPROCS(0))
	}
	p.Floor, p.Ceiling, p.About = timeBounds(s, r, workers)
	if p.About > 0 {
		p.Workers = workers
	}
	if s.Grid.Strategy != nil {
		// Not calibrated (EstimateStudy times hull's arithmetic): its
		// size and bars at the typical rate are its estimate.
		p.Uncalibrated = true
		return p, confirm()
	}
	if p.Floor > ConfirmTime || p.Ceiling <= ShowEstimateOver {
		// Too long to calibrate for (the calibration of a long grid's
		// middle lengths takes seconds), or too short to be worth it.
		return p, confirm()
	}
	cal := opt.Calibrate
	if cal == nil {
		cal = EstimateStudy
	}
	if e, err := cal(ctx, s); err == nil {
		p.Estimate = &e
	} else if ctx.Err() != nil {
		return p, ctx.Err()
	}
	// A calibration that failed leaves the time unknown: it is not asked
	// for (the study's own error will say what is wrong).
	return p, confirm()
}

// timeBounds are s's time on workers cores at rates r, from arithmetic
// alone: the floor counts the backtests only (computed combos x bars x
// precisions at r.Fast), the ceiling adds the parity pass (another
// backtest's worth a combo) and the series (each unique HMA length L:
// about 2L per bar for its three WMAs; each HMA3 p: about 3p; at
// r.SlowSeries), and about is the backtests and the parity pass at
// r.Typical (its share of the series included; 0 when r.Typical is).
//
// A strategy grid (Grid.Strategy) has its combos (Grid.Len) and, for the
// ceiling's series, the sum of the values of its length axes (its legs and
// integer parameters: one series per length, at most its length per bar)
// in hull's place.
func timeBounds(s *engine.Study, r Rates, workers int) (floor, ceiling, about time.Duration) {
	d := s.Grid.Distinct()
	bars := float64(s.Dataset.Bars.Len())
	precs := float64(len(s.Precisions))
	steps := float64(d.Len()) * bars * precs
	if len(s.Precisions) > 1 {
		steps += float64(d.Len()) * bars
	}
	sum := func(r engine.Range) float64 { return float64(r.Len()) * (float64(r.Start) + float64(r.Last())) / 2 }
	var lengths float64
	if st := d.Strategy; st != nil {
		lengths = strategyLengths(st)
	} else {
		lengths = 2*sum(d.HMA) + 3*sum(d.HMA3)
	}
	w := float64(workers)
	ns := func(v float64) time.Duration {
		if v >= float64(1<<62) {
			return 1 << 62
		}
		return time.Duration(v)
	}
	floor = ns(float64(d.Len()) * bars * precs * r.Fast / w)
	ceiling = ns((steps*r.Slow + lengths*bars*precs*r.SlowSeries) / w)
	about = ns(steps * r.Typical / w)
	return floor, ceiling, about
}

// strategyLengths is the sum of the values of a strategy grid's length
// axes (a leg's lengths, an integer parameter's values), each series
// costing at most its length per bar: a ceiling (a threshold that is a
// whole number, which costs no series, is counted too).
func strategyLengths(st engine.Strategy) float64 {
	var n float64
	for _, ax := range st.Axes() {
		for _, v := range ax.Values {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f != math.Trunc(f) || f < 0 {
				continue // a decimal threshold
			}
			n += f
		}
	}
	return n
}
