package reference_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// ---- an independent simulation of the execution options ----------------------
//
// simTrades is SPEC Part 2 "Execution options" written from its text, trade
// by trade, in float64, sharing nothing with execution.go's bar loop: find
// the decision bar that opens a trade, find its exit by scanning its bars
// for the first stop level reached and for the first change of state, list
// the prices the position passes through from the entry fill to the exit
// fill and take R = k * prod(1 + side*(p[m+1]/p[m] - 1)) * k - 1 over them
// (SPEC's per-bar growth, cut where the fills are), and after a stop skip to
// the first bar whose state changes.

type simTrade struct {
	entry, exit int // the fill bars
	side        int8
	reason      engine.Exit
	entryP      float64
	exitP       float64
	bars        int // the decisions i whose position p[i] is this trade's
	R           float64
}

// simTrades simulates the states st (after the mode; 0 before first) over
// bars b with fee f, slippage q, fill and stops s.
func simTrades(b *engine.Bars, st []int8, first int, f, q float64, nextOpen bool, s engine.Stops) []simTrade {
	n := b.Len()
	O, H, L, C := b.Open, b.High, b.Low, b.Close
	k := (1 - f) * (1 - q)
	state := func(i int) int8 {
		if i < first {
			return 0
		}
		return st[i]
	}
	var out []simTrade
	cursor := first // from here on p follows st
	for {
		// The decision that opens the next trade: the first a >= cursor
		// with a non-zero state (p[n-1] is never held).
		a := -1
		for i := cursor; i <= n-2; i++ {
			if state(i) != 0 {
				a = i
				break
			}
		}
		if a < 0 {
			return out
		}
		side := state(a)
		// The signal's exit decision: the first bar b > a whose state
		// differs (bar n-1's state is never acted on).
		sig := -1
		for i := a + 1; i <= n-2; i++ {
			if state(i) != side {
				sig = i
				break
			}
		}
		t := simTrade{side: side}
		// The prices the position passes through, from the entry fill:
		// fill close enters at close[a]; next-open at open[a+1], and each
		// later bar it holds adds its open (the gap) before its close.
		entryBar := a
		prices := []float64{C[a]}
		if nextOpen {
			entryBar = a + 1
			prices = []float64{O[a+1]}
		}
		t.entry, t.entryP = entryBar, prices[0]
		hold := func(from, to int) { // bars from..to held open to close
			for i := from; i <= to; i++ {
				if nextOpen && i > entryBar {
					prices = append(prices, O[i])
				}
				prices = append(prices, C[i])
			}
		}
		// The bars checked for stops: from a+1 (fill close: the bar after
		// the entry close; next-open: the entry bar itself) to the signal's
		// last held bar (its close sig) or the last bar.
		last := n - 1
		if sig >= 0 {
			last = sig
		}
		P := t.entryP
		extreme := P // the highest high (long) or lowest low (short) of the trade's bars so far
		stopped := false
		for j := a + 1; j <= last && s.Any(); j++ {
			// The levels from the trade's bars before j.
			var stop, take, trail float64
			if side == 1 {
				stop, take, trail = P*(1-s.Loss), P*(1+s.Take), extreme*(1-s.Trail)
			} else {
				stop, take, trail = P*(1+s.Loss), P*(1-s.Take), extreme*(1+s.Trail)
			}
			// beyond(x, lv, adverse): x is at or past level lv on the
			// adverse side (a long's stop below) or the favourable one.
			beyond := func(x, lv float64, adverse bool) bool {
				if (side == 1) == adverse {
					return x <= lv
				}
				return x >= lv
			}
			// The adverse level: of the stop and the trail, the one the
			// price meets first (the higher for a long, the lower for a
			// short); a tie is named stop.
			advLv, advWhy, advOn := 0.0, engine.ExitStop, false
			if s.Loss > 0 {
				advLv, advOn = stop, true
			}
			if s.Trail > 0 && (!advOn || (side == 1 && trail > advLv) || (side == -1 && trail < advLv)) {
				advLv, advWhy, advOn = trail, engine.ExitTrail, true
			}
			X, why, hit, gap := 0.0, engine.ExitStop, false, false
			gapCheck := !nextOpen || j > entryBar // next-open's entry bar opens at P
			adverseX, favourX := L[j], H[j]
			if side == -1 {
				adverseX, favourX = H[j], L[j]
			}
			switch {
			case gapCheck && advOn && beyond(O[j], advLv, true):
				X, why, hit, gap = O[j], advWhy, true, true
			case gapCheck && s.Take > 0 && beyond(O[j], take, false):
				X, why, hit, gap = O[j], engine.ExitTakeProfit, true, true
			case advOn && beyond(adverseX, advLv, true):
				X, why, hit = advLv, advWhy, true
			case s.Take > 0 && beyond(favourX, take, false):
				X, why, hit = take, engine.ExitTakeProfit, true
			}
			if hit {
				hold(a+1, j-1)
				if nextOpen && !gap && j > entryBar {
					prices = append(prices, O[j]) // the bar's gap, then the level
				}
				prices = append(prices, X)
				t.exit, t.reason, t.exitP = j, why, X
				// The decisions holding it: a..j-1 (a stop during bar j,
				// which is counted held), but a..j-2 when next-open's
				// stop is at bar j's open (bar j is then held flat).
				t.bars = j - a
				if nextOpen && gap {
					t.bars = j - 1 - a
				}
				stopped = true
				break
			}
			if side == 1 {
				extreme = max(extreme, H[j])
			} else {
				extreme = min(extreme, L[j])
			}
		}
		if !stopped {
			switch {
			case sig >= 0 && nextOpen: // the change at close sig fills at open sig+1
				hold(a+1, sig)
				prices = append(prices, O[sig+1])
				t.exit, t.reason, t.exitP, t.bars = sig+1, engine.ExitSignal, O[sig+1], sig-a
			case sig >= 0: // at close sig
				hold(a+1, sig)
				t.exit, t.reason, t.exitP, t.bars = sig, engine.ExitSignal, C[sig], sig-a
			default: // held to the last close
				hold(a+1, n-1)
				t.exit, t.reason, t.exitP, t.bars = n-1, engine.ExitEnd, C[n-1], n-1-a
			}
		}
		g := 1.0
		for m := 1; m < len(prices); m++ {
			g *= 1 + float64(side)*(prices[m]/prices[m-1]-1)
		}
		t.R = k*g*k - 1
		out = append(out, t)
		switch {
		case stopped: // flat until the first m >= exit bar whose state changes
			m := -1
			for i := max(t.exit, 1); i <= n-2; i++ {
				if state(i) != state(i-1) {
					m = i
					break
				}
			}
			if m < 0 {
				return out
			}
			cursor = m
		case sig >= 0:
			cursor = sig // p follows st: a reversal opens the next trade at sig
		default:
			return out
		}
	}
}

// gappyBars is a random walk whose opens gap from the previous close (now
// and then by several percent), with highs and lows straddling open and
// close, so stops are hit at the open, at their level, and two at once.
func gappyBars(rng *rand.Rand, n int) *engine.Bars {
	b := datatest.RandomWalk(rng, n, 100, 0.004)
	for i := 1; i < n; i++ {
		g := 0.001 * rng.NormFloat64()
		if rng.IntN(12) == 0 {
			g = 0.03 * rng.NormFloat64()
		}
		b.Open[i] = b.Close[i-1] * (1 + g)
		b.High[i] = max(b.Open[i], b.Close[i]) * (1 + 0.004*math.Abs(rng.NormFloat64()))
		b.Low[i] = min(b.Open[i], b.Close[i]) * (1 - 0.004*math.Abs(rng.NormFloat64()))
	}
	return b
}

// randomStates are a family's states in runs (0 before first). The last
// four are short, then long over the last three bars: a trade always
// opens on a state change at bar n-3 (after any stop's gate, and in
// long-only too), so that some trade of the cases is still open at the
// end (an exit by end) whatever the seed.
func randomStates(rng *rand.Rand, n, first int) []int8 {
	st := make([]int8, n)
	for i := first; i < n; i++ {
		st[i] = int8(rng.IntN(3)) - 1
		if i > first && rng.IntN(8) > 0 {
			st[i] = st[i-1]
		}
	}
	if n-4 > first {
		st[n-4] = -1
		st[n-3], st[n-2], st[n-1] = 1, 1, 1
	}
	return st
}

// TestExecAgainstIndependent compares BacktestPositionsTraceX in fp64 with
// simTrades on fresh random gappy bars and states (the seed is logged:
// replay with -seed), for both fills, both modes, and stop_loss,
// take_profit and trail alone and combined: the trade lists field by field
// (entry and exit bars, side, reason and bars exactly; prices and R to
// 1e-12 relative, R's relative to 1+R), and total_return (prod(1+R) - 1:
// flat bars grow by 1), total_trades, profit_factor and expectancy to
// 1e-12 relative.
func TestExecAgainstIndependent(t *testing.T) {
	rng := datatest.Rand(t)
	const n, first = 2500, 30
	bars := gappyBars(rng, n)
	r := kernels.BarReturns[float64](bars)
	x := reference.NewExec[float64](bars)
	stops := []engine.Stops{{}, {Loss: 0.01}, {Take: 0.015}, {Trail: 0.008}, {Loss: 0.006, Take: 0.01},
		{Loss: 0.02, Trail: 0.007}, {Take: 0.012, Trail: 0.01}, {Loss: 0.008, Take: 0.02, Trail: 0.006}}
	reasons := map[engine.Exit]int{}
	compared := 0
	for rep := range 3 {
		st := randomStates(rng, n, first)
		for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
			stm := make([]int8, n) // the states after the mode, for simTrades
			for i, v := range st {
				stm[i] = v
				if mode == engine.LongOnly && v < 0 {
					stm[i] = 0
				}
			}
			for _, fill := range []engine.Fill{engine.FillClose, engine.FillNextOpen} {
				for _, s := range stops {
					p := engine.Params{Fee: engine.DefaultFee, Slippage: 0.0003, BarsPerYear: 525600, Mode: mode, Fill: fill}
					label := fmt.Sprintf("rep %d %v fill %v stops %+v", rep, mode, fill, s)
					m, tr := reference.BacktestPositionsTraceX(st, r, first, p, x.WithStops(s))
					want := simTrades(bars, stm, first, p.Fee, p.Slippage, fill == engine.FillNextOpen, s)
					compareSim(t, label, m, tr, want)
					for _, w := range want {
						reasons[w.reason]++
					}
					compared += len(want)
				}
			}
		}
	}
	t.Logf("%d trades compared; exits by reason %v", compared, reasons)
	for _, e := range []engine.Exit{engine.ExitSignal, engine.ExitStop, engine.ExitTakeProfit, engine.ExitTrail, engine.ExitEnd} {
		if reasons[e] == 0 {
			t.Errorf("no exit by %v: the case tests too little", e)
		}
	}
}

func compareSim(t *testing.T, label string, m engine.Metrics, tr *engine.Trace, want []simTrade) {
	t.Helper()
	const rel = 1e-12
	got := tr.Trades
	if len(got) != len(want) || m.TotalTrades != len(want) {
		t.Errorf("%s: %d trades (total_trades %d), independent %d", label, len(got), m.TotalTrades, len(want))
	}
	E, win, loss, sum, held := 1.0, 0.0, 0.0, 0.0, 0
	nl, nw := 0, 0
	for i, w := range want {
		E *= 1 + w.R
		sum += w.R
		held += w.bars
		if w.R > 0 {
			win += w.R
			nw++
		} else if w.R < 0 {
			loss += w.R
			nl++
		}
		if i >= len(got) {
			continue
		}
		g := got[i]
		if g.Entry != w.entry || g.Exit != w.exit || g.Side != w.side || g.Reason != w.reason || g.Bars != w.bars ||
			!conformance.Near(g.EntryPrice, w.entryP, rel, 0) || !conformance.Near(g.ExitPrice, w.exitP, rel, 0) ||
			!conformance.Near(g.Return, w.R, 0, rel*(1+math.Abs(w.R))) {
			t.Errorf("%s: trade %d = %s,\nindependent %+v", label, i, fmtTrade(g), w)
			return
		}
	}
	wantPF := 0.0
	switch {
	case nl > 0:
		wantPF = win / -loss
	case nw > 0:
		wantPF = math.Inf(1)
	}
	wantExp := 0.0
	if len(want) > 0 {
		wantExp = sum / float64(len(want))
	}
	if !conformance.Near(1+m.TotalReturn, E, rel, 0) || !conformance.Near(m.ProfitFactor, wantPF, rel, 0) ||
		!conformance.Near(m.Expectancy, wantExp, rel, 1e-16) || m.LongBars+m.ShortBars != held {
		t.Errorf("%s: total_return %v profit_factor %v expectancy %v held bars %d; independent %v %v %v %d", label,
			m.TotalReturn, m.ProfitFactor, m.Expectancy, m.LongBars+m.ShortBars, E-1, wantPF, wantExp, held)
	}
}
