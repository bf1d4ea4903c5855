package strategy

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"sweepbench/engine"
	"sweepbench/reference"
)

// Sweep evaluates combos [first, first+len(out)) of g over in (precision
// F, formulation f) into out: each combo's states by its family, then
// reference.BacktestPositionsX with p over r (kernels.BarReturns, len n)
// and x with the combo's stops (Grid.Stops; x the bars' prices in F,
// reference.NewExec, or nil for Part 1's fills at the close: a grid with
// stops or p's fill next-open needs it). out[k] is combo first+k's
// metrics, bit for bit those of Evaluate and BacktestPositionsX on that
// combo alone.
//
// The series a combo reads are computed once per Sweep call and shared by
// every combo that reads them: cross and hull each leg's moving average by
// (kind, length), zscore the mean and sd by length, rsi the RSI series by
// length, breakout each Channel by (high or low, length). The cache lives
// for the call and keeps every series it computed, each n values of F: at
// most, over the combos swept, cross and hull one per distinct fast and
// one per distinct slow (kind, length), zscore two per length, rsi one per
// length, breakout two per distinct length of entry and exit together
// (the default cross grid, 10 + 19 lengths on 43,208 bars: 29 series,
// 10 MB in fp64). A caller bounding memory further sweeps the grid in
// ranges (first, len(out)), each call its own cache.
//
// Work: the range is cut into chunks along the last axis (the combos that
// share every other axis' values, and so the series of every leg but the
// last), which workers goroutines (0: runtime.GOMAXPROCS) take in order,
// worker w starting its chunk w/workers of the way in (so that the
// workers compute the last axis' series side by side at first rather
// than wait on one another); each worker reuses one state buffer and one
// reference.Scratch. Memory
// beyond the cache: n states and the scratch per worker.
//
// Errors: the range outside the grid, len(r) != n, x nil (or not of n
// bars) where stops or fill next-open need it, the family's errors
// (a *ParamError for a value it refuses: the first met is returned), and
// ctx.Err() once ctx is done (checked before every combo). On error out
// is partly written.
func Sweep[F Float](ctx context.Context, g Grid, in *Inputs[F], r []F, x *reference.Exec[F], f Formulation, p engine.Params, first int, out []engine.Metrics, workers int) error {
	fam, err := Lookup(g.Family)
	if err != nil {
		return err
	}
	if first < 0 || first+len(out) > g.Len() {
		return fmt.Errorf("strategy.Sweep %s: combos [%d, %d) outside the grid's %d", fam.Name, first, first+len(out), g.Len())
	}
	n := len(in.Close)
	if len(r) != n {
		return fmt.Errorf("strategy.Sweep %s: %d bar returns for %d bars", fam.Name, len(r), n)
	}
	if needsExec(g, p) && (x == nil || len(x.Close) != n) {
		return fmt.Errorf("strategy.Sweep %s: stops or fill next-open need the bars' prices (reference.NewExec) of the %d bars", fam.Name, n)
	}
	if !needsExec(g, p) {
		x = nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(out) == 0 {
		return nil
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Chunks of the last axis, aligned on the grid's indices (with the
	// fast < slow restriction of a two-axis cross grid a chunk may span
	// two fast values: it still shares most of its series).
	chunk := 1
	if len(g.Axes) > 0 {
		chunk = g.Axes[len(g.Axes)-1].Range.Len()
	}
	start, end := first, first+len(out)
	nChunks := (end-1)/chunk - start/chunk + 1
	workers = min(workers, nChunks)

	sc := newSeriesCache[F]()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		errOnce  sync.Once
		sweepErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { sweepErr = err })
		cancel()
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pos := make([]State, n)
			var scr reference.Scratch[F]
			var l lane[F]
			for {
				k := int(next.Add(1)) - 1
				if k >= nChunks {
					return
				}
				lo := max(start, (start/chunk+k)*chunk)
				hi := min(end, (start/chunk+k+1)*chunk)
				// Worker w starts its chunk w/workers of the way in and
				// wraps: the workers, on neighbouring chunks, first
				// compute different series of the last axis instead of
				// waiting on one another for the same one.
				m := hi - lo
				rot := w * m / workers
				for j := range m {
					i := lo + (j+rot)%m
					if err := ctx.Err(); err != nil {
						fail(err)
						return
					}
					c := g.At(i)
					fv, err := evaluate(fam, c, in, f, pos, nil, sc)
					if err != nil {
						fail(err)
						return
					}
					out[i-start] = reference.BacktestPositionsX(pos, r, fv, p, l.comboExec(x, g, c), &scr, nil, 0)
				}
			}
		}()
	}
	wg.Wait()
	return sweepErr
}
