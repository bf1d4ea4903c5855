package reference

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference/kernels"
)

// TestBlockStats: the per-block statistics the reference sweep emits agree
// with each combo's own fp64 metrics and trace: the blocks' bars add up to
// n-1, their trades to the combo's (each in the block of its exit, from
// BacktestTrace), their wins to its win rate, their log growth to its total
// return, and Sharpe and Sortino recomputed from the blocks' sums equal its
// own; on a step-1 HMA3 grid (twins computed once) and with 7 uneven
// blocks.
func TestBlockStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	bars := datatest.RandomWalk(rng, 5000, 100, 0.003)
	n := bars.Len()
	grid := engine.Grid{HMA: engine.Range{Start: 10, Stop: 40, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 17, Step: 1}}
	p := engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600}
	bounds, err := engine.BlockBounds(n, 7)
	if err != nil {
		t.Fatal(err)
	}
	job := &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP64, WMA: engine.Direct, Blocks: bounds}
	bs := engine.NewBlockStats(grid.Len(), bounds)
	run, err := engine.Sweep(context.Background(), New(), job, engine.SweepOptions{Blocks: bs})
	if err != nil {
		t.Fatal(err)
	}
	ind, err := BuildIndicators[float64](context.Background(), bars, grid, p.Source, engine.Direct)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) }
	for i, r := range run.Results {
		c := r.Combo
		var bars64, trades, wins int
		var sum, sq, down, sl float64
		for b := 0; b < bs.Blocks; b++ {
			k := i*bs.Blocks + b
			bars64 += int(bs.Bars[k])
			trades += int(bs.Trades[k])
			wins += int(bs.Wins[k])
			sum, sq, down, sl = sum+bs.Sum[k], sq+bs.SumSq[k], down+bs.SumDown[k], sl+bs.SumLog[k]
			if int(bs.Bars[k]) != bounds[b+1]-bounds[b] {
				t.Fatalf("combo %v block %d: %d bars, want %d", c, b, bs.Bars[k], bounds[b+1]-bounds[b])
			}
		}
		m := r.Metrics
		if bars64 != n-1 || trades != m.TotalTrades || (m.TotalTrades > 0 && math.Abs(float64(wins)/float64(trades)-m.WinRate) > 1e-12) {
			t.Fatalf("combo %v: %d bars, %d trades, %d wins; the metrics say %d bars, %d trades, win rate %g", c, bars64, trades, wins, n-1, m.TotalTrades, m.WinRate)
		}
		if !near(math.Expm1(sl), m.TotalReturn) {
			t.Errorf("combo %v: expm1(sum of log growth) %.15g, total return %.15g", c, math.Expm1(sl), m.TotalReturn)
		}
		mf := float64(n - 1)
		mean := sum / mf
		std := math.Sqrt(sq/mf - mean*mean)
		if sharpe := mean / std * math.Sqrt(p.BarsPerYear); !near(sharpe, m.Sharpe) {
			t.Errorf("combo %v: Sharpe from the blocks %.15g, its own %.15g", c, sharpe, m.Sharpe)
		}
		if sortino := mean / math.Sqrt(down/mf) * math.Sqrt(p.BarsPerYear); !near(sortino, m.Sortino) {
			t.Errorf("combo %v: Sortino from the blocks %.15g, its own %.15g", c, sortino, m.Sortino)
		}
		// Each trade in the block of its exit.
		_, tr := BacktestTrace(ind.H[c.HMA], ind.H3[c.HMA3], ind.R, engine.ComboWarmup(c), p)
		per := make([]int32, bs.Blocks)
		for _, td := range tr.Trades {
			x := min(td.Exit, n-2)
			for b := 0; b < bs.Blocks; b++ {
				if x >= bounds[b] && x < bounds[b+1] {
					per[b]++
				}
			}
		}
		for b := range per {
			if per[b] != bs.Trades[i*bs.Blocks+b] {
				t.Fatalf("combo %v block %d: %d trades, the trace closes %d there", c, b, bs.Trades[i*bs.Blocks+b], per[b])
			}
		}
	}
	if grid.Aliases() == 0 {
		t.Fatal("the grid has no HMA3 twins: the alias path is not covered")
	}
}

// TestBlocksLeaveMetricsAlone: emitting per-block statistics changes no
// bit of a combo's metrics, in fp64 and fp32, long-short and long-only,
// with 16 and 3 blocks.
func TestBlocksLeaveMetricsAlone(t *testing.T) {
	rng := datatest.Rand(t)
	bars := datatest.RandomWalk(rng, 6000, 100, 0.003)
	for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
		p := engine.Params{Fee: engine.DefaultFee, Mode: mode, Source: engine.SourceClose, BarsPerYear: 525600}
		for _, blocks := range []int{16, 3} {
			sameMetrics[float64](t, bars, p, blocks)
			sameMetrics[float32](t, bars, p, blocks)
		}
	}
}

func sameMetrics[F Float](t *testing.T, bars *engine.Bars, p engine.Params, blocks int) {
	t.Helper()
	x := kernels.SourceSeries[F](bars, p.Source)
	r := kernels.BarReturns[F](bars)
	bounds, err := engine.BlockBounds(bars.Len(), blocks)
	if err != nil {
		t.Fatal(err)
	}
	var sc Scratch[F]
	for _, c := range []engine.Combo{{HMA: 10, HMA3: 12}, {HMA: 50, HMA3: 31}, {HMA: 200, HMA3: 240}} {
		h, h3 := make([]F, len(x)), make([]F, len(x))
		if err := errors.Join(HMA(x, c.HMA, engine.Direct, h), HMA3(x, c.HMA3, engine.Direct, h3)); err != nil {
			t.Fatal(err)
		}
		warm := max(engine.HMAWarmup(c.HMA), engine.HMA3Warmup(c.HMA3))
		want := Backtest(h, h3, r, warm, p, &sc)
		bs := engine.NewBlockStats(1, bounds)
		if got := BacktestBlocks(h, h3, r, warm, p, &sc, bs, 0); got != want {
			t.Errorf("%T %s %d blocks, combo %v: with blocks %+v, without %+v", F(0), p.Mode, blocks, c, got, want)
		}
	}
}
