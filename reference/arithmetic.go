package reference

import (
	"context"
	"runtime"
	"time"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// Arithmetic is this package's arithmetic as engine reaches it
// (engine.Arithmetic): the indicator series of the parity report, the
// workbench's one-combo trace, EstimateStudy's calibration and the CPU
// rungs of the bench ladder. Importing the package registers it.
type Arithmetic struct{}

func init() { engine.RegisterArithmetic(Arithmetic{}) }

var _ engine.Arithmetic = Arithmetic{}

// Indicators64 is GetIndicators[float64] (engine.Arithmetic).
func (Arithmetic) Indicators64(ctx context.Context, job *engine.Job) (*engine.Indicators[float64], error) {
	return GetIndicators[float64](ctx, job)
}

// Indicators32 is GetIndicators[float32] (engine.Arithmetic).
func (Arithmetic) Indicators32(ctx context.Context, job *engine.Job) (*engine.Indicators[float32], error) {
	return GetIndicators[float32](ctx, job)
}

// TraceCombo builds combo c's two series in job.Precision and job.WMA with
// BuildIndicators (the sweep's path) and runs BacktestTraceX on them with
// the job's execution options (the trades' fill prices and exit reasons
// filled in).
func (Arithmetic) TraceCombo(ctx context.Context, job *engine.Job, c engine.Combo) (engine.ComboTrace, error) {
	if job.Precision == engine.FP32 {
		return traceCombo[float32](ctx, job, c)
	}
	return traceCombo[float64](ctx, job, c)
}

func traceCombo[F Float](ctx context.Context, job *engine.Job, c engine.Combo) (engine.ComboTrace, error) {
	g := engine.Grid{HMA: engine.Range{Start: c.HMA, Stop: c.HMA, Step: 1}, HMA3: engine.Range{Start: c.HMA3, Stop: c.HMA3, Step: 1}}
	ind, err := BuildIndicators[F](ctx, job.Bars, g, job.Params.Source, job.WMA)
	if err != nil {
		return engine.ComboTrace{}, err
	}
	h, h3 := ind.H[c.HMA], ind.H3[c.HMA3]
	m, tr := BacktestTraceX(h, h3, ind.R, engine.ComboWarmup(c), job.Params, NewExec[F](job.Bars))
	return engine.ComboTrace{Metrics: m, Trace: tr, H: widen(h), H3: widen(h3)}, nil
}

// TimeCombo times HMA, HMA3 and Backtest of combo c on one core, each the
// fastest of three runs (engine.Arithmetic).
func (Arithmetic) TimeCombo(ctx context.Context, job *engine.Job, c engine.Combo) (engine.ComboTiming, error) {
	if job.Precision == engine.FP32 {
		return timeCombo[float32](ctx, job, c)
	}
	return timeCombo[float64](ctx, job, c)
}

func timeCombo[F Float](ctx context.Context, job *engine.Job, c engine.Combo) (engine.ComboTiming, error) {
	var t engine.ComboTiming
	b, p, form := job.Bars, job.Params, job.WMA
	x := kernels.SourceSeries[F](b, p.Source)
	cl := x
	if p.Source != engine.SourceClose {
		cl = kernels.SourceSeries[F](b, engine.SourceClose)
	}
	r := kernels.BarReturns[F](b)
	hs, h3s := make([]F, len(x)), make([]F, len(x))
	best := func(f func() error) (time.Duration, error) {
		d := time.Duration(1<<63 - 1)
		for range 3 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			t0 := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			d = min(d, time.Since(t0))
		}
		return d, nil
	}
	var err error
	if t.HMA, err = best(func() error { return HMA(x, c.HMA, form, hs) }); err != nil {
		return t, err
	}
	if t.HMA3, err = best(func() error { return HMA3(cl, c.HMA3, form, h3s) }); err != nil {
		return t, err
	}
	var sc Scratch[F]
	t.Backtest, err = best(func() error { Backtest(hs, h3s, r, engine.ComboWarmup(c), p, &sc); return nil })
	return t, err
}

// NaiveSweep is the bench ladder's M0 (engine.Arithmetic): per combo, HMA
// and HMA3 by the scalar textbook WMA (naive.go), then Backtest, in fp64,
// serially. The bits are those of the reference sweep in fp64.
func (Arithmetic) NaiveSweep(ctx context.Context, job *engine.Job) ([]engine.Metrics, time.Duration, error) {
	b := job.Bars
	x := kernels.SourceSeries[float64](b, job.Params.Source)
	cl := kernels.SourceSeries[float64](b, engine.SourceClose)
	r := kernels.BarReturns[float64](b)
	h, h3 := make([]float64, b.Len()), make([]float64, b.Len())
	var sc Scratch[float64]
	var ind time.Duration
	xe := JobExec[float64](job)
	out := make([]engine.Metrics, job.Grid.Len())
	for i := range out {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		c := job.Grid.At(i)
		t0 := time.Now()
		scalarHMA(x, c.HMA, h)
		scalarHMA3(cl, c.HMA3, h3)
		ind += time.Since(t0)
		out[i] = BacktestX(h, h3, r, engine.ComboWarmup(c), job.Params, xe, &sc, nil, 0)
	}
	return out, ind, nil
}

// BacktestSeries64 runs Backtest in fp64 for every combo of job over the
// given series and the bars' fp64 returns, on every core (engine.Arithmetic).
// Positions64 is Positions in float64 (engine.Arithmetic).
func (Arithmetic) Positions64(h, h3 []float64, first int, mode engine.Mode, prev int8, pos []int8) int8 {
	return Positions(h, h3, first, mode, prev, pos)
}

// Positions32 is Positions in float32 (engine.Arithmetic).
func (Arithmetic) Positions32(h, h3 []float32, first int, mode engine.Mode, prev int8, pos []int8) int8 {
	return Positions(h, h3, first, mode, prev, pos)
}

// PositionFlips is reference.PositionFlips (engine.Arithmetic).
func (Arithmetic) PositionFlips(h, h3 []float64, g, g3 []float32, first, held int, mode engine.Mode, flip func(i int, p64, p32 int8)) {
	PositionFlips(h, h3, g, g3, first, held, mode, flip)
}

func (Arithmetic) BacktestSeries64(ctx context.Context, job *engine.Job, h, h3 map[int][]float64) ([]engine.Metrics, error) {
	r := kernels.BarReturns[float64](job.Bars)
	out := make([]engine.Metrics, job.Grid.Len())
	workers := runtime.GOMAXPROCS(0)
	scs := make([]Scratch[float64], workers)
	xe := JobExec[float64](job)
	err := engine.Parallel(ctx, len(out), workers, func(w, i int) {
		c := job.Grid.At(i)
		out[i] = BacktestX(h[c.HMA], h3[c.HMA3], r, engine.ComboWarmup(c), job.Params, xe, &scs[w], nil, 0)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// widen converts a series to float64 (exact: every float32 is a float64).
func widen[F Float](x []F) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
