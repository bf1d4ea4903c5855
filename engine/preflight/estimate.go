package preflight

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/text"
)

// Estimate is a forecast of the wall time of RunStudy on the CPU reference,
// calibrated on the study's own bars (see EstimateStudy).
type Estimate struct {
	Combos int // combos per precision (the grid's size)
	// Computed is the combos backtested per precision: Combos less the
	// HMA3 aliases, computed with their twin (Grid.Distinct).
	Computed int
	Series   int // indicator series built per precision: unique HMA lengths plus one HMA3 per p (per tile, summed, when tiled)
	Tiles    int // tiles the study runs in (1: untiled; see RunStudy)
	Workers  int // goroutines the work is spread over (GOMAXPROCS)
	// Measured on one core for the middle combo of the grid, summed over the
	// study's precisions.
	PerHMA    time.Duration // one HMA series of the middle HMA length
	PerHMA3   time.Duration // one HMA3 series of the middle HMA3 length
	PerCombo  time.Duration // one backtest of the middle combo
	Parity    bool          // both fp64 and fp32 run, so the parity pass is counted
	Total     time.Duration // the forecast: see EstimateStudy
	Calibrate time.Duration // how long the calibration itself took
}

// String is a one-line summary, e.g. "~1.2s (80 combos x 2 precisions on 8 cores)".
func (e Estimate) String() string {
	tiles := ""
	if e.Tiles > 1 {
		tiles = fmt.Sprintf(" in %d tiles", e.Tiles)
	}
	return fmt.Sprintf("~%s (%s a precision, %s%s, %s)", roundDuration(e.Total), text.Plural(e.Combos, "combo"), text.Thousands(e.Series)+" series", tiles, text.Plural(e.Workers, "core"))
}

// EstimateStudy forecasts how long RunStudy(s) takes on the CPU reference
// backend. It times, on the study's bars and in each of its precisions and
// formulations, one HMA series of the middle HMA length, one HMA3 series of
// the middle HMA3 length and one backtest of the middle combo (the best of
// three, so one page fault or preemption does not dominate), on every core
// at once as the sweep loads them (timeLoaded: the median core's), then
// scales:
//
//	Total = sum over precisions of (nHMA*PerHMA + nHMA3*PerHMA3 + combos*PerCombo) / Workers
//	        + combos*PerCombo/Workers when both fp64 and fp32 run (the parity
//	          pass, bounded above by one backtest's worth of work per combo)
//
// with nHMA the unique HMA lengths, nHMA3 the unique HMA3 series (one per
// p; each tile's, summed, when the study runs in tiles, plus the same
// again for the parity pass, which builds them once more), combos those computed (the grid's size less its aliases) and Workers =
// runtime.GOMAXPROCS(0), the reference backend's default thread count. The
// calibration costs about one combo per precision: milliseconds on a small
// file, tens of milliseconds at 150k bars. A GPU backend is not modelled
// (its time is dominated by uploads and kernel launches): for it the figure
// is an upper bound. Returns Study.Validate's error for an invalid study,
// ErrNoArithmetic when no Arithmetic is registered (the calibration runs on
// it) and ctx.Err() when cancelled.
//
// A strategy grid (Grid.Strategy) is not calibrated (the Arithmetic times
// hull's series and backtest only): it returns ErrNotCalibrated, and
// PreflightStudy estimates such a study from its size and bars alone.
func EstimateStudy(ctx context.Context, s *engine.Study) (Estimate, error) {
	if err := s.Validate(); err != nil {
		return Estimate{}, err
	}
	if s.Grid.Strategy != nil {
		return Estimate{}, fmt.Errorf("estimate: %w (a %s grid; its time is estimated from the grid's size and the bars alone)", ErrNotCalibrated, s.Grid.Family())
	}
	start := time.Now()
	g := s.Grid
	d := g.Distinct()
	e := Estimate{Combos: g.Len(), Computed: d.Len(), Series: d.HMA.Len() + d.HMA3.Len(), Workers: max(1, runtime.GOMAXPROCS(0))}
	c := engine.Combo{HMA: g.HMA.At(g.HMA.Len() / 2), HMA3: g.HMA3.At(g.HMA3.Len() / 2)}
	a, err := engine.CPU()
	if err != nil {
		return Estimate{}, err
	}
	var has64, has32 bool
	for _, p := range s.Precisions {
		if err := ctx.Err(); err != nil {
			return Estimate{}, err
		}
		job := &engine.Job{Bars: &s.Dataset.Bars, Grid: g, Params: s.Params, Precision: p, WMA: s.WMA}
		if p == engine.FP32 {
			has32 = true
		} else {
			has64 = true
			job.WMA = engine.Direct
		}
		t, err := timeLoaded(ctx, a, job, c, e.Workers)
		if err != nil {
			return Estimate{}, fmt.Errorf("estimate: combo (hma %d, hma3 %d): %w", c.HMA, c.HMA3, err)
		}
		e.PerHMA += t.HMA
		e.PerHMA3 += t.HMA3
		e.PerCombo += t.Backtest
	}
	e.Parity = has64 && has32
	// A tiled study builds each tile's series, and again for its parity
	// report (the series are not kept between the lanes and the report).
	nH, nH3 := d.HMA.Len(), d.HMA3.Len()
	e.Tiles = 1
	if ts, err := s.TileGrids(true); err == nil && len(ts) > 1 {
		e.Tiles, nH, nH3 = len(ts), 0, 0
		for _, t := range ts {
			td := t.Distinct()
			nH, nH3 = nH+td.HMA.Len(), nH3+td.HMA3.Len()
		}
		e.Series = nH + nH3
	}
	series := time.Duration(nH)*e.PerHMA + time.Duration(nH3)*e.PerHMA3
	work := series + time.Duration(e.Computed)*e.PerCombo
	if e.Parity {
		work += time.Duration(e.Computed) * e.PerCombo / 2
		if e.Tiles > 1 {
			work += series
		}
	}
	e.Total = work / time.Duration(e.Workers)
	e.Calibrate = time.Since(start)
	return e, nil
}

// ErrNotCalibrated: EstimateStudy times hull's arithmetic only, not a
// strategy family's.
var ErrNotCalibrated = errors.New("only hull studies are calibrated")

// roundDuration keeps two or three significant figures for display.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

// timeLoaded times combo c of job as the sweep will run it: on every one of
// workers cores at once (each goroutine times its own copy, the best of
// three as TimeCombo does), so that what the cores share (memory
// bandwidth, a second hardware thread, the machine's other load) is in the
// figure; it returns the median of the workers' times. Timed on one core
// alone, a 2-core machine's estimate came out at two thirds of the run.
func timeLoaded(ctx context.Context, a engine.Arithmetic, job *engine.Job, c engine.Combo, workers int) (engine.ComboTiming, error) {
	ts := make([]engine.ComboTiming, workers)
	errs := make([]error, workers)
	_ = engine.Parallel(ctx, workers, workers, func(_, i int) {
		ts[i], errs[i] = a.TimeCombo(ctx, job, c)
	})
	for _, err := range errs {
		if err != nil {
			return engine.ComboTiming{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return engine.ComboTiming{}, err
	}
	med := func(f func(engine.ComboTiming) time.Duration) time.Duration {
		v := make([]time.Duration, len(ts))
		for i, t := range ts {
			v[i] = f(t)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return engine.ComboTiming{HMA: med(func(t engine.ComboTiming) time.Duration { return t.HMA }),
		HMA3:     med(func(t engine.ComboTiming) time.Duration { return t.HMA3 }),
		Backtest: med(func(t engine.ComboTiming) time.Duration { return t.Backtest })}, nil
}
