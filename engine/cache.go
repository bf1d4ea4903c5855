package engine

import (
	"context"
	"runtime"
	"sync"
)

// IndicatorCache shares the indicator series of one study (bars, grid,
// source) between its runs and its parity report, per precision and WMA
// formulation, so each series is computed once. Safe for concurrent use.
type IndicatorCache struct {
	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
}

type cacheKey struct {
	prec Precision
	form Formulation
}

type cacheEntry struct {
	once sync.Once
	v    any
	err  error
}

// GetIndicators returns the job's indicator series in F, from job.Cache
// when set (computing them once), else freshly built.
func GetIndicators[F Float](ctx context.Context, job *Job) (*Indicators[F], error) {
	form := job.WMA
	build := func() (*Indicators[F], error) {
		w := job.Threads
		if w <= 0 {
			w = runtime.GOMAXPROCS(0)
		}
		return BuildIndicatorsN[F](ctx, job.Bars, job.Grid, job.Params.Source, form, w)
	}
	if job.Cache == nil {
		return build()
	}
	var zero F
	prec := FP64
	if _, ok := any(zero).(float32); ok {
		prec = FP32
	}
	c := job.Cache
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[cacheKey]*cacheEntry{}
	}
	k := cacheKey{prec, form}
	e := c.entries[k]
	if e == nil {
		e = &cacheEntry{}
		c.entries[k] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.v, e.err = build() })
	if e.err != nil {
		// A cancelled build must not poison the cache for the next caller.
		c.mu.Lock()
		if c.entries[k] == e {
			delete(c.entries, k)
		}
		c.mu.Unlock()
		return nil, e.err
	}
	return e.v.(*Indicators[F]), nil
}
