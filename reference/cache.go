package reference

import (
	"context"
	"runtime"

	"sweepbench/engine"
)

// GetIndicators returns the job's indicator series in F (job.WMA's
// formulation, job.Params.Source; job.Precision is not read), from
// job.Cache when it is set (built there once), else freshly built on
// job.Threads cores (0 = all).
func GetIndicators[F Float](ctx context.Context, job *engine.Job) (*engine.Indicators[F], error) {
	build := func() (*engine.Indicators[F], error) {
		w := job.Threads
		if w <= 0 {
			w = runtime.GOMAXPROCS(0)
		}
		return BuildIndicatorsN[F](ctx, job.Bars, job.Grid, job.Params.Source, job.WMA, w)
	}
	if job.Cache == nil {
		return build()
	}
	k := engine.SeriesKey{Precision: engine.FP64, WMA: job.WMA}
	if _, ok := any(*new(F)).(float32); ok {
		k.Precision = engine.FP32
	}
	v, err := job.Cache.Load(k, func() (any, error) { return build() })
	if err != nil {
		return nil, err
	}
	return v.(*engine.Indicators[F]), nil
}
