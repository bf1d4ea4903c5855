package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Arithmetic is the CPU arithmetic of docs/SPEC.md (indicators, backtest,
// metrics) as engine needs it outside a Backend: the indicator series the
// parity report compares, the one-combo recomputation of the workbench,
// the calibration of EstimateStudy and the CPU rungs of the bench ladder.
// The reference package implements it and registers itself in its init (the
// database/sql driver pattern): engine imports no backend, and main imports
// reference anyway. Methods may be called concurrently.
type Arithmetic interface {
	// Indicators64 and Indicators32 return every series job's grid needs in
	// float64 or float32, in job.WMA's formulation from job.Params.Source
	// (job.Precision is not read: the method names the precision). They are
	// shared through job.Cache when it is set, computed on job.Threads cores
	// (0 = all), and return ctx.Err() when ctx is cancelled.
	Indicators64(ctx context.Context, job *Job) (*Indicators[float64], error)
	Indicators32(ctx context.Context, job *Job) (*Indicators[float32], error)
	// TraceCombo recomputes combo c of job in job.Precision and job.WMA
	// through the code path of the reference sweep, so its metrics are the
	// sweep's bit for bit, with its bar-by-bar record.
	TraceCombo(ctx context.Context, job *Job, c Combo) (ComboTrace, error)
	// TimeCombo measures, on one core, one HMA series, one HMA3 series and
	// one backtest of combo c in job.Precision and job.WMA, each the best of
	// three runs (EstimateStudy's calibration).
	TimeCombo(ctx context.Context, job *Job, c Combo) (ComboTiming, error)
	// NaiveSweep evaluates every combo of job in fp64, serially, each combo
	// recomputing its own WMAs with the textbook scalar loop (no shared
	// series, no vector path): the bench ladder's baseline M0. It returns
	// the metrics in grid order and the time spent on indicators.
	NaiveSweep(ctx context.Context, job *Job) ([]Metrics, time.Duration, error)
	// BacktestSeries64 evaluates every combo of job in fp64 over the given
	// series (h by HMA length, h3 by HMA3 length, each len n) and the bars'
	// fp64 returns, on every core: the CPU half of the bench rung M5.
	BacktestSeries64(ctx context.Context, job *Job, h, h3 map[int][]float64) ([]Metrics, error)
	// Positions64 and Positions32 write pos[i] for i in [0, len(pos)), the
	// position held over bar i+1 by SPEC's state machine ("Signal,
	// position, fills"): 0 before first, +1 when h3 > h, -1 when h3 < h
	// (0 in long-only), unchanged when equal, starting from state prev;
	// they return the state after the last bar, so a series can be walked
	// in blocks of bars. Parity compares them.
	Positions64(h, h3 []float64, first int, mode Mode, prev int8, pos []int8) int8
	Positions32(h, h3 []float32, first int, mode Mode, prev int8, pos []int8) int8
	// PositionFlips walks that state machine over the fp64 series (h, h3)
	// and the fp32 series (g, g3) side by side, both from state 0, over
	// bars [first, held), and calls flip(i, p64, p32) at each bar whose
	// positions differ: the positions Positions64 and Positions32 give,
	// compared, without writing them (parity's common case, in one pass).
	PositionFlips(h, h3 []float64, g, g3 []float32, first, held int, mode Mode, flip func(i int, p64, p32 int8))
}

// ComboTrace is one combo recomputed with its record (Arithmetic.TraceCombo).
type ComboTrace struct {
	Metrics Metrics
	Trace   *Trace
	H, H3   []float64 // the combo's HMA and HMA3 series widened to float64 (NaN in the warm-up)
}

// ComboTiming is Arithmetic.TimeCombo's measurement.
type ComboTiming struct {
	HMA, HMA3, Backtest time.Duration
}

// ErrNoArithmetic is returned by what needs the CPU arithmetic (CompareRuns,
// InspectCombo, EstimateStudy, the CPU bench rungs) when no Arithmetic is
// registered: the program does not import sweepbench/reference.
var ErrNoArithmetic = errors.New("no CPU arithmetic registered (import sweepbench/reference)")

var registered atomic.Pointer[Arithmetic]

// RegisterArithmetic makes a the Arithmetic engine uses; package reference
// calls it in its init. A later call replaces the earlier one; nil removes it.
func RegisterArithmetic(a Arithmetic) {
	if a == nil {
		registered.Store(nil)
		return
	}
	registered.Store(&a)
}

// CPU returns the registered Arithmetic, or ErrNoArithmetic.
func CPU() (Arithmetic, error) {
	if a := registered.Load(); a != nil {
		return *a, nil
	}
	return nil, ErrNoArithmetic
}

// IndicatorsOf returns job's indicator series in F from the registered
// Arithmetic (Indicators64 or Indicators32), shared through job.Cache.
func IndicatorsOf[F Float](ctx context.Context, job *Job) (*Indicators[F], error) {
	a, err := CPU()
	if err != nil {
		return nil, err
	}
	var ind any
	switch any(*new(F)).(type) {
	case float64:
		ind, err = a.Indicators64(ctx, job)
	case float32:
		ind, err = a.Indicators32(ctx, job)
	default:
		return nil, fmt.Errorf("indicators in %T: only float32 and float64 are computed", *new(F))
	}
	if err != nil {
		return nil, err
	}
	return ind.(*Indicators[F]), nil
}
