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
	return compareOnDevice(ctx, dev, job, ref, test, tol, true)
}

// compareOnDevice is CompareOnDevice, the per-combo rows kept in the
// report or, rows false, left out (ParityInput.NoRows).
func compareOnDevice(ctx context.Context, dev ParityDevice, job *Job, ref, test *Run, tol float64, rows bool) (*Parity, error) {
	n := job.Grid.Len()
	if !ref.Complete() || !test.Complete() || ref.Count() != n || test.Count() != n {
		return nil, ErrParityIncomplete
	}
	p := startParity(ref, test, tol)
	// The pass runs on the distinct grid (an HMA3 twin has its twin's
	// positions, so its flips): each of its combos stands for one or two
	// of the grid's (aliasMap), its flips are listed for each.
	am := newAliasMap(job.Grid, mergeAliases)
	j64 := *job
	j64.Precision, j64.WMA, j64.Grid = FP64, Direct, am.comp
	df, err := dev.DeviceParity(ctx, &j64, test.Precision, test.WMA, p.Tolerance)
	if err != nil {
		return nil, err
	}
	nc := am.comp.Len()
	if len(df.Flips) != nc || len(df.NonBorderline) != nc || len(df.MaxMargin) != nc {
		return nil, fmt.Errorf("parity on %s: %d/%d/%d per-combo counts for a grid of %d combos",
			df.Device, len(df.Flips), len(df.NonBorderline), len(df.MaxMargin), nc)
	}
	// Each row's counts are those of the computed combo it is.
	t, err := p.build(ctx, ref, test, job.Grid.HMA3.Len(), rows, func(rows []ComboParity) error {
		for k := range rows {
			cp := &rows[k]
			r := am.computed(cp.Index)
			cp.Flips, cp.NonBorderline, cp.MaxFlipMargin = int(df.Flips[r]), int(df.NonBorderline[r]), df.MaxMargin[r]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Indicator errors: the HMA series as computed, an HMA3 length's those
	// of the series of its p.
	var errs []SeriesError
	byP := map[int]SeriesError{}
	for _, e := range df.IndicatorErrors {
		if e.Series == "h" {
			errs = append(errs, e)
		} else {
			byP[e.Length/2] = e
		}
	}
	for _, L := range job.Grid.HMA3.Values() {
		e, ok := byP[L/2]
		if !ok {
			return nil, fmt.Errorf("parity on %s: no indicator error for the HMA3 series of length %d", df.Device, L)
		}
		e.Length = L
		errs = append(errs, e)
	}
	p.setIndicatorErrors(errs)
	bars := job.Bars
	worst := make([]Flip, 0, len(df.Worst))
	for _, f := range df.Worst {
		if f.Index < 0 || f.Index >= nc || f.Bar < 0 || f.Bar >= bars.Len() {
			return nil, fmt.Errorf("parity on %s: flip at combo %d, bar %d is outside the grid (%d combos) or the bars (%d)",
				df.Device, f.Index, f.Bar, nc, bars.Len())
		}
		f.Time, f.Borderline = bars.Time[f.Bar], f.Margin < p.Tolerance
		lo, hi := am.users(f.Index)
		for u := lo; u < hi; u++ {
			f.Index, f.Combo = u, job.Grid.At(u)
			worst = append(worst, f)
		}
	}
	df.Worst = worst
	p.finishTally(&t, df.Worst, "", "")
	p.Device = df.Device
	return p, nil
}
