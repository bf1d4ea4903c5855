package conformance

import (
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// Reference returns the reference metrics of every combo of job, in grid
// order, in job.Precision and job.WMA: each unique length's series computed
// on its own with reference.HMA and reference.HMA3 (not the shared,
// parallel build a backend may use), then reference.Backtest combo by combo.
func Reference(t testing.TB, job *engine.Job) []engine.Metrics {
	t.Helper()
	if job.Precision == engine.FP32 {
		return byLength[float32](t, job)
	}
	return byLength[float64](t, job)
}

func byLength[F engine.Float](t testing.TB, job *engine.Job) []engine.Metrics {
	t.Helper()
	h, h3, r := Series[F](t, job)
	out := make([]engine.Metrics, job.Grid.Len())
	var sc reference.Scratch[F]
	for i := range out {
		c := job.Grid.At(i)
		out[i] = reference.Backtest(h[c.HMA], h3[c.HMA3], r, engine.ComboWarmup(c), job.Params, &sc)
	}
	return out
}

// Series returns job's indicator series in F, one reference.HMA per HMA
// length of the grid (from job.Params.Source) and one reference.HMA3 per
// HMA3 length (from the close), in job.WMA, and the bar returns.
func Series[F engine.Float](t testing.TB, job *engine.Job) (h, h3 map[int][]F, r []F) {
	t.Helper()
	x := kernels.SourceSeries[F](job.Bars, job.Params.Source)
	cl := kernels.SourceSeries[F](job.Bars, engine.SourceClose)
	h, h3 = map[int][]F{}, map[int][]F{}
	for _, L := range job.Grid.HMA.Values() {
		h[L] = make([]F, len(x))
		if err := reference.HMA(x, L, job.WMA, h[L]); err != nil {
			t.Fatal(err)
		}
	}
	for _, L := range job.Grid.HMA3.Values() {
		h3[L] = make([]F, len(x))
		if err := reference.HMA3(cl, L, job.WMA, h3[L]); err != nil {
			t.Fatal(err)
		}
	}
	return h, h3, kernels.BarReturns[F](job.Bars)
}
