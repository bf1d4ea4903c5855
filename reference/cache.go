package reference

import (
	"context"
	"runtime"

	"sweepbench/engine"
)

// cacheKey is what the reference keeps in an engine.IndicatorCache: one
// entry per precision and WMA formulation of a study's grid.
type cacheKey struct {
	prec engine.Precision
	form engine.Formulation
}

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
	k := cacheKey{engine.FP64, job.WMA}
	if _, ok := any(*new(F)).(float32); ok {
		k.prec = engine.FP32
	}
	v, err := job.Cache.Load(k, func() (any, error) { return build() })
	if err != nil {
		return nil, err
	}
	return v.(*engine.Indicators[F]), nil
}
