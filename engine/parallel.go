package engine

import (
	"context"
	"sync"
	"sync/atomic"
)

// Parallel runs do(w, i) for every i in [0, n) on at most workers
// goroutines (at least one), handing out indices in increasing order as
// workers come free; w in [0, workers) names the goroutine, so do may keep
// per-worker state in a slice indexed by it. It stops handing out indices
// once ctx is cancelled and returns ctx.Err() (nil when every index ran).
// It is the one worker pool of engine and of the CPU arithmetic.
func Parallel(ctx context.Context, n, workers int, do func(w, i int)) error {
	workers = max(1, min(workers, n))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				do(w, i)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}
