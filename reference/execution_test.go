package reference_test

import (
	"fmt"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// TestExecPlainEqualsBacktest: the execution options' loop with fill close,
// no stops, no slippage is the fast loop bit for bit (every metric, the
// trace's positions, equity, returns and trades), in both precisions and
// modes, on fresh random bars and states; with slippage both loops take
// k = (1-f)(1-q) and agree again.
func TestExecPlainEqualsBacktest(t *testing.T) {
	rng := datatest.Rand(t)
	bars := datatest.RandomWalk(rng, 3000, 100, 0.004)
	st := make([]int8, bars.Len())
	for i := 40; i < len(st); i++ {
		st[i] = int8(rng.IntN(3)) - 1
		if rng.IntN(4) > 0 {
			st[i] = st[i-1] // runs, as a family's states have
		}
	}
	testExecPlain[float64](t, bars, st)
	testExecPlain[float32](t, bars, st)
}

func testExecPlain[F engine.Float](t *testing.T, bars *engine.Bars, st []int8) {
	r := kernels.BarReturns[F](bars)
	x := reference.NewExec[F](bars)
	for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
		for _, q := range []float64{0, 0.0007} {
			p := engine.Params{Fee: engine.DefaultFee, BarsPerYear: 8760, Mode: mode, Slippage: q}
			label := fmt.Sprintf("%T %v q=%v", F(0), mode, q)
			var sc reference.Scratch[F]
			want := reference.BacktestPositions(st, r, 40, p, &sc)
			got := reference.BacktestExecForced(st, r, 40, p, x)
			if !sameMetrics(got, want) {
				t.Errorf("%s: exec loop %+v\nfast loop %+v", label, got, want)
			}
			if want.TotalTrades < 100 {
				t.Errorf("%s: %d trades: the case tests little", label, want.TotalTrades)
			}
			_, wtr := reference.BacktestPositionsTrace(st, r, 40, p)
			_, gtr := reference.BacktestExecForcedTrace(st, r, 40, p, x)
			for i := range wtr.Pos {
				if wtr.Pos[i] != gtr.Pos[i] || wtr.Equity[i] != gtr.Equity[i] || wtr.Returns[i] != gtr.Returns[i] {
					t.Fatalf("%s: bar %d: fast pos %d E %v r %v, exec pos %d E %v r %v", label, i,
						wtr.Pos[i], wtr.Equity[i], wtr.Returns[i], gtr.Pos[i], gtr.Equity[i], gtr.Returns[i])
				}
			}
			if len(wtr.Trades) != len(gtr.Trades) {
				t.Fatalf("%s: %d trades against %d", label, len(gtr.Trades), len(wtr.Trades))
			}
			for k, w := range wtr.Trades {
				g := gtr.Trades[k]
				if g.Entry != w.Entry || g.Exit != w.Exit || g.Side != w.Side || g.Return != w.Return || g.Bars != w.Bars || g.Reason != w.Reason {
					t.Fatalf("%s: trade %d: exec %+v, fast %+v", label, k, g, w)
				}
				if g.EntryPrice != float64(F(bars.Close[g.Entry])) || g.ExitPrice != float64(F(bars.Close[g.Exit])) {
					t.Fatalf("%s: trade %d: fill prices %v %v, want the closes", label, k, g.EntryPrice, g.ExitPrice)
				}
			}
		}
	}
}
