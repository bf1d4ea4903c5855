package engine

import "sync"

// SeriesKey is the key of a study's indicator series in its
// IndicatorCache: one entry per precision and WMA formulation (the grid,
// bars and source are the study's). The reference's arithmetic and the
// series a SeriesDevice returns share it.
type SeriesKey struct {
	Precision Precision
	WMA       Formulation
}

// IndicatorCache shares the indicator series of one study (bars, grid,
// source) between its runs and its parity report, so each series is
// computed once. engine only carries it (Job.Cache); what it holds and
// under which key is the Arithmetic's business (package reference keys it
// by precision and WMA formulation). The zero value is ready; it is safe
// for concurrent use.
type IndicatorCache struct {
	mu      sync.Mutex
	entries map[any]*cacheEntry
}

type cacheEntry struct {
	once sync.Once
	v    any
	err  error
}

// Load returns the value stored under key (a comparable value), calling
// build to compute it the first time, once however many goroutines ask at
// the same moment. A build that fails is not kept: the next Load builds
// again, so a cancelled build does not poison the cache.
func (c *IndicatorCache) Load(key any, build func() (any, error)) (any, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[any]*cacheEntry{}
	}
	e := c.entries[key]
	if e == nil {
		e = &cacheEntry{}
		c.entries[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.v, e.err = build() })
	if e.err != nil {
		c.mu.Lock()
		if c.entries[key] == e {
			delete(c.entries, key)
		}
		c.mu.Unlock()
		return nil, e.err
	}
	return e.v, nil
}
