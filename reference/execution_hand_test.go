package reference_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// ---- hand-computed cases of SPEC Part 2 "Execution options" -------------------
//
// Each case is a few bars whose prices make every ratio an exact binary
// fraction (64 -> 80 is 1.25, 64 -> 56 is 0.875), stops that are binary
// fractions too (1/8, 1/4: a long stop from 64 sits at 56), and a fee of
// f = 1/16 (k = 15/16) so each fee shows in the numbers. The case's comment
// derives every bar's growth g (SPEC's formulas, step i deciding p[i] at
// the close of bar i, g the growth of bar i+1) and every trade; the test
// builds the equity, the returns and every metric from those g and trades
// by the textbook definitions (handExecMetrics) and compares them with
// BacktestPositionsTraceX, in fp64 to 1e-12 and in fp32 to 1e-5 relative.

type bar struct{ o, h, l, c float64 }

func ohlcBars(b []bar) *engine.Bars {
	n := len(b)
	out := &engine.Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n), Low: make([]float64, n),
		Close: make([]float64, n), Volume: make([]float64, n)}
	for i, x := range b {
		out.Time[i] = int64(1_700_000_000+60*i) * 1e9
		out.Open[i], out.High[i], out.Low[i], out.Close[i], out.Volume[i] = x.o, x.h, x.l, x.c, 1
	}
	return out
}

type execCase struct {
	name              string
	bars              []bar
	st                []int8 // the family's states (before the mode)
	first             int
	p                 engine.Params // BarsPerYear, fees, fill, mode, rf
	stops             engine.Stops
	g                 []float64 // the growth of bars 1..n-1 (len n-1), by hand
	trades            []engine.Trade
	pos               []int8 // the trace's Pos (len n): p[i], 0 after a stop, pos[n-1] = 0
	long, short, flat int
}

const kf = 15.0 / 16 // k = 1-f with f = 1/16 (no slippage)

func execCases() []execCase {
	fee := engine.Params{Fee: 1.0 / 16, BarsPerYear: 12}
	nextOpen := fee
	nextOpen.Fill = engine.FillNextOpen
	k := kf
	var cs []execCase

	// (a) A gap through a long stop fills at the open, fill close.
	// s = 1/8; entry at close[1] = 64: stop level 56.
	//   i=0  flat (before first)                                g = 1
	//   i=1  enter long at close 1 (k); bar 2's low 60 > 56: no hit,
	//        r[2] = 64/64 - 1 = 0                               g = k
	//   i=2  held; bar 3 opens at 52 <= 56: a gap, exit at the OPEN 52
	//        (not the level 56): (1 + (52/64 - 1)) * k          g = 0.8125 k
	//   i=3  0 after the stop, st unchanged (+1): flat          g = 1
	// trade: entry 1 at 64, exit 3 at 52 (stop), bars 2 and 3 held:
	// Bars 2, R = k * 1 * 0.8125 * k - 1.
	gapBars := []bar{{64, 64, 64, 64}, {64, 66, 62, 64}, {64, 68, 60, 64}, {52, 54, 50, 52}, {52, 52, 52, 52}}
	cs = append(cs, execCase{
		name: "a: gap through a long stop, fill close", bars: gapBars, st: []int8{0, 1, 1, 1, 1}, first: 1, p: fee,
		stops: engine.Stops{Loss: 0.125},
		g:     []float64{1, k, 0.8125 * k, 1},
		trades: []engine.Trade{{Entry: 1, Exit: 3, Side: 1, Return: k*0.8125*k - 1, Bars: 2, Reason: engine.ExitStop,
			EntryPrice: 64, ExitPrice: 52}},
		pos: []int8{0, 1, 1, 0, 0}, long: 2, flat: 2,
	})
	// (a') The same gap with fill next-open: the signal of close 1 enters at
	// open[2] = 64 (level 56); bar 2's low 60 > 56, no hit.
	//   i=1  (1 + 0*gap) * k * (1 + (64/64 - 1))                g = k
	//   i=2  the held long's open 52 <= 56: exit at the open,
	//        (1 + (52/64 - 1)) * k; p[2] = 0 (bar 3 held flat)   g = 0.8125 k
	//   i=3  flat                                               g = 1
	// trade: entry bar 2 (its open), exit bar 3 (its open), only bar 2 held:
	// Bars 1, R = k * 0.8125 * k - 1.
	cs = append(cs, execCase{
		name: "a: gap through a long stop, fill next-open", bars: gapBars, st: []int8{0, 1, 1, 1, 1}, first: 1, p: nextOpen,
		stops: engine.Stops{Loss: 0.125},
		g:     []float64{1, k, 0.8125 * k, 1},
		trades: []engine.Trade{{Entry: 2, Exit: 3, Side: 1, Return: k*0.8125*k - 1, Bars: 1, Reason: engine.ExitStop,
			EntryPrice: 64, ExitPrice: 52}},
		pos: []int8{0, 1, 0, 0, 0}, long: 1, flat: 3,
	})

	// (b) Stop and take-profit both reached on one bar: the stop is taken.
	// s = t = 1/8, entry 64 at close 1: stop 56, take-profit 72. Bar 2
	// (o 64, h 80, l 48) reaches both: the stop, at its level 56.
	//   i=1  k * (1 + (56/64 - 1)) * k                           g = 0.875 k^2
	// trade 1: 1 -> 2, Bars 1, stop, 64 -> 56, R = 0.875 k^2 - 1.
	//   i=2  st[2] = +1 unchanged: flat (gated)                   g = 1
	//   i=3  st[3] = 0: the gate opens, p = 0                     g = 1
	//   i=4  st[4] = +1: enter at close 4 = 64 (stop 56, tp 72);
	//        bar 5 (o 64, h 76, l 60): the take-profit alone, at 72:
	//        k * (72/64) * k                                     g = 1.125 k^2
	// trade 2: 4 -> 5, Bars 1, take-profit, 64 -> 72, R = 1.125 k^2 - 1.
	//   i=5  gated (st[5] = +1 unchanged): flat                   g = 1
	cs = append(cs, execCase{
		name: "b: stop and take-profit on one bar take the stop", p: fee, first: 1,
		bars:  []bar{{64, 64, 64, 64}, {64, 64, 64, 64}, {64, 80, 48, 60}, {60, 64, 56, 64}, {64, 64, 64, 64}, {64, 76, 60, 70}, {70, 70, 70, 70}},
		st:    []int8{0, 1, 1, 0, 1, 1, 1},
		stops: engine.Stops{Loss: 0.125, Take: 0.125},
		g:     []float64{1, 0.875 * k * k, 1, 1, 1.125 * k * k, 1},
		trades: []engine.Trade{
			{Entry: 1, Exit: 2, Side: 1, Return: 0.875*k*k - 1, Bars: 1, Reason: engine.ExitStop, EntryPrice: 64, ExitPrice: 56},
			{Entry: 4, Exit: 5, Side: 1, Return: 1.125*k*k - 1, Bars: 1, Reason: engine.ExitTakeProfit, EntryPrice: 64, ExitPrice: 72}},
		pos: []int8{0, 1, 0, 0, 1, 0, 0}, long: 2, flat: 4,
	})
	// (b') The same bars, fill next-open: the signal of close 1 enters at
	// open[2] = 64, and the entry bar itself is checked: bar 2 reaches stop
	// and take-profit, the stop at 56: k * (56/64) * k (i=1). The second
	// signal (close 4) enters at open[5] = 64; bar 5 reaches 72: k*1.125*k
	// (i=4). Entries and exits on bars 2 and 5, Bars 1 each.
	cs = append(cs, execCase{
		name: "b: stop and take-profit on one bar take the stop, fill next-open", p: nextOpen, first: 1,
		bars:  []bar{{64, 64, 64, 64}, {64, 64, 64, 64}, {64, 80, 48, 60}, {60, 64, 56, 64}, {64, 64, 64, 64}, {64, 76, 60, 70}, {70, 70, 70, 70}},
		st:    []int8{0, 1, 1, 0, 1, 1, 1},
		stops: engine.Stops{Loss: 0.125, Take: 0.125},
		g:     []float64{1, 0.875 * k * k, 1, 1, 1.125 * k * k, 1},
		trades: []engine.Trade{
			{Entry: 2, Exit: 2, Side: 1, Return: 0.875*k*k - 1, Bars: 1, Reason: engine.ExitStop, EntryPrice: 64, ExitPrice: 56},
			{Entry: 5, Exit: 5, Side: 1, Return: 1.125*k*k - 1, Bars: 1, Reason: engine.ExitTakeProfit, EntryPrice: 64, ExitPrice: 72}},
		pos: []int8{0, 1, 0, 0, 1, 0, 0}, long: 2, flat: 4,
	})

	// (c) Trail u = 1/8 with a stop s = 1/8, fill close, entry 64 at close 1.
	//   bar 2 (o 64, h 80, l 60, c 64): peak before it = P = 64: trail 56 =
	//   stop 56 (a tie: the stop's name), low 60 > 56: no hit.
	//   i=1  k * (64/64)                                        g = k
	//   bar 3 (o 72, h 96, l 69, c 80): the peak before it is 80 (bar 2's
	//   high; bar 3's own 96 does not count, else the level were 84): trail
	//   70 > stop 56, so the trail; the open 72 is above it, the low 69
	//   reaches it: exit at 70: (1 + (70/64 - 1)) * k
	//   i=2                                                     g = 1.09375 k
	//   i=3  gated                                              g = 1
	// trade: 1 -> 3, Bars 2, trail, 64 -> 70, R = k * 1.09375 * k - 1.
	trailBars := []bar{{64, 64, 64, 64}, {64, 64, 64, 64}, {64, 80, 60, 64}, {72, 96, 69, 80}, {80, 80, 80, 80}}
	cs = append(cs, execCase{
		name: "c: trail from the highest high before the bar, fill close", bars: trailBars, st: []int8{0, 1, 1, 1, 1}, first: 1, p: fee,
		stops: engine.Stops{Loss: 0.125, Trail: 0.125},
		g:     []float64{1, k, 1.09375 * k, 1},
		trades: []engine.Trade{{Entry: 1, Exit: 3, Side: 1, Return: k*1.09375*k - 1, Bars: 2, Reason: engine.ExitTrail,
			EntryPrice: 64, ExitPrice: 70}},
		pos: []int8{0, 1, 1, 0, 0}, long: 2, flat: 2,
	})
	// (c') Next-open: entry at open[2] = 64, bar 2 checked (trail 56, low 60:
	// no hit): i=1 g = k * (64/64). Bar 3: peak 80, trail 70; its open 72
	// is above 70 (no gap); the low reaches 70: (1 + (72/64 - 1)) * (1 +
	// (70/72 - 1)) * k = 1.125 * (70/72) * k, i.e. 1.09375 k in exact
	// arithmetic (two F divisions here: the tolerance covers them).
	cs = append(cs, execCase{
		name: "c: trail from the highest high before the bar, fill next-open", bars: trailBars, st: []int8{0, 1, 1, 1, 1}, first: 1, p: nextOpen,
		stops: engine.Stops{Loss: 0.125, Trail: 0.125},
		g:     []float64{1, k, 1.09375 * k, 1},
		trades: []engine.Trade{{Entry: 2, Exit: 3, Side: 1, Return: k*1.09375*k - 1, Bars: 2, Reason: engine.ExitTrail,
			EntryPrice: 64, ExitPrice: 70}},
		pos: []int8{0, 1, 1, 0, 0}, long: 2, flat: 2,
	})

	// (d) Fill next-open, no stops, st = [0, 1, 1, 0, 1, -1], first 1.
	// Opens and closes: c1 64; o2 80 (gap 1.25), c2 100 (intra 1.25); o3 75
	// (0.75), c3 112.5 (1.5); o4 98.4375 (0.875), c4 123.046875 (1.25); o5
	// 61.5234375 (0.5), c5 92.28515625 (1.5).
	//   i=0  flat                                               g = 1
	//   i=1  enter long at open 2: k * (1 + 0.25)                g = 1.25 k
	//   i=2  held: (1 + (75/100 - 1)) * (1 + (112.5/75 - 1))    g = 0.75 * 1.5 = 1.125
	//   i=3  st 0: held until open 4 (0.875), exit there (k)    g = 0.875 k
	//   i=4  the signal of close 4 (the second-to-last bar) enters at
	//        open 5 (k), held to close 5 (1.5), closed there (k) g = 1.5 k^2
	//   st[5] = -1, the signal of the last bar: never held.
	// trades: 2 -> 4 (open to open), Bars 2, signal, 80 -> 98.4375,
	// R = k * 1.25 * 1.125 * 0.875 * k - 1; 5 -> 5, Bars 1, end,
	// 61.5234375 -> 92.28515625, R = k * 1.5 * k - 1.
	cs = append(cs, execCase{
		name: "d: next-open, a signal on the second-to-last and on the last bar", p: nextOpen, first: 1,
		bars: []bar{{64, 64, 64, 64}, {64, 64, 64, 64}, {80, 100, 80, 100}, {75, 112.5, 75, 112.5}, {98.4375, 123.046875, 98.4375, 123.046875},
			{61.5234375, 92.28515625, 61.5234375, 92.28515625}},
		st: []int8{0, 1, 1, 0, 1, -1},
		g:  []float64{1, 1.25 * k, 1.125, 0.875 * k, 1.5 * k * k},
		trades: []engine.Trade{
			{Entry: 2, Exit: 4, Side: 1, Return: k*1.25*1.125*0.875*k - 1, Bars: 2, Reason: engine.ExitSignal, EntryPrice: 80, ExitPrice: 98.4375},
			{Entry: 5, Exit: 5, Side: 1, Return: k*1.5*k - 1, Bars: 1, Reason: engine.ExitEnd, EntryPrice: 61.5234375, ExitPrice: 92.28515625}},
		pos: []int8{0, 1, 1, 0, 1, 0}, long: 3, flat: 2,
	})

	// (e) Slippage q = 1/32 and fee f = 1/16 together: k = (15/16)(31/32)
	// = 465/512 = 0.908203125, fill close, closes 64, 64, 80, 60, 45, 67.5
	// (r = 0, 1.25-1, 0.75-1, 0.75-1, 1.5-1), st = [0, 1, 1, -1, -1, 0].
	//   i=1  entry k, long 1.25                                 g = 1.25 ke
	//   i=2  long 0.75                                          g = 0.75
	//   i=3  reversal k^2, short over r = -0.25: 1.25           g = 1.25 ke^2
	//   i=4  short over r = +0.5: 0.5, then the exit at the end g = 0.5 ke
	// trades: long 1 -> 3, Bars 2, signal, 64 -> 60, R = ke*1.25*0.75*ke - 1;
	// short 3 -> 5, Bars 2, end, 60 -> 67.5, R = ke*1.25*0.5*ke - 1.
	ke := 0.908203125
	slip := fee
	slip.Slippage = 1.0 / 32
	closes := []float64{64, 64, 80, 60, 45, 67.5}
	eb := make([]bar, len(closes))
	for i, c := range closes {
		eb[i] = bar{c, c, c, c}
	}
	cs = append(cs, execCase{
		name: "e: slippage and fee, k = (1-f)(1-q), on entry, reversal and exit", bars: eb, p: slip, first: 1,
		st: []int8{0, 1, 1, -1, -1, 0},
		g:  []float64{1, 1.25 * ke, 0.75, 1.25 * ke * ke, 0.5 * ke},
		trades: []engine.Trade{
			{Entry: 1, Exit: 3, Side: 1, Return: ke*1.25*0.75*ke - 1, Bars: 2, Reason: engine.ExitSignal, EntryPrice: 64, ExitPrice: 60},
			{Entry: 3, Exit: 5, Side: -1, Return: ke*1.25*0.5*ke - 1, Bars: 2, Reason: engine.ExitEnd, EntryPrice: 60, ExitPrice: 67.5}},
		pos: []int8{0, 1, 1, -1, -1, 0}, long: 2, short: 2, flat: 1,
	})

	// (f) After a stop the position stays 0 until the state changes, then
	// follows it. Fill close, s = 1/8, st = [0, 1, 1, 1, -1, -1, -1, 0].
	//   i=1  long at 64 (stop 56); bar 2's low 52 reaches 56:
	//        k * 0.875 * k                                      g = 0.875 k^2
	//   i=2, i=3  st still +1 (the signal that opened the stopped trade):
	//        not re-entered, flat                               g = 1, 1
	//   i=4  st[4] = -1 != st[3]: short at close 4 = 64 (stop 72); bar 5
	//        (h 68 < 72), r = 48/64 - 1: k * 1.25                g = 1.25 k
	//   i=5  bar 6 (h 60), r = 60/48 - 1: 0.75                   g = 0.75
	//   i=6  bar 7 (h 60), r = 45/60 - 1: 1.25, exit at the end k g = 1.25 k
	// trades: 1 -> 2, Bars 1, stop, 64 -> 56, R = 0.875 k^2 - 1;
	// short 4 -> 7, Bars 3, end, 64 -> 45, R = k * 1.25 * 0.75 * 1.25 * k - 1.
	cs = append(cs, execCase{
		name: "f: after a stop, flat until the state changes", p: fee, first: 1, stops: engine.Stops{Loss: 0.125},
		bars: []bar{{64, 64, 64, 64}, {64, 64, 64, 64}, {64, 64, 52, 60}, {60, 60, 48, 48}, {48, 64, 48, 64}, {64, 68, 48, 48},
			{48, 60, 48, 60}, {60, 60, 45, 45}},
		st: []int8{0, 1, 1, 1, -1, -1, -1, 0},
		g:  []float64{1, 0.875 * k * k, 1, 1, 1.25 * k, 0.75, 1.25 * k},
		trades: []engine.Trade{
			{Entry: 1, Exit: 2, Side: 1, Return: 0.875*k*k - 1, Bars: 1, Reason: engine.ExitStop, EntryPrice: 64, ExitPrice: 56},
			{Entry: 4, Exit: 7, Side: -1, Return: k*1.25*0.75*1.25*k - 1, Bars: 3, Reason: engine.ExitEnd, EntryPrice: 64, ExitPrice: 45}},
		pos: []int8{0, 1, 0, 0, -1, -1, -1, 0}, long: 1, short: 3, flat: 3,
	})

	// (g) The short side mirrors, fill next-open, s = 1/8, t = 1/4,
	// u = 1/8, st = [0, -1, -1, 0, -1, -1, 0, -1, -1, -1].
	//   i=1  short at open 2 = 64: stop 72, tp 48, trail 72; bar 2 (h 68,
	//        l 60): no hit; k * (1 - (60/64 - 1))                g = 1.0625 k
	//        trough -> 60
	//   i=2  bar 3: trail 60 * 9/8 = 67.5 < stop 72: the trail; open 60
	//        (no gap); h 70 reaches 67.5 and l 44 reaches tp 48: the trail
	//        first (conservative), at 67.5: (1 - 0) * (1 - (67.5/60 - 1)) * k
	//                                                            g = 0.875 k
	//   i=3  st 0 (the gate opens), flat                         g = 1
	//   i=4  short at open 5 = 64, bar 5 all 64: no hit, trough 64 k * 1
	//                                                            g = k
	//   i=5  bar 6 opens at 80: beyond stop 72 and trail 72 (a tie: the
	//        stop's name): exit at the open, (1 - (80/64 - 1)) * k  g = 0.75 k
	//   i=6  st 0, flat                                          g = 1
	//   i=7  short at open 8 = 80: stop 90, tp 60, trail 90; bar 8 (h 84,
	//        l 60) reaches tp only: k * (1 - (60/80 - 1)) * k      g = 1.25 k^2
	//   i=8  gated (st -1 unchanged): flat                       g = 1
	// trades: 2 -> 3 trail 64 -> 67.5, Bars 2, R = k*1.0625*0.875*k - 1;
	// 5 -> 6 stop 64 -> 80 (bar 6 held flat after its open), Bars 1,
	// R = k*0.75*k - 1; 8 -> 8 take-profit 80 -> 60, Bars 1, R = 1.25 k^2 - 1.
	cs = append(cs, execCase{
		name: "g: short stops mirror, fill next-open", p: nextOpen, first: 1, stops: engine.Stops{Loss: 0.125, Take: 0.25, Trail: 0.125},
		bars: []bar{{64, 64, 64, 64}, {64, 64, 64, 64}, {64, 68, 60, 60}, {60, 70, 44, 50}, {60, 60, 60, 64}, {64, 64, 64, 64},
			{80, 80, 80, 80}, {80, 80, 80, 80}, {80, 84, 60, 70}, {70, 70, 70, 70}},
		st: []int8{0, -1, -1, 0, -1, -1, 0, -1, -1, -1},
		g:  []float64{1, 1.0625 * k, 0.875 * k, 1, k, 0.75 * k, 1, 1.25 * k * k, 1},
		trades: []engine.Trade{
			{Entry: 2, Exit: 3, Side: -1, Return: k*1.0625*0.875*k - 1, Bars: 2, Reason: engine.ExitTrail, EntryPrice: 64, ExitPrice: 67.5},
			{Entry: 5, Exit: 6, Side: -1, Return: k*0.75*k - 1, Bars: 1, Reason: engine.ExitStop, EntryPrice: 64, ExitPrice: 80},
			{Entry: 8, Exit: 8, Side: -1, Return: 1.25*k*k - 1, Bars: 1, Reason: engine.ExitTakeProfit, EntryPrice: 80, ExitPrice: 60}},
		pos: []int8{0, -1, -1, 0, -1, 0, 0, -1, 0, 0}, short: 4, flat: 5,
	})

	// (h) The risk-free rate: case (e)'s bars and trades with an annual
	// rf = 0.0625 over bpy = 12 bars a year: rf_bar = 1.0625^(1/12) - 1.
	// Only sharpe ((mean - rf_bar)/std * sqrt(bpy)) and sortino (over
	// min(rs - rf_bar, 0)) move; handExecMetrics applies both.
	rf := cs[len(cs)-3]
	rf.name = "h: risk-free rate in sharpe and sortino"
	rf.p.RiskFree = 0.0625
	cs = append(cs, rf)
	return cs
}

// handExecMetrics is every metric of SPEC "Metrics per combo" and Part 2
// "New metrics" from a case's hand growth factors g (rs = g - 1) and trades,
// by the textbook definitions, one at a time, in float64.
func handExecMetrics(c execCase) (engine.Metrics, []float64) {
	m := len(c.g)
	rs := make([]float64, m)
	E := make([]float64, m+1)
	E[0] = 1
	for i, g := range c.g {
		rs[i] = g - 1
		E[i+1] = E[i] * g
	}
	bpy := c.p.BarsPerYear
	rfBar := 0.0
	if c.p.RiskFree != 0 {
		rfBar = math.Pow(1+c.p.RiskFree, 1/bpy) - 1
	}
	var w engine.Metrics
	w.TotalReturn = E[m] - 1
	w.CAGR = math.Pow(E[m], bpy/float64(m)) - 1
	mean, vr, dn, gains, losses := 0.0, 0.0, 0.0, 0.0, 0.0
	for _, v := range rs {
		mean += v / float64(m)
	}
	for _, v := range rs {
		vr += (v - mean) * (v - mean) / float64(m)
		d := min(v-rfBar, 0)
		dn += d * d / float64(m)
		gains += max(v, 0)
		losses += max(-v, 0)
	}
	if vr > 0 {
		w.Sharpe = (mean - rfBar) / math.Sqrt(vr) * math.Sqrt(bpy)
	}
	switch {
	case dn > 0:
		w.Sortino = (mean - rfBar) / math.Sqrt(dn) * math.Sqrt(bpy)
	case mean-rfBar > 0:
		w.Sortino = math.Inf(1)
	}
	peak, run := 1.0, 0
	for _, e := range E {
		if e > peak {
			peak = e
		}
		w.MaxDrawdown = max(w.MaxDrawdown, 1-e/peak)
		if e < peak {
			run++
			w.MaxDrawdownBars = max(w.MaxDrawdownBars, float64(run))
		} else {
			run = 0
		}
	}
	if w.MaxDrawdown > 0 {
		w.Calmar = w.CAGR / w.MaxDrawdown
	}
	sorted := slices.Clone(rs)
	slices.Sort(sorted)
	w.VaR95 = sorted[int(math.Floor(0.05*float64(m-1)))]
	cs, cn := 0.0, 0
	for _, v := range rs {
		if v <= w.VaR95 {
			cs += v
			cn++
		}
	}
	w.CVaR95 = cs / float64(cn)
	switch {
	case losses > 0:
		w.Omega = gains / losses
	case gains > 0:
		w.Omega = math.Inf(1)
	}
	w.LongBars, w.ShortBars, w.FlatBars = c.long, c.short, c.flat
	w.TotalTrades = len(c.trades)
	// The trade metrics: R > 0 a win, R < 0 a loss.
	var win, loss, sum float64
	var nw, nl int
	for i, t := range c.trades {
		sum += t.Return
		if t.Return > 0 {
			win += t.Return
			nw++
		} else if t.Return < 0 {
			loss += t.Return
			nl++
		}
		if i == 0 || t.Return > w.BestTrade {
			w.BestTrade = t.Return
		}
		if i == 0 || t.Return < w.WorstTrade {
			w.WorstTrade = t.Return
		}
	}
	switch {
	case nl > 0:
		w.ProfitFactor = win / -loss
	case nw > 0:
		w.ProfitFactor = math.Inf(1)
	}
	if n := len(c.trades); n > 0 {
		w.WinRate = float64(nw) / float64(n)
		w.Expectancy = sum / float64(n)
		w.AvgTradeBars = float64(c.long+c.short) / float64(n)
		sd := 0.0
		for _, t := range c.trades {
			sd += (t.Return - w.Expectancy) * (t.Return - w.Expectancy) / float64(n)
		}
		if sd = math.Sqrt(sd); n >= 2 && sd > 0 {
			w.SQN = math.Sqrt(float64(n)) * w.Expectancy / sd
		}
	}
	if nw > 0 {
		w.AvgWin = win / float64(nw)
	}
	if nl > 0 {
		w.AvgLoss = loss / float64(nl)
	}
	w.Exposure = float64(c.long+c.short) / float64(m)
	return w, E
}

// TestExecHand runs execCases: the metrics (all 24), the trace's
// positions, equity and returns, and every trade's entry and exit bars,
// side, bars held, exit reason, fill prices and return.
func TestExecHand(t *testing.T) {
	for _, c := range execCases() {
		t.Run(c.name, func(t *testing.T) {
			n := len(c.bars)
			if len(c.st) != n || len(c.g) != n-1 || len(c.pos) != n || c.long+c.short+c.flat != n-1 {
				t.Fatalf("malformed case: n=%d st=%d g=%d pos=%d bars %d+%d+%d", n, len(c.st), len(c.g), len(c.pos), c.long, c.short, c.flat)
			}
			runExecHand[float64](t, c, 1e-12)
			runExecHand[float32](t, c, 1e-5)
		})
	}
}

func runExecHand[F engine.Float](t *testing.T, c execCase, rel float64) {
	t.Helper()
	bars := ohlcBars(c.bars)
	label := precName[F]()
	if len(bars.Open) != bars.Len() {
		t.Fatalf("%d bars, %d opens: the hand cases need opens", bars.Len(), len(bars.Open))
	}
	x := reference.NewExec[F](bars).WithStops(c.stops)
	r := kernels.BarReturns[F](bars)
	m, tr := reference.BacktestPositionsTraceX(c.st, r, c.first, c.p, x)
	var sc reference.Scratch[F]
	if m2 := reference.BacktestPositionsX(c.st, r, c.first, c.p, x, &sc, nil, 0); !sameMetrics(m, m2) {
		t.Errorf("%s: BacktestPositionsX %+v differs from the trace's %+v", label, m2, m)
	}
	want, E := handExecMetrics(c)
	conformance.NearMetrics(t, label, m, want, rel, 1e-15)
	if !slices.Equal(tr.Pos, c.pos) {
		t.Errorf("%s: Pos = %v, want %v", label, tr.Pos, c.pos)
	}
	for i := range E {
		ret := 0.0
		if i > 0 {
			ret = c.g[i-1] - 1
		}
		if !conformance.Near(tr.Equity[i], E[i], rel, 0) || !conformance.Near(tr.Returns[i], ret, rel, rel) {
			t.Errorf("%s: bar %d: E %v r %v, want E %v r %v", label, i, tr.Equity[i], tr.Returns[i], E[i], ret)
		}
	}
	checkExecTrades(t, label, tr.Trades, c.trades, rel)
}

// checkExecTrades compares trades field by field: bars, side, reason and
// fill prices exactly (the prices are binary fractions, exact in F), the
// return to rel (absolute near 0: the error is relative to 1+R).
func checkExecTrades(t *testing.T, label string, got, want []engine.Trade, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d trades %+v, want %d %+v", label, len(got), got, len(want), want)
		return
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Entry != w.Entry || g.Exit != w.Exit || g.Side != w.Side || g.Bars != w.Bars || g.Reason != w.Reason ||
			g.EntryPrice != w.EntryPrice || g.ExitPrice != w.ExitPrice || !conformance.Near(g.Return, w.Return, rel, rel*(1+math.Abs(w.Return))) {
			t.Errorf("%s: trade %d = %s, want %s", label, i, fmtTrade(g), fmtTrade(w))
		}
	}
}

func fmtTrade(t engine.Trade) string {
	return fmt.Sprintf("{%d->%d side %d bars %d %v %v->%v R %.17g}", t.Entry, t.Exit, t.Side, t.Bars, t.Reason, t.EntryPrice, t.ExitPrice, t.Return)
}

// TestMaxDrawdownBarsTrailing: max_drawdown_bars counts bars with equity
// strictly below the running peak, a bar back at the peak ends a run, and
// a run still open at the last bar counts. Long throughout, no fee, closes
// 64, 128, 64, 128, 64, 32, 48: E = 1, 2 (peak), 1 (run 1), 2 (equal to the
// peak: the run ends), 1, 0.5, 0.75 (a trailing run of 3): 3 (counting
// equal bars as below would give 5); max_drawdown = 1 - 0.5/2 = 0.75. Both
// loops (the fast one and the execution options' one) and both precisions.
func TestMaxDrawdownBarsTrailing(t *testing.T) {
	closes := []float64{64, 128, 64, 128, 64, 32, 48}
	st := []int8{1, 1, 1, 1, 1, 1, 1}
	p := engine.Params{BarsPerYear: 6}
	bars := make([]bar, len(closes))
	for i, c := range closes {
		bars[i] = bar{c, c, c, c}
	}
	b := ohlcBars(bars)
	check := func(label string, m engine.Metrics) {
		if m.MaxDrawdownBars != 3 || m.MaxDrawdown != 0.75 || m.TotalTrades != 1 || m.LongBars != 6 {
			t.Errorf("%s: max_drawdown_bars %v, max_drawdown %v, %d trades, %d long bars; want 3, 0.75, 1, 6",
				label, m.MaxDrawdownBars, m.MaxDrawdown, m.TotalTrades, m.LongBars)
		}
	}
	var s64 reference.Scratch[float64]
	var s32 reference.Scratch[float32]
	r64, r32 := kernels.BarReturns[float64](b), kernels.BarReturns[float32](b)
	check("fp64 fast", reference.BacktestPositions(st, r64, 0, p, &s64))
	check("fp32 fast", reference.BacktestPositions(st, r32, 0, p, &s32))
	check("fp64 exec", reference.BacktestExecForced(st, r64, 0, p, reference.NewExec[float64](b)))
	check("fp32 exec", reference.BacktestExecForced(st, r32, 0, p, reference.NewExec[float32](b)))
}
