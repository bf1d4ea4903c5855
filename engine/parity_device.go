package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ParityDevice is implemented by backends that run the parity pass of SPEC
// "Parity" on their device: from the indicator series of both precisions,
// computed there, they find every combo's flips and the per-series
// indicator errors, and return only counts and the worst flips. RunStudy
// uses it when one such backend ran both lanes of a study (CompareOnDevice);
// the report is the one Compare builds on the CPU, field for field.
type ParityDevice interface {
	// DeviceParity runs the pass for every combo of job's grid: job is the
	// fp64 reference's (Direct), test and testWMA name the run under test's
	// precision and formulation, tol is the borderline margin (> 0).
	DeviceParity(ctx context.Context, job *Job, test Precision, testWMA Formulation, tol float64) (*DeviceParity, error)
}

// DeviceParity is what a ParityDevice found, per combo of the grid and over
// it.
type DeviceParity struct {
	// Per grid index (length Grid.Len()): flips, flips with margin >= tol
	// (or NaN), and the largest flip margin (0 when none; NaN propagates as
	// math.Max does), as Compare counts them.
	Flips, NonBorderline []int32
	MaxMargin            []float64
	// Worst holds at least the MaxFlipsListed worst flips (all of them
	// when there are fewer), in any order, with Index, Bar, Pos64, Pos32
	// and Margin set; CompareOnDevice fills in Combo, Time and Borderline.
	Worst []Flip
	// IndicatorErrors: one per series, the HMA series in grid order then
	// the HMA3 series (Compare's order before its stable sort).
	IndicatorErrors []SeriesError
	Device          string        // where it ran, for the report
	Elapsed         time.Duration // device time of the parity kernels
}

// ErrParityIncomplete: the device pass compares complete runs only (a
// cancelled or resumed-in-part study uses the CPU's Compare).
var ErrParityIncomplete = errors.New("parity on the device needs both runs complete")

// CompareOnDevice builds the parity report of test against ref (complete
// runs of job's grid) with dev finding the flips and indicator errors: the
// same report Compare builds on the CPU (same verdict, counts and flip
// bars; margins bit-identical where the device rounds as IEEE does), with
// Parity.Device naming the device. Trade counts and PnL come from the
// runs.
func CompareOnDevice(ctx context.Context, dev ParityDevice, job *Job, ref, test *Run, tol float64) (*Parity, error) {
	n := job.Grid.Len()
	if !ref.Complete() || !test.Complete() || ref.Count() != n || test.Count() != n {
		return nil, ErrParityIncomplete
	}
	p := newParity(ref, test, tol)
	j64 := *job
	j64.Precision, j64.WMA = FP64, Direct
	df, err := dev.DeviceParity(ctx, &j64, test.Precision, test.WMA, p.Tolerance)
	if err != nil {
		return nil, err
	}
	if len(df.Flips) != n || len(df.NonBorderline) != n || len(df.MaxMargin) != n {
		return nil, fmt.Errorf("parity on %s: %d/%d/%d per-combo counts for a grid of %d combos",
			df.Device, len(df.Flips), len(df.NonBorderline), len(df.MaxMargin), n)
	}
	for k := range p.Combos {
		cp := &p.Combos[k]
		cp.Flips, cp.NonBorderline, cp.MaxFlipMargin = int(df.Flips[cp.Index]), int(df.NonBorderline[cp.Index]), df.MaxMargin[cp.Index]
	}
	p.setIndicatorErrors(df.IndicatorErrors)
	bars := job.Bars
	for i := range df.Worst {
		f := &df.Worst[i]
		if f.Index < 0 || f.Index >= n || f.Bar < 0 || f.Bar >= bars.Len() {
			return nil, fmt.Errorf("parity on %s: flip at combo %d, bar %d is outside the grid (%d combos) or the bars (%d)",
				df.Device, f.Index, f.Bar, n, bars.Len())
		}
		f.Combo, f.Time, f.Borderline = job.Grid.At(f.Index), bars.Time[f.Bar], f.Margin < p.Tolerance
	}
	p.finish(df.Worst)
	p.Device = df.Device
	return p, nil
}
