package reference_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// TestBacktestPositionsMatchesHull: BacktestPositions fed the states the
// hull comparison gives (Positions, long-short: the state before the mode)
// returns Backtest's metrics field for field, bit for bit, and
// BacktestPositionsTrace BacktestTrace's record, in both precisions, both
// modes, over several combos, on fresh random bars and on the embedded
// BTC/USDT minutes.
func TestBacktestPositionsMatchesHull(t *testing.T) {
	rng := datatest.Rand(t)
	random := datatest.RandomWalk(rng, 4000, 100, 0.002)
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	real := &ds.Head(20000).Bars
	for _, c := range []struct {
		name string
		bars *engine.Bars
	}{{"random", random}, {"btcusdt", real}} {
		testPositionsMatchHull[float64](t, c.name, c.bars)
		testPositionsMatchHull[float32](t, c.name, c.bars)
	}
}

func testPositionsMatchHull[F engine.Float](t *testing.T, name string, bars *engine.Bars) {
	t.Helper()
	x := kernels.SourceSeries[F](bars, engine.SourceClose)
	r := kernels.BarReturns[F](bars)
	n := len(x)
	h, h3 := make([]F, n), make([]F, n)
	st := make([]int8, n)
	var sc, sp reference.Scratch[F]
	for _, L := range [][2]int{{10, 12}, {20, 90}, {100, 120}, {200, 30}} {
		if err := reference.HMA(x, L[0], engine.Direct, h); err != nil {
			t.Fatal(err)
		}
		if err := reference.HMA3(x, L[1], engine.Direct, h3); err != nil {
			t.Fatal(err)
		}
		first := engine.ComboWarmup(engine.Combo{HMA: L[0], HMA3: L[1]})
		reference.Positions(h, h3, first, engine.LongShort, 0, st)
		for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
			label := fmt.Sprintf("%s %s hma %d hma3 %d mode %v", name, precName[F](), L[0], L[1], mode)
			p := engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600, Mode: mode}
			want := reference.Backtest(h, h3, r, first, p, &sc)
			got := reference.BacktestPositions(st, r, first, p, &sp)
			if !sameMetrics(got, want) {
				t.Errorf("%s: BacktestPositions %+v, Backtest %+v", label, got, want)
			}
			if want.TotalTrades == 0 {
				t.Errorf("%s: no trade: the case tests nothing", label)
			}
			mt, tr := reference.BacktestPositionsTrace(st, r, first, p)
			wt, wtr := reference.BacktestTrace(h, h3, r, first, p)
			if !sameMetrics(mt, wt) || !sameMetrics(mt, want) {
				t.Errorf("%s: BacktestPositionsTrace %+v, BacktestTrace %+v", label, mt, wt)
			}
			if !slices.Equal(tr.Pos, wtr.Pos) || !slices.Equal(tr.Equity, wtr.Equity) || !slices.Equal(tr.Trades, wtr.Trades) {
				t.Errorf("%s: the traces differ", label)
			}
		}
	}
}

// TestBacktestPositionsHand: six bars, fee f = 0.001 (keep k = 0.999),
// returns r = [-, +0.10, -0.10, +0.05, -0.20, +0.02], first = 1 and the
// states st = [0, +1, +1, -1, 0, -1] (st[5], on the last bar, is never
// held). pos[i] is held over bar i+1 and its factor is g[i]:
//
//	i=0  flat (before first)            g = 1
//	i=1  0 -> +1: enter long, one fee   g = k * (1 + r[2]) = 0.999*0.9  = 0.8991
//	i=2  +1 held                        g = 1 + r[3]       = 1.05
//	i=3  +1 -> -1: reversal, two fees   g = k^2 * (1 - r[4]) = 0.998001*1.2 = 1.1976012
//	     the long closes: R1 = k*0.9*1.05*k - 1 = 0.943110945 - 1 < 0 (a loss)
//	i=4  -1 -> 0: exit short, one fee   g = k = 0.999 (flat over bar 5)
//	     the short closes: R2 = k*1.2*k - 1 = 0.1976012 > 0 (a win)
//
// E = 1, 1, 0.8991, 0.944055, 1.130601400866, E_final = k^4*0.9*1.05*1.2 =
// 0.996005996001*1.134 = 1.129470799465134; 2 trades, 1 win (win rate
// 0.5), 2 bars long, 1 short, 2 flat (bars 0 and 4).
//
// Long-only maps st[3] = -1 to 0: i=3 exits the long with one fee, g =
// k = 0.999 (R1 the same loss), and i=4 stays flat, g = 1: E_final =
// k^2*0.9*1.05 = 0.998001*0.945 = 0.943110945; 1 trade, 0 wins, 2 bars
// long, 0 short, 3 flat.
func TestBacktestPositionsHand(t *testing.T) {
	r := []float64{0, 0.10, -0.10, 0.05, -0.20, 0.02}
	st := []int8{0, 1, 1, -1, 0, -1}
	const k = 0.999
	for _, c := range []struct {
		mode                engine.Mode
		equity              []float64
		trades              []engine.Trade
		pos                 []int8
		ret, winRate        float64
		n, long, short, flt int
	}{
		{engine.LongShort, []float64{1, 1, k * 0.9, k * 0.9 * 1.05, k * 0.9 * 1.05 * k * k * 1.2, k * 0.9 * 1.05 * k * k * 1.2 * k},
			[]engine.Trade{{Entry: 1, Exit: 3, Side: 1, Return: k*0.9*1.05*k - 1}, {Entry: 3, Exit: 4, Side: -1, Return: k*1.2*k - 1}},
			[]int8{0, 1, 1, -1, 0, 0}, k*k*k*k*0.9*1.05*1.2 - 1, 0.5, 2, 2, 1, 2},
		{engine.LongOnly, []float64{1, 1, k * 0.9, k * 0.9 * 1.05, k * 0.9 * 1.05 * k, k * 0.9 * 1.05 * k},
			[]engine.Trade{{Entry: 1, Exit: 3, Side: 1, Return: k*0.9*1.05*k - 1}},
			[]int8{0, 1, 1, 0, 0, 0}, k*k*0.9*1.05 - 1, 0, 1, 2, 0, 3},
	} {
		p := engine.Params{Fee: 0.001, BarsPerYear: 525600, Mode: c.mode}
		m, tr := reference.BacktestPositionsTrace(st, r, 1, p)
		var sc reference.Scratch[float64]
		if m2 := reference.BacktestPositions(st, r, 1, p, &sc); !sameMetrics(m, m2) {
			t.Errorf("%v: BacktestPositions %+v, BacktestPositionsTrace %+v", c.mode, m2, m)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
		if !near(m.TotalReturn, c.ret) || m.WinRate != c.winRate || m.TotalTrades != c.n ||
			m.LongBars != c.long || m.ShortBars != c.short || m.FlatBars != c.flt {
			t.Errorf("%v: metrics %+v, want return %v, win rate %v, %d trades, %d/%d/%d bars long/short/flat",
				c.mode, m, c.ret, c.winRate, c.n, c.long, c.short, c.flt)
		}
		if !slices.Equal(tr.Pos, c.pos) {
			t.Errorf("%v: pos %v, want %v", c.mode, tr.Pos, c.pos)
		}
		if len(tr.Equity) != len(c.equity) {
			t.Fatalf("%v: %d equity points, want %d", c.mode, len(tr.Equity), len(c.equity))
		}
		for i, e := range c.equity {
			if !near(tr.Equity[i], e) {
				t.Errorf("%v: E[%d] = %v, want %v", c.mode, i, tr.Equity[i], e)
			}
		}
		if len(tr.Trades) != len(c.trades) {
			t.Fatalf("%v: trades %+v, want %+v", c.mode, tr.Trades, c.trades)
		}
		for i, w := range c.trades {
			g := tr.Trades[i]
			if g.Entry != w.Entry || g.Exit != w.Exit || g.Side != w.Side || !near(g.Return, w.Return) {
				t.Errorf("%v: trade %d %+v, want %+v", c.mode, i, g, w)
			}
		}
	}
	// The hand numbers, to the digits the comment gives.
	if got := k*k*k*k*0.9*1.05*1.2 - 1; math.Abs(got-0.129470799465134) > 1e-15 {
		t.Errorf("long-short return %.17g", got)
	}
}

// TestBacktestPositionsLongOnly: long-only maps every -1 to 0 (flat), so
// BacktestPositions in long-only over st equals it in long-short over st
// with its -1 replaced by 0, and no bar is held short.
func TestBacktestPositionsLongOnly(t *testing.T) {
	rng := datatest.Rand(t)
	n := 3000
	r := make([]float64, n)
	st, lo := make([]int8, n), make([]int8, n)
	for i := 1; i < n; i++ {
		r[i] = 0.002 * rng.NormFloat64()
	}
	s := int8(0)
	for i := 50; i < n; i++ {
		if rng.IntN(20) == 0 {
			s = int8(rng.IntN(3)) - 1
		}
		st[i], lo[i] = s, max(s, 0)
	}
	var sc reference.Scratch[float64]
	p := engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600, Mode: engine.LongOnly}
	got := reference.BacktestPositions(st, r, 50, p, &sc)
	p.Mode = engine.LongShort
	want := reference.BacktestPositions(lo, r, 50, p, &sc)
	if !sameMetrics(got, want) {
		t.Errorf("long-only %+v, long-short over the states with -1 as 0 %+v", got, want)
	}
	if got.ShortBars != 0 || got.TotalTrades == 0 {
		t.Errorf("long-only: %d short bars, %d trades", got.ShortBars, got.TotalTrades)
	}
	p.Mode = engine.LongShort
	if ls := reference.BacktestPositions(st, r, 50, p, &sc); ls.ShortBars == 0 {
		t.Errorf("long-short: no short bar: the case tests nothing")
	}
}
