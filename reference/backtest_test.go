package reference_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// ---- hand-built paths --------------------------------------------------------
//
// The paths below use prices whose bar returns are exact binary fractions
// (+0.5, -0.5, -0.25: closes 64 -> 96 -> 144 -> 72 ...) and a fee of 1/16 per
// side, so keep = 1-f = 0.9375 and keep^2 = 0.87890625 are exact too: every
// equity value written below is the exact result, and the arithmetic can be
// checked on paper. The fee is unrealistically large on purpose: it makes
// each fee visible in the numbers.

const (
	k1 = 0.9375  // 1 - f, f = 1/16: one side of a trade
	k2 = k1 * k1 // (1-f)^2 = 0.87890625: a flip pays both sides
)

var nb = math.NaN() // an undefined indicator value (warm-up)

// handStats is the textbook finish of SPEC's ratio metrics from an rs list
// written out in a case: mean, population std, downside deviation
// sqrt(mean(min(rs,0)^2)), each annualised by sqrt(bpy).
func handStats(rs []float64, bpy float64) (sharpe, sortino float64) {
	m := float64(len(rs))
	mean := 0.0
	for _, v := range rs {
		mean += v / m
	}
	vr, dn := 0.0, 0.0
	for _, v := range rs {
		vr += (v - mean) * (v - mean) / m
		dn += min(v, 0) * min(v, 0) / m
	}
	if vr > 0 {
		sharpe = mean / math.Sqrt(vr) * math.Sqrt(bpy)
	}
	switch {
	case dn > 0:
		sortino = mean / math.Sqrt(dn) * math.Sqrt(bpy)
	case mean > 0:
		sortino = math.Inf(1)
	}
	return sharpe, sortino
}

type handCase struct {
	name   string
	close  []float64
	h, h3  []float64
	first  int
	fee    float64
	mode   engine.Mode
	bpy    float64
	pos    []int8    // the trace's Pos: pos[i] decided at the close of bar i, pos[n-1] = 0
	equity []float64 // E[0..n-1], E_final last
	rs     []float64 // E[i]/E[i-1] - 1, i = 1..n-1 (for sharpe and sortino)
	trades []engine.Trade
	want   engine.Metrics // Sharpe and Sortino come from handStats(rs)
}

func handCases() []handCase {
	h100 := func(n int, first int) []float64 { // h = 100 from first on
		h := make([]float64, n)
		for i := range h {
			h[i] = 100
			if i < first {
				h[i] = nb
			}
		}
		return h
	}
	// The path of the first cases: r = (-), 0, +0.5, +0.5, -0.5, +0.5.
	path := []float64{64, 64, 96, 144, 72, 108}

	var cs []handCase

	// Long at the close of bar 1, flip to short at the close of bar 3,
	// short until the end (exit fee at the last bar). bpy = 10, n-1 = 5 bars.
	//   bar 1: pos[0] = 0 flat                       g = 1            E1 = 1
	//   bar 2: pos[1] = +1, entry fee                g = k1*1.5       E2 = 1.40625
	//   bar 3: pos[2] = +1                           g = 1.5          E3 = 2.109375
	//   bar 4: pos[3] = -1, flip pays (1-f)^2, r=-.5 g = k2*1.5       E4 = 2.780914306640625
	//   bar 5: pos[4] = -1, r=+.5, exit fee          g = 0.5*k1       E5 = 1.303553581237793
	// rs = 0, 0.40625, 0.5, 0.318359375, -0.53125
	// trades: long 1->3: R = k1*1.5*1.5*k1 - 1 = 0.9775390625 (win)
	//         short 3->5: R = k1*1.5*0.5*k1 - 1 = -0.3408203125
	// max_drawdown = 1 - E5/E4 = 1 - 0.46875 = 0.53125
	// var_95: m = 5, element floor(0.05*4) = 0 of the sorted rs = -0.53125 = cvar_95
	// omega = (0.40625 + 0.5 + 0.318359375) / 0.53125
	// cagr = E5^(10/5) - 1 = E5^2 - 1; calmar = cagr / 0.53125
	// Part 2's trade metrics over R = 0.9775390625 (1001/1024) and
	// -0.3408203125 (-349/1024):
	//   profit_factor = 1001/349; expectancy = (1001-349)/2048 = 0.318359375
	//   avg_win = best = 0.9775390625; avg_loss = worst = -0.3408203125
	//   sqn: N = 2, population std = |R1-R2|/2 = 1350/2048 = 0.6591796875,
	//        sqrt(2) * 652/1350 = sqrt(2)*326/675
	//   avg_trade_bars = (2+2)/2 = 2; exposure = 4/5
	//   max_drawdown_bars: E1 = E0 (not below), E2..E4 new peaks, E5 below: 1
	{
		E := []float64{1, 1, k1 * 1.5, k1 * 2.25, k1 * 2.25 * k2 * 1.5, k1 * 2.25 * k2 * 1.5 * 0.5 * k1}
		cs = append(cs, handCase{
			name: "long then flip to short", close: path, first: 1, fee: 1.0 / 16, mode: engine.LongShort, bpy: 10,
			h: h100(6, 1), h3: []float64{nb, 101, 101, 99, 99, 101},
			pos: []int8{0, 1, 1, -1, -1, 0}, equity: E,
			rs:     []float64{0, 0.40625, 0.5, 0.318359375, -0.53125},
			trades: []engine.Trade{{Entry: 1, Exit: 3, Side: 1, Return: 0.9775390625}, {Entry: 3, Exit: 5, Side: -1, Return: -0.3408203125}},
			want: engine.Metrics{TotalReturn: E[5] - 1, CAGR: E[5]*E[5] - 1, MaxDrawdown: 0.53125, Calmar: (E[5]*E[5] - 1) / 0.53125,
				WinRate: 0.5, TotalTrades: 2, VaR95: -0.53125, CVaR95: -0.53125, Omega: (0.40625 + 0.5 + 0.318359375) / 0.53125,
				LongBars: 2, ShortBars: 2, FlatBars: 1,
				ProfitFactor: 1001.0 / 349, Expectancy: 0.318359375, AvgWin: 0.9775390625, AvgLoss: -0.3408203125,
				BestTrade: 0.9775390625, WorstTrade: -0.3408203125, AvgTradeBars: 2, Exposure: 0.8, SQN: math.Sqrt2 * 326 / 675,
				MaxDrawdownBars: 1},
		})
	}

	// The same signals in long-only mode: the short state becomes flat.
	//   bar 4: pos[3] = 0: the long is closed, exit fee  g = k1   E4 = 1.9775390625
	//   bar 5: pos[4] = 0 flat, no fee at the end        g = 1    E5 = E4
	// rs = 0, 0.40625, 0.5, -0.0625, 0; one trade 1->3, R = 0.9775390625 (win)
	// max_drawdown = 1 - E4/E3 = 0.0625; var = cvar = -0.0625
	// omega = 0.90625 / 0.0625 = 14.5
	// trade metrics: one win, no loss: profit_factor = +Inf, expectancy =
	// avg_win = best = worst = R, avg_loss 0, sqn 0 (N < 2); 2 bars held:
	// avg_trade_bars 2, exposure 2/5; E4 and E5 below the peak E3: 2 bars.
	{
		E := []float64{1, 1, k1 * 1.5, k1 * 2.25, k1 * 2.25 * k1, k1 * 2.25 * k1}
		cs = append(cs, handCase{
			name: "long-only maps short to flat", close: path, first: 1, fee: 1.0 / 16, mode: engine.LongOnly, bpy: 10,
			h: h100(6, 1), h3: []float64{nb, 101, 101, 99, 99, 101},
			pos: []int8{0, 1, 1, 0, 0, 0}, equity: E,
			rs:     []float64{0, 0.40625, 0.5, -0.0625, 0},
			trades: []engine.Trade{{Entry: 1, Exit: 3, Side: 1, Return: 0.9775390625}},
			want: engine.Metrics{TotalReturn: 0.9775390625, CAGR: E[5]*E[5] - 1, MaxDrawdown: 0.0625, Calmar: (E[5]*E[5] - 1) / 0.0625,
				WinRate: 1, TotalTrades: 1, VaR95: -0.0625, CVaR95: -0.0625, Omega: 14.5,
				LongBars: 2, ShortBars: 0, FlatBars: 3,
				ProfitFactor: math.Inf(1), Expectancy: 0.9775390625, AvgWin: 0.9775390625, BestTrade: 0.9775390625,
				WorstTrade: 0.9775390625, AvgTradeBars: 2, Exposure: 0.4, MaxDrawdownBars: 2},
		})
	}

	// Ties keep the previous position: h3 == h at bar 1 (first defined bar,
	// previous 0: stays flat) and at bar 3 (stays long).
	//   pos = 0, 0 (tie), +1, +1 (tie), -1
	//   bar 3: entry            g = k1*1.5        E3 = 1.40625
	//   bar 4: long, r = -0.5   g = 0.5           E4 = 0.703125
	//   bar 5: flip + exit fee  g = k2*0.5*k1     E5 = 0.703125*0.4119873046875
	// rs = 0, 0, 0.40625, -0.5, -0.5880126953125
	// trades: long 2->4: k1*1.5*0.5*k1 - 1 = -0.3408203125; short 4->5: k1*0.5*k1 - 1 = -0.560546875
	// max_drawdown = 1 - E5/E3 = 1 - 0.5*0.4119873046875 = 0.79400634765625
	// trade metrics over R = -698/2048 and -1148/2048 (two losses, no win):
	//   profit_factor = 0 (no win: 0 / |loss sum|); avg_win 0
	//   expectancy = avg_loss = -1846/4096 = -0.45068359375
	//   best = -0.3408203125, worst = -0.560546875
	//   sqn: std = |R1-R2|/2 = 450/4096 = 0.10986328125, sqrt(2)*(-1846/450) = -sqrt(2)*923/225
	//   avg_trade_bars = 3/2; exposure = 3/5; E4, E5 below the peak E3: 2
	{
		E := []float64{1, 1, 1, k1 * 1.5, k1 * 0.75, k1 * 0.75 * k2 * 0.5 * k1}
		cs = append(cs, handCase{
			name: "ties keep the position", close: path, first: 1, fee: 1.0 / 16, mode: engine.LongShort, bpy: 10,
			h: h100(6, 1), h3: []float64{nb, 100, 101, 100, 99, 100},
			pos: []int8{0, 0, 1, 1, -1, 0}, equity: E,
			rs:     []float64{0, 0, 0.40625, -0.5, -0.5880126953125},
			trades: []engine.Trade{{Entry: 2, Exit: 4, Side: 1, Return: -0.3408203125}, {Entry: 4, Exit: 5, Side: -1, Return: -0.560546875}},
			want: engine.Metrics{TotalReturn: E[5] - 1, CAGR: E[5]*E[5] - 1, MaxDrawdown: 0.79400634765625, Calmar: (E[5]*E[5] - 1) / 0.79400634765625,
				WinRate: 0, TotalTrades: 2, VaR95: -0.5880126953125, CVaR95: -0.5880126953125, Omega: 0.40625 / (0.5 + 0.5880126953125),
				LongBars: 2, ShortBars: 1, FlatBars: 2,
				ProfitFactor: 0, Expectancy: -0.45068359375, AvgLoss: -0.45068359375, BestTrade: -0.3408203125,
				WorstTrade: -0.560546875, AvgTradeBars: 1.5, Exposure: 0.6, SQN: -math.Sqrt2 * 923 / 225, MaxDrawdownBars: 2},
		})
	}

	// Warm-up: both series are defined from bar 0 and say "long", but first
	// = 3, so the position is 0 before bar 3 whatever they say.
	//   pos = 0, 0, 0, -1, -1
	//   bar 4: short entry, r = -0.5   g = k1*1.5    E4 = 1.40625
	//   bar 5: short, r = +0.5, exit   g = 0.5*k1    E5 = 0.6591796875
	// trade metrics: one loss R = -0.3408203125: profit_factor 0,
	// expectancy = avg_loss = best = worst = R, sqn 0 (N < 2);
	// avg_trade_bars 2, exposure 2/5; E5 below the peak E4: 1 bar.
	{
		E := []float64{1, 1, 1, 1, k1 * 1.5, k1 * 1.5 * 0.5 * k1}
		cs = append(cs, handCase{
			name: "warm-up is flat", close: path, first: 3, fee: 1.0 / 16, mode: engine.LongShort, bpy: 10,
			h: h100(6, 0), h3: []float64{101, 101, 101, 99, 99, 99},
			pos: []int8{0, 0, 0, -1, -1, 0}, equity: E,
			rs:     []float64{0, 0, 0, 0.40625, -0.53125},
			trades: []engine.Trade{{Entry: 3, Exit: 5, Side: -1, Return: -0.3408203125}},
			want: engine.Metrics{TotalReturn: -0.3408203125, CAGR: E[5]*E[5] - 1, MaxDrawdown: 0.53125, Calmar: (E[5]*E[5] - 1) / 0.53125,
				WinRate: 0, TotalTrades: 1, VaR95: -0.53125, CVaR95: -0.53125, Omega: 0.40625 / 0.53125,
				LongBars: 0, ShortBars: 2, FlatBars: 3,
				Expectancy: -0.3408203125, AvgLoss: -0.3408203125, BestTrade: -0.3408203125, WorstTrade: -0.3408203125,
				AvgTradeBars: 2, Exposure: 0.4, MaxDrawdownBars: 1},
		})
	}

	// The exit fee of an open position at the last bar, and a path with no
	// loss: omega and sortino are +Inf, max_drawdown and calmar 0.
	// close = 64, 64, 96, 144; bpy = 3 = n-1, so cagr = total_return.
	//   bar 2: entry   g = k1*1.5        E2 = 1.40625
	//   bar 3: exit    g = 1.5*k1        E3 = 1.9775390625
	// rs = 0, 0.40625, 0.40625; var: m = 3, element 0 = 0 = cvar
	// trade metrics: one win, profit_factor +Inf, expectancy = avg_win =
	// best = worst = 0.9775390625, sqn 0; avg_trade_bars 2, exposure 2/3;
	// equity never below its peak: max_drawdown_bars 0.
	{
		E := []float64{1, 1, k1 * 1.5, k1 * 1.5 * 1.5 * k1}
		cs = append(cs, handCase{
			name: "exit fee at the last bar, no loss", close: []float64{64, 64, 96, 144}, first: 1, fee: 1.0 / 16, mode: engine.LongShort, bpy: 3,
			h: h100(4, 1), h3: []float64{nb, 101, 101, 101},
			pos: []int8{0, 1, 1, 0}, equity: E,
			rs:     []float64{0, 0.40625, 0.40625},
			trades: []engine.Trade{{Entry: 1, Exit: 3, Side: 1, Return: 0.9775390625}},
			want: engine.Metrics{TotalReturn: 0.9775390625, CAGR: 0.9775390625, MaxDrawdown: 0, Calmar: 0,
				WinRate: 1, TotalTrades: 1, VaR95: 0, CVaR95: 0, Omega: math.Inf(1),
				LongBars: 2, ShortBars: 0, FlatBars: 1,
				ProfitFactor: math.Inf(1), Expectancy: 0.9775390625, AvgWin: 0.9775390625, BestTrade: 0.9775390625,
				WorstTrade: 0.9775390625, AvgTradeBars: 2, Exposure: 2.0 / 3},
		})
	}

	// A signal on the last bar opens nothing (pos[n-1] is never held): no
	// trade at all, every metric 0 (omega 0, sortino 0: neither gains nor
	// losses; profit_factor 0: neither wins nor losses; exposure 0), all
	// bars flat.
	cs = append(cs, handCase{
		name: "signal only on the last bar: no trade", close: []float64{64, 64, 96, 144}, first: 1, fee: 1.0 / 16, mode: engine.LongShort, bpy: 3,
		h: h100(4, 1), h3: []float64{nb, 100, 100, 101},
		pos: []int8{0, 0, 0, 0}, equity: []float64{1, 1, 1, 1}, rs: []float64{0, 0, 0},
		want: engine.Metrics{FlatBars: 3},
	})

	// h3 == h throughout: flat for ever, every metric 0.
	cs = append(cs, handCase{
		name: "ties from the start: no trade", close: path, first: 0, fee: 0.001, mode: engine.LongShort, bpy: 525600,
		h: h100(6, 0), h3: h100(6, 0),
		pos: []int8{0, 0, 0, 0, 0, 0}, equity: []float64{1, 1, 1, 1, 1, 1}, rs: []float64{0, 0, 0, 0, 0},
		want: engine.Metrics{FlatBars: 5},
	})

	// All gains, no fee, a constant return: std = 0 so sharpe is 0 by
	// SPEC's rule, while sortino (no downside, mean > 0) and omega are +Inf.
	// close = 64, 96, 144, 216: rs = 0.5, 0.5, 0.5; E3 = 1.5^3 = 3.375;
	// bpy = 3 = n-1: cagr = total_return = 2.375; var = cvar = 0.5.
	// One winning trade of R = 2.375 over 3 bars: profit_factor +Inf,
	// expectancy = avg_win = best = worst = 2.375, sqn 0, avg_trade_bars 3,
	// exposure 1, max_drawdown_bars 0.
	cs = append(cs, handCase{
		name: "all gains, constant return", close: []float64{64, 96, 144, 216}, first: 0, fee: 0, mode: engine.LongShort, bpy: 3,
		h: h100(4, 0), h3: []float64{101, 101, 101, 101},
		pos: []int8{1, 1, 1, 0}, equity: []float64{1, 1.5, 2.25, 3.375},
		rs:     []float64{0.5, 0.5, 0.5},
		trades: []engine.Trade{{Entry: 0, Exit: 3, Side: 1, Return: 2.375}},
		want: engine.Metrics{TotalReturn: 2.375, CAGR: 2.375, MaxDrawdown: 0, Calmar: 0, WinRate: 1, TotalTrades: 1,
			VaR95: 0.5, CVaR95: 0.5, Omega: math.Inf(1), LongBars: 3,
			ProfitFactor: math.Inf(1), Expectancy: 2.375, AvgWin: 2.375, BestTrade: 2.375, WorstTrade: 2.375,
			AvgTradeBars: 3, Exposure: 1},
	})

	// A losing long: close = 64, 64, 48, 36, 27 (r = 0, -0.25, -0.25, -0.25),
	// bpy = 4 = n-1 so cagr = total_return.
	//   bar 2: entry   g = k1*0.75          E2 = 0.703125
	//   bar 3:         g = 0.75             E3 = 0.52734375
	//   bar 4: exit    g = 0.75*k1          E4 = 0.37078857421875
	// rs = 0, -0.296875, -0.25, -0.296875; omega = 0/0.84375 = 0
	// max_drawdown = 1 - E4 = 0.62921142578125, calmar = -1
	// var: m = 4, element 0 = -0.296875; cvar = mean of the two -0.296875 (ties count)
	// trade metrics: one loss R = tr: profit_factor 0, expectancy =
	// avg_loss = best = worst = tr, sqn 0; avg_trade_bars 3, exposure 3/4;
	// E1 = E0 is the peak (equal is not below), E2, E3, E4 below it: 3.
	{
		tr := k1*0.421875*k1 - 1
		cs = append(cs, handCase{
			name: "losing long", close: []float64{64, 64, 48, 36, 27}, first: 1, fee: 1.0 / 16, mode: engine.LongShort, bpy: 4,
			h: h100(5, 1), h3: []float64{nb, 101, 101, 101, 101},
			pos: []int8{0, 1, 1, 1, 0}, equity: []float64{1, 1, k1 * 0.75, k1 * 0.5625, k1 * 0.421875 * k1},
			rs:     []float64{0, -0.296875, -0.25, -0.296875},
			trades: []engine.Trade{{Entry: 1, Exit: 4, Side: 1, Return: tr}},
			want: engine.Metrics{TotalReturn: tr, CAGR: tr, MaxDrawdown: -tr, Calmar: -1, WinRate: 0, TotalTrades: 1,
				VaR95: -0.296875, CVaR95: -0.296875, Omega: 0, LongBars: 3, FlatBars: 1,
				Expectancy: tr, AvgLoss: tr, BestTrade: tr, WorstTrade: tr, AvgTradeBars: 3, Exposure: 0.75, MaxDrawdownBars: 3},
		})
	}

	// VaR at rank 1: 21 bar returns (m = 21, element floor(0.05*20) = 1),
	// long throughout, no fee: ten +0.5, one -0.5, four +0.5, one -0.25,
	// five +0.5. Sorted: -0.5, -0.25, 0.5, ...: var_95 = -0.25 and cvar_95 =
	// (-0.5 - 0.25)/2 = -0.375. E_final = 1.5^19 * 0.5 * 0.75;
	// max_drawdown = 0.5 (the -0.5 bar off the peak 1.5^10; the later -0.25
	// falls from a new peak 1.5^14*0.5). Closes start at 2^30 so every
	// close is an integer and every return exact.
	// One winning trade over 21 bars: profit_factor +Inf, expectancy =
	// avg_win = best = worst = ef-1, sqn 0, avg_trade_bars 21, exposure 1.
	// max_drawdown_bars: after the -0.5 (bar 11) E = 0.5*P, then 0.75*P
	// (bar 12, still below P = 1.5^10), then 1.125*P (a new peak): 2 bars;
	// the -0.25 (bar 16) is 1 bar below its peak: the longest run is 2.
	{
		rets := []float64{}
		for range 10 {
			rets = append(rets, 0.5)
		}
		rets = append(rets, -0.5)
		for range 4 {
			rets = append(rets, 0.5)
		}
		rets = append(rets, -0.25)
		for range 5 {
			rets = append(rets, 0.5)
		}
		cl := []float64{1 << 30}
		E := []float64{1}
		pos := []int8{}
		for _, r := range rets {
			cl = append(cl, cl[len(cl)-1]*(1+r))
			E = append(E, E[len(E)-1]*(1+r))
			pos = append(pos, 1)
		}
		pos = append(pos, 0)
		ef := math.Pow(1.5, 19) * 0.5 * 0.75
		cs = append(cs, handCase{
			name: "var at rank 1", close: cl, first: 0, fee: 0, mode: engine.LongShort, bpy: 21,
			h: h100(22, 0), h3: slices.Repeat([]float64{101}, 22),
			pos: pos, equity: E, rs: rets,
			trades: []engine.Trade{{Entry: 0, Exit: 21, Side: 1, Return: ef - 1}},
			want: engine.Metrics{TotalReturn: ef - 1, CAGR: ef - 1, MaxDrawdown: 0.5, Calmar: (ef - 1) / 0.5, WinRate: 1, TotalTrades: 1,
				VaR95: -0.25, CVaR95: -0.375, Omega: 19 * 0.5 / 0.75, LongBars: 21,
				ProfitFactor: math.Inf(1), Expectancy: ef - 1, AvgWin: ef - 1, BestTrade: ef - 1, WorstTrade: ef - 1,
				AvgTradeBars: 21, Exposure: 1, MaxDrawdownBars: 2},
		})
	}
	for i := range cs {
		cs[i].want.Sharpe, cs[i].want.Sortino = handStats(cs[i].rs, cs[i].bpy)
	}
	return cs
}

// TestBacktestHandBuilt feeds hand-built h/h3 series to Backtest and
// BacktestTrace (so the test controls the signal) and checks every metric,
// the positions, the equity curve and the trades against the arithmetic in
// handCases. fp64 must agree to 1e-12 relative (the values are exact binary
// fractions, only the statistics round); fp32 runs the same cases to 1e-5.
func TestBacktestHandBuilt(t *testing.T) {
	for _, c := range handCases() {
		t.Run(c.name, func(t *testing.T) {
			if len(c.rs) != len(c.close)-1 || len(c.pos) != len(c.close) || len(c.equity) != len(c.close) {
				t.Fatalf("malformed case: n=%d rs=%d pos=%d equity=%d", len(c.close), len(c.rs), len(c.pos), len(c.equity))
			}
			runHand[float64](t, c, 1e-12)
			runHand[float32](t, c, 1e-5)
		})
	}
}

func runHand[F engine.Float](t *testing.T, c handCase, rel float64) {
	t.Helper()
	p := engine.Params{Fee: c.fee, Mode: c.mode, BarsPerYear: c.bpy}
	h, h3 := toF[F](c.h), toF[F](c.h3)
	r := kernels.BarReturns[F](datatest.CloseBars(c.close))
	m, tr := reference.BacktestTrace(h, h3, r, c.first, p)
	label := precName[F]()
	conformance.NearMetrics(t, label, m, c.want, rel, 1e-15)
	var sc reference.Scratch[F]
	if m2 := reference.Backtest(h, h3, r, c.first, p, &sc); !sameMetrics(m, m2) {
		t.Errorf("%s: Backtest %+v differs from BacktestTrace %+v", label, m2, m)
	}
	if !slices.Equal(tr.Pos, c.pos) {
		t.Errorf("%s: Pos = %v, want %v", label, tr.Pos, c.pos)
	}
	for i := range c.equity {
		if !conformance.Near(tr.Equity[i], c.equity[i], rel, 0) {
			t.Errorf("%s: Equity[%d] = %v, want %v", label, i, tr.Equity[i], c.equity[i])
		}
	}
	checkTrades(t, label, tr.Trades, c.trades, rel)
	// Fills at the close: a trade holds the bars Entry+1..Exit, and only
	// the one still open at the last bar ends by "end".
	for i, g := range tr.Trades {
		if g.Bars != g.Exit-g.Entry || (g.Reason == engine.ExitEnd) != (g.Exit == len(c.close)-1) ||
			(g.Reason != engine.ExitEnd && g.Reason != engine.ExitSignal) {
			t.Errorf("%s: trade %d: %d bars, reason %v (entry %d, exit %d of %d bars)", label, i, g.Bars, g.Reason, g.Entry, g.Exit, len(c.close))
		}
	}
}

func checkTrades(t *testing.T, label string, got, want []engine.Trade, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d trades %+v, want %d %+v", label, len(got), got, len(want), want)
		return
	}
	for i := range got {
		g, w := got[i], want[i]
		// R = (1-f)*prod*(1-f) - 1: the product's error is relative to 1+R,
		// so near 0 the tolerance is absolute.
		if g.Entry != w.Entry || g.Exit != w.Exit || g.Side != w.Side || !conformance.Near(g.Return, w.Return, rel, rel*(1+math.Abs(w.Return))) {
			t.Errorf("%s: trade %d = %+v, want %+v", label, i, g, w)
		}
	}
}

// ---- an independent implementation ----------------------------------------

type refResult struct {
	m      engine.Metrics
	pos    []int8
	equity []float64
	trades []engine.Trade
	std    float64 // population std of rs (for the tolerance of sharpe)
	down   float64 // downside deviation (for sortino)
}

// refBacktest is SPEC "Signal, position, fills", "Trades" and "Metrics per
// combo" written as directly as possible in float64, one quantity at a
// time: positions, then equity and rs, then each metric, VaR by a full
// sort. It shares no code with the engine.
func refBacktest(h, h3, close []float64, first int, fee float64, mode engine.Mode, bpy float64) refResult {
	n := len(close)
	res := refResult{pos: make([]int8, n), equity: make([]float64, n)}
	// Positions pos[0..n-2]; pos[n-1] is never held and stays 0 here.
	for i := 0; i < n-1; i++ {
		var prev int8
		if i > 0 {
			prev = res.pos[i-1]
		}
		switch {
		case i < first || math.IsNaN(h[i]) || math.IsNaN(h3[i]):
			res.pos[i] = 0
		case h3[i] > h[i]:
			res.pos[i] = 1
		case h3[i] < h[i]:
			res.pos[i] = -1
			if mode == engine.LongOnly {
				res.pos[i] = 0
			}
		default:
			res.pos[i] = prev
		}
	}
	ret := func(i int) float64 { return close[i]/close[i-1] - 1 }
	// Equity: E[i+1] = E[i] * g with g = (1-f)^|pos[i]-pos[i-1]| * (1 +
	// pos[i]*r[i+1]), the last bar's g times the exit fee (1-f)^|pos[n-2]|.
	// rs[i+1] = g - 1 (SPEC "Conventions", "Equity and returns"): equal to
	// E[i+1]/E[i] - 1 in exact arithmetic, but the ratio form scatters the
	// bars whose return is a fee alone (all exactly -f) by an ulp, and when
	// they sit at var_95 that changes which of them cvar_95 counts.
	E := res.equity
	E[0] = 1
	m := n - 1
	rs := make([]float64, m)
	for i := 0; i < n-1; i++ {
		var prev int8
		if i > 0 {
			prev = res.pos[i-1]
		}
		d := math.Abs(float64(res.pos[i] - prev))
		g := math.Pow(1-fee, d) * (1 + float64(res.pos[i])*ret(i+1))
		if i == n-2 {
			g *= math.Pow(1-fee, math.Abs(float64(res.pos[n-2])))
		}
		E[i+1] = E[i] * g
		rs[i] = g - 1
	}
	// Trades.
	wins := 0
	for a := 0; a < n-1; a++ {
		var prev int8
		if a > 0 {
			prev = res.pos[a-1]
		}
		if res.pos[a] == 0 || res.pos[a] == prev {
			continue
		}
		b := a + 1
		for b < n-1 && res.pos[b] == res.pos[a] {
			b++
		}
		prod := 1.0
		for i := a + 1; i <= b; i++ {
			prod *= 1 + float64(res.pos[a])*ret(i)
		}
		R := (1-fee)*prod*(1-fee) - 1
		res.trades = append(res.trades, engine.Trade{Entry: a, Exit: b, Side: res.pos[a], Return: R})
		if R > 0 {
			wins++
		}
	}
	// Metrics.
	var mt engine.Metrics
	mt.TotalReturn = E[n-1] - 1
	mt.CAGR = math.Pow(E[n-1], bpy/float64(m)) - 1
	sum := 0.0
	for _, v := range rs {
		sum += v
	}
	mean := sum / float64(m)
	ss, dd, gains, losses := 0.0, 0.0, 0.0, 0.0
	for _, v := range rs {
		ss += (v - mean) * (v - mean)
		if v < 0 {
			dd += v * v
			losses += -v
		} else {
			gains += v
		}
	}
	res.std = math.Sqrt(ss / float64(m))
	res.down = math.Sqrt(dd / float64(m))
	if res.std != 0 {
		mt.Sharpe = mean / res.std * math.Sqrt(bpy)
	}
	switch {
	case res.down > 0:
		mt.Sortino = mean / res.down * math.Sqrt(bpy)
	case mean > 0:
		mt.Sortino = math.Inf(1)
	}
	peak := E[0]
	for _, e := range E {
		peak = max(peak, e)
		mt.MaxDrawdown = max(mt.MaxDrawdown, 1-e/peak)
	}
	if mt.MaxDrawdown > 0 {
		mt.Calmar = mt.CAGR / mt.MaxDrawdown
	}
	mt.TotalTrades = len(res.trades)
	if mt.TotalTrades > 0 {
		mt.WinRate = float64(wins) / float64(mt.TotalTrades)
	}
	sorted := slices.Clone(rs)
	sort.Float64s(sorted)
	mt.VaR95 = sorted[(m-1)/20] // floor(0.05*(m-1)) in integers
	cs, cn := 0.0, 0
	for _, v := range sorted {
		if v <= mt.VaR95 {
			cs += v
			cn++
		}
	}
	mt.CVaR95 = cs / float64(cn)
	switch {
	case losses > 0:
		mt.Omega = gains / losses
	case gains > 0:
		mt.Omega = math.Inf(1)
	}
	for _, p := range res.pos[:n-1] {
		switch p {
		case 1:
			mt.LongBars++
		case -1:
			mt.ShortBars++
		default:
			mt.FlatBars++
		}
	}
	res.m = mt
	return res
}

// randomSignals returns a price path and h/h3 series whose sign of h3-h
// runs in streaks of a few bars, with exact ties (5%) and NaN warm-ups.
// Non-tie gaps are at least 1e-4 relative, so float32 conversion cannot
// change a comparison.
func randomSignals(rng *rand.Rand, n, first int) (close, h, h3 []float64) {
	close = datatest.Closes(rng, n, 100, 0.01)
	h, h3 = make([]float64, n), make([]float64, n)
	z := 0.0
	for i := range close {
		z = 0.7*z + 0.003*rng.NormFloat64()
		if math.Abs(z) < 1e-4 {
			z = math.Copysign(1e-4, z)
		}
		h[i] = float64(float32(close[i]))
		h3[i] = float64(float32(close[i] * (1 + z)))
		if rng.IntN(20) == 0 {
			h3[i] = h[i]
		}
		if i < first {
			h3[i] = nb
			if i < first-rng.IntN(3) {
				h[i] = nb
			}
		}
	}
	return close, h, h3
}

// TestBacktestAgainstIndependent compares reference.Backtest and BacktestTrace
// in fp64 with refBacktest on random paths: n from 2 to 5000, both modes,
// fee 0 and 0.001, three annualisations. Counts must be equal; metrics
// agree to 1e-9 relative, with absolute floors derived from how far the two
// evaluation orders can drift (rs agree to ~2e-16 absolute, so sharpe can
// move by ~1e-13*sqrt(bpy)/std; E agrees to ~n*4e-16 relative, amplified by
// the cagr exponent bpy/(n-1)). The first seed is fixed; the second is
// fresh each run (logged: replay with -seed).
func TestBacktestAgainstIndependent(t *testing.T) {
	cases := 0
	for _, seed := range datatest.Seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 31))
		ns := []int{2, 3, 5, 10, 37, 100, 1000, 5000}
		for range 6 {
			ns = append(ns, 10+rng.IntN(4990))
		}
		for _, n := range ns {
			for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
				for _, fee := range []float64{0, 0.001} {
					first := rng.IntN(min(n, 60))
					bpy := []float64{252, 8760, 525600}[rng.IntN(3)]
					close, h, h3 := randomSignals(rng, n, first)
					label := fmt.Sprintf("seed %d n=%d first=%d %s fee=%g bpy=%g", seed, n, first, mode, fee, bpy)
					compareWithRef(t, label, close, h, h3, first, engine.Params{Fee: fee, Mode: mode, BarsPerYear: bpy})
					cases++
				}
			}
		}
	}
	t.Logf("%d random combos compared", cases)
}

func compareWithRef(t *testing.T, label string, close, h, h3 []float64, first int, p engine.Params) {
	t.Helper()
	n := len(close)
	ref := refBacktest(h, h3, close, first, p.Fee, p.Mode, p.BarsPerYear)
	r := kernels.BarReturns[float64](datatest.CloseBars(close))
	var sc reference.Scratch[float64]
	got := reference.Backtest(h, h3, r, first, p, &sc)
	gotT, tr := reference.BacktestTrace(h, h3, r, first, p)
	if _, same := conformance.SameMetrics(got, gotT); !same {
		t.Errorf("%s: Backtest and BacktestTrace differ: %+v vs %+v", label, got, gotT)
	}
	want := ref.m
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"total_trades", got.TotalTrades, want.TotalTrades}, {"long_bars", got.LongBars, want.LongBars},
		{"short_bars", got.ShortBars, want.ShortBars}, {"flat_bars", got.FlatBars, want.FlatBars},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s = %d, independent %d", label, c.name, c.got, c.want)
		}
	}
	relE := float64(n) * 4e-16 // relative drift bound of E between the two orders
	expo := p.BarsPerYear / float64(n-1)
	cagrAbs := 4 * (1 + math.Abs(want.CAGR)) * expo * relE
	ann := math.Sqrt(p.BarsPerYear)
	ratioAbs := func(scale float64) float64 {
		if scale == 0 {
			return 1e-12
		}
		return 1e-13 * ann / scale
	}
	for _, c := range []struct {
		name      string
		got, want float64
		abs       float64
	}{
		{"total_return", got.TotalReturn, want.TotalReturn, 4 * relE * (1 + want.TotalReturn)},
		{"cagr", got.CAGR, want.CAGR, cagrAbs},
		{"sharpe", got.Sharpe, want.Sharpe, ratioAbs(ref.std)},
		{"sortino", got.Sortino, want.Sortino, ratioAbs(ref.down)},
		{"max_drawdown", got.MaxDrawdown, want.MaxDrawdown, 4 * relE},
		{"calmar", got.Calmar, want.Calmar, cagrAbs/max(want.MaxDrawdown, 1e-300) + 1e-12},
		{"win_rate", got.WinRate, want.WinRate, 0},
		{"var_95", got.VaR95, want.VaR95, 1e-14},
		{"cvar_95", got.CVaR95, want.CVaR95, 1e-14},
		{"omega", got.Omega, want.Omega, 1e-12},
	} {
		if !conformance.Near(c.got, c.want, 1e-9, c.abs) {
			t.Errorf("%s: %s = %v, independent %v (diff %.3g)", label, c.name, c.got, c.want, c.got-c.want)
		}
	}
	if !slices.Equal(tr.Pos[:n-1], ref.pos[:n-1]) || tr.Pos[n-1] != 0 {
		t.Errorf("%s: trace positions differ from the independent ones", label)
	}
	for i := range ref.equity {
		if !conformance.Near(tr.Equity[i], ref.equity[i], 4*relE, 0) {
			t.Errorf("%s: Equity[%d] = %v, independent %v", label, i, tr.Equity[i], ref.equity[i])
			break
		}
	}
	checkTrades(t, label, tr.Trades, ref.trades, 4*relE)

	// The fp32 path on the same signals (every non-tie gap is far above
	// float32 resolution): the same positions, so the same counts; returns
	// to float32 accuracy.
	m32 := reference.Backtest(toF[float32](h), toF[float32](h3), kernels.BarReturns[float32](datatest.CloseBars(close)), first, p, new(reference.Scratch[float32]))
	if m32.TotalTrades != want.TotalTrades || m32.LongBars != want.LongBars || m32.ShortBars != want.ShortBars || m32.FlatBars != want.FlatBars {
		t.Errorf("%s: fp32 counts trades %d long %d short %d flat %d, independent %d %d %d %d", label,
			m32.TotalTrades, m32.LongBars, m32.ShortBars, m32.FlatBars, want.TotalTrades, want.LongBars, want.ShortBars, want.FlatBars)
	}
	if d := math.Abs(m32.TotalReturn - want.TotalReturn); d > float64(n)*3e-7*(1+want.TotalReturn) {
		t.Errorf("%s: fp32 total_return %v, independent %v", label, m32.TotalReturn, want.TotalReturn)
	}
}

// TestPositionsMatchesTrace: parity's Positions and the backtest's own
// state machine agree on every held bar (pos[0..n-2]); the trace leaves
// pos[n-1] at 0 since it is never held.
func TestPositionsMatchesTrace(t *testing.T) {
	for _, seed := range datatest.Seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 41))
		for range 20 {
			n := 2 + rng.IntN(3000)
			first := rng.IntN(min(n, 80))
			close, h, h3 := randomSignals(rng, n, first)
			r := kernels.BarReturns[float64](datatest.CloseBars(close))
			for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
				_, tr := reference.BacktestTrace(h, h3, r, first, engine.Params{Fee: 0.001, Mode: mode, BarsPerYear: 525600})
				pos := make([]int8, n)
				reference.Positions(h, h3, first, mode, 0, pos)
				if !slices.Equal(pos[:n-1], tr.Pos[:n-1]) {
					for i := range n - 1 {
						if pos[i] != tr.Pos[i] {
							t.Errorf("seed %d n=%d first=%d %s: Positions[%d] = %d, trace %d", seed, n, first, mode, i, pos[i], tr.Pos[i])
							break
						}
					}
				}
				if tr.Pos[n-1] != 0 {
					t.Errorf("seed %d n=%d: trace Pos[n-1] = %d, want 0 (never held)", seed, n, tr.Pos[n-1])
				}
				// float32 series of the same values: the same positions.
				pos32 := make([]int8, n)
				reference.Positions(toF[float32](h), toF[float32](h3), first, mode, 0, pos32)
				if !slices.Equal(pos, pos32) {
					t.Errorf("seed %d n=%d %s: float32 Positions differ", seed, n, mode)
				}
			}
		}
	}
}

// ---- selection -----------------------------------------------------------------

// TestSelectAndTailSelect compares Select and tailSelect with a full sort
// on arrays full of duplicates, for k at 0, at 5% and at the end, below and
// above tailSelect's sampling threshold (8*1024), and on an adversarial
// layout where the strided sample sees one value only (its band then misses
// rank k and the fallback runs). Values are integers, so the float64 sums
// are exact whatever the order; the float32 sums are checked against the
// recursive-summation bound count*u*sum|x|.
func TestSelectAndTailSelect(t *testing.T) {
	for _, seed := range datatest.Seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 51))
		for _, n := range []int{1, 2, 15, 16, 17, 100, 8191, 8192, 50_000} {
			for _, distinct := range []int{1, 3, 50, 1 << 20} {
				a := make([]float64, n)
				for i := range a {
					a[i] = float64(rng.IntN(distinct) - distinct/2)
				}
				checkSelect(t, fmt.Sprintf("seed %d n=%d distinct=%d", seed, n, distinct), a)
			}
		}
		// Adversarial: every 16th element (the sample's stride at n = 16384)
		// is 5, the rest uniform on 0..10: the sample brackets rank k at 5,
		// but the true 5% element is 0.
		n := 16384
		a := make([]float64, n)
		for i := range a {
			a[i] = float64(rng.IntN(11))
			if i%16 == 0 {
				a[i] = 5
			}
		}
		checkSelect(t, fmt.Sprintf("seed %d adversarial sample", seed), a)
	}
}

func checkSelect(t *testing.T, label string, a []float64) {
	t.Helper()
	n := len(a)
	sorted := slices.Clone(a)
	sort.Float64s(sorted)
	ks := []int{0, n / 20, (n - 1) / 20, n / 2, n - 1}
	for _, k := range ks {
		b := slices.Clone(a)
		if got := kernels.Select(b, k); got != sorted[k] {
			t.Errorf("%s: Select(k=%d) = %v, want %v", label, k, got, sorted[k])
		}
		for i := range b {
			if (i < k && b[i] > b[k]) || (i > k && b[i] < b[k]) {
				t.Errorf("%s: Select(k=%d) did not partition at %d", label, k, i)
				break
			}
		}
		wantSum, wantAbs, wantCnt := 0.0, 0.0, 0
		for _, v := range sorted {
			if v <= sorted[k] {
				wantSum += v
				wantAbs += math.Abs(v)
				wantCnt++
			}
		}
		for _, F := range []string{"fp64", "fp32"} {
			var v, s float64
			var c int
			if F == "fp64" {
				v, s, c = reference.TailSelect(slices.Clone(a), k, new(reference.Scratch[float64]))
			} else {
				v32, s32, c32 := reference.TailSelect(toF[float32](a), k, new(reference.Scratch[float32]))
				v, s, c = float64(v32), float64(s32), c32
			}
			sumTol := 0.0 // integer sums are exact in float64
			if F == "fp32" {
				// recursive summation in float32: |error| <= (count-1)*u*sum|x|
				sumTol = float64(wantCnt) * 0x1p-24 * wantAbs
			}
			if v != sorted[k] || math.Abs(s-wantSum) > sumTol || c != wantCnt {
				t.Errorf("%s %s: tailSelect(k=%d) = (%v, %v, %d), want (%v, %v, %d)", label, F, k, v, s, c, sorted[k], wantSum, wantCnt)
			}
		}
	}
}
