package reference

import (
	"math"
	"unsafe"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// Scratch is per-worker memory reused across combos: the strategy returns
// of one combo (n-1 values) for the second-pass statistics and VaR selection.
type Scratch[F Float] struct{ rs, band, sample []F }

// Backtest runs one combo over n bars in F and returns its metrics
// (SPEC "Signal, position, fills", "Trades", "Metrics per combo").
//
// h and h3 (len n) are the combo's indicator series, NaN before their
// warm-up; r (len n) holds the bar returns with r[0] unused. first is the
// first bar where both are defined (max(W, W3)); pos is 0 before it.
//
// Conventions where SPEC leaves a choice (docs/SPEC.md "Conventions"):
//   - a bar's growth factor is g = (1-f)^|pos[i]-pos[i-1]| * (1 + pos[i]*r[i+1]),
//     each factor rounded in F, and E[i+1] = E[i]*g, rs[i+1] = g - 1;
//   - the exit fee of an open position multiplies the last bar's g, so the
//     final equity point E_final enters the drawdown and the last return;
//   - pos[n-1] is never held, so a signal on the last bar opens no trade.
//
// Sums run sequentially in F; the mean is removed in a second pass before
// the variance (two-pass, population). The finishing formulas (sqrt, pow,
// ratios) are evaluated in float64 from the F accumulators and rounded to F.
func Backtest[F Float](h, h3, r []F, first int, p engine.Params, sc *Scratch[F]) engine.Metrics {
	return backtest(h3, h, r, first, p, sc, nil, nil, 0)
}

// BacktestBlocks is Backtest that also fills combo c of bs (when bs is not
// nil) with the combo's per-block statistics over bs.Bounds
// (engine.BlockStats): from the same loop's strategy returns, widened to
// float64 and summed in bar order, and its trades counted in the block of
// their exit (the return index of the bar that closes them; the last
// bar's exit fee closes an open trade at index n-2).
func BacktestBlocks[F Float](h, h3, r []F, first int, p engine.Params, sc *Scratch[F], bs *engine.BlockStats, c int) engine.Metrics {
	return backtest(h3, h, r, first, p, sc, nil, bs, c)
}

// BacktestTrace is Backtest with the bar-by-bar record: the same loop, so
// the trace always agrees with the metrics.
func BacktestTrace[F Float](h, h3, r []F, first int, p engine.Params) (engine.Metrics, *engine.Trace) {
	return backtestTrace(h3, h, r, first, p)
}

// BacktestPositions runs the Part 1 equity, trades and metrics over a
// family's states st (len n, the state after each bar's close BEFORE the
// mode: +1, -1, 0; long-only maps -1 to 0 here), r the bar returns (len n,
// r[0] unused), first the family's first valid bar (st is 0 before it;
// the bars before first are held flat whatever st holds there), in F: the
// same loop, fees, metrics and conventions as Backtest. Fed the states of
// Positions(h, h3, first, engine.LongShort, 0, st) it returns Backtest's
// metrics bit for bit.
func BacktestPositions[F Float](st []int8, r []F, first int, p engine.Params, sc *Scratch[F]) engine.Metrics {
	return backtest(st, nil, r, first, p, sc, nil, nil, 0)
}

// BacktestPositionsBlocks is BacktestPositions with combo c's per-block
// statistics written to bs when it is not nil (as BacktestBlocks).
func BacktestPositionsBlocks[F Float](st []int8, r []F, first int, p engine.Params, sc *Scratch[F], bs *engine.BlockStats, c int) engine.Metrics {
	return backtest(st, nil, r, first, p, sc, nil, bs, c)
}

// BacktestPositionsTrace is BacktestPositions with the bar-by-bar record
// (engine.Trace), as BacktestTrace.
func BacktestPositionsTrace[F Float](st []int8, r []F, first int, p engine.Params) (engine.Metrics, *engine.Trace) {
	return backtestTrace(st, nil, r, first, p)
}

func backtestTrace[F Float, S signal](a, b []S, r []F, first int, p engine.Params) (engine.Metrics, *engine.Trace) {
	n := len(r)
	tr := &engine.Trace{Pos: make([]int8, n), Equity: make([]float64, n), Returns: make([]float64, n)}
	var sc Scratch[F]
	m := backtest(a, b, r, first, p, &sc, tr, nil, 0)
	return m, tr
}

// signal is the element type of the series the backtest loop reads its
// states from: the hull series' F (a = h3 against b = h) or a family's
// states (int8: a = st, b nil). backtest takes it as a type parameter:
// float64, float32 and int8 are distinct GC shapes, so each gets its own
// stenciled copy of the one loop, in which the size test in state folds
// to a constant and the other branch is compiled away: hull's copy is the
// machine code of the loop before the positions path was added (the same
// instructions up to register names, go tool objdump). A signal as a
// method on a type-parameter value (hull and positions structs) was
// measured first: the method is a dictionary call per bar, not inlined,
// and the hull backtest ran twice as slow.
type signal interface{ Float | int8 }

// state is the held state after bar i's close, the mode applied
// (longOnly: -1 becomes 0), given the state after bar i-1 (prev). For the
// hull family (a = h3, b = h, SPEC "Signal, position, fills"): +1 when
// h3 > h, -1 when h3 < h, else (equal or NaN) prev. For a family's states
// (S = int8, a = st, b unused): st[i].
func state[S signal](a, b []S, i int, prev int8, longOnly bool) int8 {
	pos := prev
	if unsafe.Sizeof(a[0]) == 1 {
		pos = int8(a[i])
		if pos < 0 && longOnly {
			pos = 0
		}
		return pos
	}
	if x, y := a[i], b[i]; x > y {
		pos = 1
	} else if x < y {
		pos = -1
		if longOnly {
			pos = 0
		}
	}
	return pos
}

// backtest is the one loop of Backtest, BacktestBlocks, BacktestTrace and
// the positions variants; a and b are the signal (state).
func backtest[F Float, S signal](a, b []S, r []F, first int, p engine.Params, sc *Scratch[F], tr *engine.Trace, bs *engine.BlockStats, bc int) engine.Metrics {
	n := len(r)
	var m engine.Metrics
	if n < 2 {
		return m
	}
	if cap(sc.rs) < n-1 {
		sc.rs = make([]F, n-1)
	}
	rs := sc.rs[:n-1]
	keep := engine.Keep[F](p) // k = (1-f)(1-q)
	keep2 := keep * keep      // k^2
	rf := F(p.RiskFreePerBar())
	first = min(max(first, 0), n-1)
	longOnly := p.Mode == engine.LongOnly

	var (
		E, peak           = F(1), F(1)
		minRatio          = F(1) // min over bars of E[i]/peak_i
		sum               F      // sum rs
		gains, losses     F      // sum max(rs,0), sum max(-rs,0)
		prev              int8   // pos[i-1]
		trades, wins      int
		tp                F // running product of the open trade, entry fee included
		long, short, flat int
		tb                int // the block of the last trade closed (closeTrade)
		acc               kernels.Accumulators[F]
		ddBars, top       int // the longest drawdown run so far; the last point not below the peak
	)
	flat = first // bars 0..first-1 are held flat
	top = first  // E[0..first] = 1: the warm-up's points are at the peak
	for i := 0; i < first; i++ {
		rs[i] = 0
	}
	if tr != nil {
		for i := 0; i <= first; i++ {
			tr.Equity[i] = 1
		}
	}
	for i := first; i < n-1; i++ {
		pos := state(a, b, i, prev, longOnly)
		g := F(1)
		if pos != prev {
			d := pos - prev
			if d == 2 || d == -2 {
				g = keep2
			} else {
				g = keep
			}
			if prev != 0 {
				R := F(tp*keep) - 1
				won := R > 0
				if won {
					wins++
				}
				acc.AddTrade(R, trades)
				if bs != nil {
					closeTrade(bs, bc, i, won, &tb)
				}
				if tr != nil {
					t := &tr.Trades[len(tr.Trades)-1]
					t.Exit, t.Return, t.Bars = i, float64(R), i-t.Entry
				}
			}
			if pos != 0 {
				trades++
				tp = keep
				if tr != nil {
					tr.Trades = append(tr.Trades, engine.Trade{Entry: i, Side: pos})
				}
			}
		}
		rr := r[i+1]
		switch pos {
		case 1:
			g *= 1 + rr
			tp *= 1 + rr
			long++
		case -1:
			g *= 1 - rr
			tp *= 1 - rr
			short++
		default:
			flat++
		}
		if i == n-2 && pos != 0 {
			g *= keep // exit fee at the last bar
			R := F(tp*keep) - 1
			won := R > 0
			if won {
				wins++
			}
			acc.AddTrade(R, trades)
			if bs != nil {
				closeTrade(bs, bc, i, won, &tb)
			}
			if tr != nil {
				t := &tr.Trades[len(tr.Trades)-1]
				t.Exit, t.Return, t.Bars, t.Reason = n-1, float64(R), n-1-t.Entry, engine.ExitEnd
			}
		}
		prev = pos
		E *= g
		if tr != nil {
			tr.Pos[i] = pos
			tr.Equity[i+1] = float64(E)
			tr.Returns[i+1] = float64(g - 1)
		}
		// A point at or above the peak ends a drawdown run: the points
		// since the last such point (top) were strictly below it. (E == peak
		// leaves minRatio alone, as E/peak = 1 would.)
		if E >= peak {
			peak = E
			ddBars = max(ddBars, i-top)
			top = i + 1
		} else if q := E / peak; q < minRatio {
			minRatio = q
		}
		v := g - 1
		rs[i] = v
		sum += v
		lo := min(v, 0) // branchless: the sign of a return is a coin flip
		gains += max(v, 0)
		losses -= lo
	}

	acc.DDBars = max(ddBars, n-1-top) // a run still open at the last point counts
	acc.E, acc.MinRatio, acc.Sum, acc.Gains, acc.Losses = E, minRatio, sum, gains, losses
	acc.Trades, acc.Wins, acc.Long, acc.Short, acc.Flat = trades, wins, long, short, flat
	return finishLoop(&acc, rs, rf, n, p, sc, bs, bc)
}

// finishLoop ends both backtest loops (backtest, backtestExec) from the
// strategy returns rs (len n-1) and the first pass's accumulators in acc:
// the second pass over rs (squared deviations from the mean, and
// Sortino's downside of rs - rf over every bar, the warm-up's zeros
// included, each summed in bar order; here and not in the bar loop to
// keep that loop's registers free: measured, BenchmarkBacktest), the
// per-block statistics of combo bc when bs is set, VaR and CVaR
// (tailSelect, which reorders rs), and kernels.Finish.
func finishLoop[F Float](acc *kernels.Accumulators[F], rs []F, rf F, n int, p engine.Params, sc *Scratch[F], bs *engine.BlockStats, bc int) engine.Metrics {
	mean := acc.Sum / F(n-1)
	var ssd, neg2 F
	for _, v := range rs {
		d := v - mean
		ssd += F(d * d)
		dn := min(v-rf, 0)
		neg2 += F(dn * dn)
	}
	acc.SSD, acc.Neg2 = ssd, neg2
	if bs != nil {
		blockSums(bs, bc, rs)
	}
	k := int(math.Floor(0.05 * float64(len(rs)-1)))
	acc.VaR, acc.CVaRSum, acc.CVaRCount = tailSelect(rs, k, sc)
	return kernels.Finish(*acc, n, p)
}

// closeTrade counts a trade closed at return index i (won or not) in its
// block of combo c of bs. *b is the block of the previous trade closed
// (trades close in bar order): it only moves forward.
func closeTrade(bs *engine.BlockStats, c, i int, won bool, b *int) {
	for *b < bs.Blocks-1 && bs.Bounds[*b+1] <= i {
		*b++
	}
	k := c*bs.Blocks + *b
	bs.Trades[k]++
	if won {
		bs.Wins[k]++
	}
}

// blockSums fills combo c of bs from its strategy returns rs (len n-1), in
// float64, block by block in bar order: counts, sum, sum of squares, of
// squared losses, and over all of rs the third and fourth powers; the
// block's log growth from the running product of 1+rs, renormalised every
// 64 returns from the block's start (math.Frexp, exact), one log at the
// end (engine.LogGrowth): the CUDA kernel computes the same product and the
// host the same log, so both give the same bits. Products are rounded one
// by one (explicit conversions: no fused multiply-add). (Folding backtest's
// pass of squared deviations into this loop was measured slower.)
func blockSums[F Float](bs *engine.BlockStats, c int, rs []F) {
	var s3, s4 float64
	for b := 0; b < bs.Blocks; b++ {
		lo, hi := bs.Bounds[b], min(bs.Bounds[b+1], len(rs))
		var sum, sq, down float64
		prod, ex := 1.0, 0
		for k := lo; k < hi; k++ {
			v := float64(rs[k])
			v2 := float64(v * v)
			sum += v
			sq += v2
			// down += v2 when v < 0, without a branch (the sign of a
			// return is a coin flip): v2 masked by v's sign bit. The same
			// value: -0 adds +0, and rs holds no NaN (finite positive
			// prices).
			down += math.Float64frombits(math.Float64bits(v2) & -(math.Float64bits(v) >> 63))
			s3 += float64(v2 * v)
			s4 += float64(v2 * v2)
			prod = float64(prod * (1 + v))
			if (k-lo)%64 == 63 {
				prod, ex = engine.Frexp(prod, ex)
			}
		}
		prod, ex = engine.Frexp(prod, ex)
		i := c*bs.Blocks + b
		bs.Bars[i] = int32(hi - lo)
		bs.Sum[i], bs.SumSq[i], bs.SumDown[i], bs.SumLog[i] = sum, sq, down, engine.LogGrowth(prod, ex)
	}
	bs.Sum3[c], bs.Sum4[c] = s3, s4
}

// tailSelect returns the k-th smallest element of a (0-based, exact) and
// the sum and count of the elements <= it, for VaR and CVaR. It reorders a.
//
// Floyd-Rivest style: a strided sample of 1024 elements brackets rank k
// between two pivots; one pass counts and sums what lies below the lower
// pivot and gathers the narrow band between them (branches that rarely
// fire, so they predict well, unlike a partition's coin flips); the exact
// selection then runs on the band alone. When the band misses rank k (not
// seen on real data) it falls back to a full kernels.Select.
func tailSelect[F Float](a []F, k int, sc *Scratch[F]) (v, sumLE F, cntLE int) {
	const sampleN, halfWidth = 1024, 48
	n := len(a)
	if n >= 8*sampleN {
		if cap(sc.sample) < sampleN {
			sc.sample = make([]F, sampleN)
		}
		s := sc.sample[:sampleN]
		stride := n / sampleN
		for i := range s {
			s[i] = a[i*stride]
		}
		r := int(float64(k) / float64(n) * sampleN)
		rlo, rhi := r-halfWidth, r+halfWidth
		lo, hi := F(math.Inf(-1)), F(math.Inf(1))
		if rlo > 0 {
			lo = kernels.Select(s, rlo)
		}
		if rhi < sampleN-1 {
			hi = kernels.Select(s, rhi)
		}
		band := sc.band[:0]
		var below F
		nBelow := 0
		for _, x := range a {
			if x < lo {
				below += x
				nBelow++
			} else if x <= hi {
				band = append(band, x)
			}
		}
		sc.band = band
		if j := k - nBelow; j >= 0 && j < len(band) {
			v = kernels.Select(band, j)
			sumLE, cntLE = below, nBelow
			for _, x := range band {
				if x <= v {
					sumLE += x
					cntLE++
				}
			}
			return v, sumLE, cntLE
		}
	}
	v = kernels.Select(a, k)
	for _, x := range a {
		if x <= v {
			sumLE += x
			cntLE++
		}
	}
	return v, sumLE, cntLE
}
