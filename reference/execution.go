package reference

import (
	"math"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// Exec is what SPEC Part 2's execution options read beyond the bar
// returns: one dataset's prices in F (len n each) and one combo's stops.
// Build the prices once per dataset and precision (NewExec) and set Stops
// per combo (WithStops: a copy, so workers share the prices).
//
// Gap[i] = open[i]/close[i-1] - 1 and Intra[i] = close[i]/open[i] - 1
// (Gap[0], Intra[0] unused) are the two halves of a bar's move that fill
// next-open splits it into, each one F division and one subtraction.
//
// Margin, when not nil (len n), receives for each stop check on bar j the
// distance of the price compared from its level (the open for a gap, the
// low or high otherwise), as a fraction of the close, at the index of the
// first held position the check can change (Trace.Pos): j, except a gap
// at the open under fill next-open, j-1 (the position from that open): the
// margin parity reads at a divergence that a stop caused (SPEC Part 2
// "Parity for families with memory"), when it is smaller than the value
// there: pass the family's margins (or +Inf) to have the smaller of the
// two. Bars without a check keep theirs.
type Exec[F Float] struct {
	Open, High, Low, Close []F
	Gap, Intra             []F
	Stops                  engine.Stops
	Margin                 []float64
}

// NewExec rounds b's prices to F for the execution options. Bars of closes
// only take the close for the open, high and low (fill next-open then
// moves nothing at the open: engine.Study.Validate refuses next-open on
// bars without opens, the one check of it).
func NewExec[F Float](b *engine.Bars) *Exec[F] {
	n := b.Len()
	x := &Exec[F]{Open: make([]F, n), High: make([]F, n), Low: make([]F, n), Close: make([]F, n), Gap: make([]F, n), Intra: make([]F, n)}
	for i := 0; i < n; i++ {
		c := F(b.Close[i])
		x.Close[i] = c
		x.Open[i], x.High[i], x.Low[i] = c, c, c
		if len(b.Open) == n {
			x.Open[i] = F(b.Open[i])
		}
		if len(b.High) == n && len(b.Low) == n {
			x.High[i], x.Low[i] = F(b.High[i]), F(b.Low[i])
		}
	}
	for i := 1; i < n; i++ {
		x.Gap[i] = x.Open[i]/x.Close[i-1] - 1
		x.Intra[i] = x.Close[i]/x.Open[i] - 1
	}
	return x
}

// WithStops is a copy of x with combo stops s (the prices shared).
func (x *Exec[F]) WithStops(s engine.Stops) *Exec[F] {
	c := *x
	c.Stops = s
	c.Margin = nil
	return &c
}

// plainExec reports whether x asks nothing of the loop beyond Part 1's
// fills at the close (the fast loop, backtest, then runs).
func plainExec[F Float](x *Exec[F], p engine.Params) bool {
	return x == nil || (p.Fill == engine.FillClose && !x.Stops.Any())
}

// BacktestX is Backtest with the execution options of x (nil: Part 1's
// fills at the close) and combo c's per-block statistics in bs when it is
// not nil.
func BacktestX[F Float](h, h3, r []F, first int, p engine.Params, x *Exec[F], sc *Scratch[F], bs *engine.BlockStats, c int) engine.Metrics {
	if plainExec(x, p) {
		return backtest(h3, h, r, first, p, sc, nil, bs, c)
	}
	return backtestExec(h3, h, r, first, p, x, sc, nil, bs, c)
}

// BacktestPositionsX is BacktestPositionsBlocks with the execution options
// of x (nil: Part 1's fills at the close).
func BacktestPositionsX[F Float](st []int8, r []F, first int, p engine.Params, x *Exec[F], sc *Scratch[F], bs *engine.BlockStats, c int) engine.Metrics {
	if plainExec(x, p) {
		return backtest(st, nil, r, first, p, sc, nil, bs, c)
	}
	return backtestExec(st, nil, r, first, p, x, sc, nil, bs, c)
}

// BacktestTraceX is BacktestTrace with the execution options of x, the
// trades' fill prices and exit reasons filled in (x nil: no prices).
func BacktestTraceX[F Float](h, h3, r []F, first int, p engine.Params, x *Exec[F]) (engine.Metrics, *engine.Trace) {
	return traceX(h3, h, r, first, p, x)
}

// BacktestPositionsTraceX is BacktestPositionsTrace with the execution
// options of x, as BacktestTraceX.
func BacktestPositionsTraceX[F Float](st []int8, r []F, first int, p engine.Params, x *Exec[F]) (engine.Metrics, *engine.Trace) {
	return traceX(st, nil, r, first, p, x)
}

func traceX[F Float, S signal](a, b []S, r []F, first int, p engine.Params, x *Exec[F]) (engine.Metrics, *engine.Trace) {
	if x == nil {
		return backtestTrace(a, b, r, first, p)
	}
	n := len(r)
	tr := &engine.Trace{Pos: make([]int8, n), Equity: make([]float64, n), Returns: make([]float64, n)}
	var sc Scratch[F]
	m := backtestExec(a, b, r, first, p, x, &sc, tr, nil, 0)
	return m, tr
}

// backtestExec is the backtest loop with SPEC Part 2's execution options
// (docs/SPEC.md "Execution options"): fills at the close or the next
// open, k = (1-f)(1-q) per unit of position change, and the combo's stops,
// checked on every bar a trade is held (fill close: from the bar after
// the entry; next-open: from the entry bar itself, after its open). With
// fill close and no stops it gives backtest's metrics bit for bit
// (TestExecPlainEqualsBacktest).
//
// Per bar j = i+1 (i the step, the close at which p[i] is decided):
//   - held is p[i-1], the position into the bar; st the family's state
//     at close i; after a stop, p is 0 until st changes (gated);
//   - fill close: g = k^|p[i]-held| * (1 + p[i]*r[j]), the trade entered
//     at close[i]; a stop hit on bar j ends the growth at its price X
//     (open[j] when the open is beyond a level: a gap; else the level the
//     low or high reaches): (1 + p*(X/close[i] - 1)) * k;
//   - fill next-open: g = (1 + held*Gap[j]) * k^|p[i]-held| * (1 +
//     p[i]*Intra[j]), the change at open[j]; a held trade whose level the
//     open is beyond exits there (g = (1 + held*Gap[j]) * k); a stop
//     during the bar ends the second factor at X: (1 + p*(X/open[j]-1)) * k;
//   - the trade still open after bar n-1 pays k at close[n-1] (exit end).
//
// A trade's return is R = k * (the product of its growth factors) * k - 1,
// as in Part 1; a bar is counted long or short by p[i] (the position
// from its fill), so a trade's bars sum to long_bars + short_bars.
func backtestExec[F Float, S signal](a, b []S, r []F, first int, p engine.Params, x *Exec[F], sc *Scratch[F], tr *engine.Trace, bs *engine.BlockStats, bc int) engine.Metrics {
	n := len(r)
	var m engine.Metrics
	if n < 2 {
		return m
	}
	if cap(sc.rs) < n-1 {
		sc.rs = make([]F, n-1)
	}
	rs := sc.rs[:n-1]
	keep := engine.Keep[F](p)
	keep2 := keep * keep
	rf := F(p.RiskFreePerBar())
	first = min(max(first, 0), n-1)
	longOnly := p.Mode == engine.LongOnly
	nextOpen := p.Fill == engine.FillNextOpen
	sl, tk, tu := F(x.Stops.Loss), F(x.Stops.Take), F(x.Stops.Trail)
	stops := x.Stops.Any()

	var (
		E, peak           = F(1), F(1)
		minRatio          = F(1)
		sum               F
		gains, losses     F
		st, held          int8 // the family's state at the last close; p[i-1]
		gated             bool
		trades, wins      int
		tp                F   // running product of the open trade, entry fee included
		entryP, best      F   // the open trade's fill price; its best price so far (trail)
		tbars             int // bars held by the open trade
		long, short, flat int
		tb                int
		acc               kernels.Accumulators[F]
		ddBars, top       int // the longest drawdown run so far; the last point not below the peak
	)
	fac := func(side int8, v F) F { // 1 + side*v, as the loop's (1 + rr) / (1 - rr)
		switch side {
		case 1:
			return 1 + v
		case -1:
			return 1 - v
		}
		return 1
	}
	fee := func(d int8) F {
		switch d {
		case 0:
			return 1
		case 2, -2:
			return keep2
		}
		return keep
	}
	closeTr := func(i, bar int, price F, why engine.Exit) { // the open trade ends at return index i
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
			t.Exit, t.Return, t.Bars, t.Reason, t.ExitPrice = bar, float64(R), tbars, why, float64(price)
		}
	}
	open := func(bar int, side int8, price F) {
		trades++
		tp = keep
		entryP, best, tbars = price, price, 0
		if tr != nil {
			tr.Trades = append(tr.Trades, engine.Trade{Entry: bar, Side: side, EntryPrice: float64(price)})
		}
	}
	// levels is the open trade's stop and trail levels (the worse, for the
	// side: what a long's price falls to first) and its take-profit.
	type level struct {
		at  F
		why engine.Exit
		on  bool
	}
	levels := func(side int8) (adverse, favour level) {
		if side == 1 {
			if sl > 0 {
				adverse = level{entryP * (1 - sl), engine.ExitStop, true}
			}
			if tu > 0 {
				if t := best * (1 - tu); !adverse.on || t > adverse.at {
					adverse = level{t, engine.ExitTrail, true}
				}
			}
			if tk > 0 {
				favour = level{entryP * (1 + tk), engine.ExitTakeProfit, true}
			}
			return
		}
		if sl > 0 {
			adverse = level{entryP * (1 + sl), engine.ExitStop, true}
		}
		if tu > 0 {
			if t := best * (1 + tu); !adverse.on || t < adverse.at {
				adverse = level{t, engine.ExitTrail, true}
			}
		}
		if tk > 0 {
			favour = level{entryP * (1 - tk), engine.ExitTakeProfit, true}
		}
		return
	}
	margin := func(j int, price, lv F) {
		if x.Margin != nil {
			d := math.Abs(float64(price)-float64(lv)) / float64(x.Close[j])
			if d < x.Margin[j] {
				x.Margin[j] = d
			}
		}
	}
	// gapHit is the level the open of bar j is beyond, if any. Its margin
	// goes to the first position it can change: p[j] under fill close
	// (the stop ends bar j), p[j-1] under next-open (p[j-1] is the
	// position from open[j], 0 after a gap exit there).
	gapShift := 0
	if nextOpen {
		gapShift = 1
	}
	gapHit := func(j int, side int8) (F, engine.Exit, bool) {
		adv, fav := levels(side)
		o := x.Open[j]
		if adv.on {
			margin(j-gapShift, o, adv.at)
			if (side == 1 && o <= adv.at) || (side == -1 && o >= adv.at) {
				return o, adv.why, true
			}
		}
		if fav.on {
			margin(j-gapShift, o, fav.at)
			if (side == 1 && o >= fav.at) || (side == -1 && o <= fav.at) {
				return o, fav.why, true
			}
		}
		return 0, 0, false
	}
	// barHit is the level the bar's low or high reaches, the adverse one
	// first (SPEC: the stop or the trail before the take-profit).
	barHit := func(j int, side int8) (F, engine.Exit, bool) {
		adv, fav := levels(side)
		lo, hi := x.Low[j], x.High[j]
		if side == -1 {
			lo, hi = hi, lo // the adverse extreme of a short is the high
		}
		if adv.on {
			margin(j, lo, adv.at)
			if (side == 1 && lo <= adv.at) || (side == -1 && lo >= adv.at) {
				return adv.at, adv.why, true
			}
		}
		if fav.on {
			margin(j, hi, fav.at)
			if (side == 1 && hi >= fav.at) || (side == -1 && hi <= fav.at) {
				return fav.at, fav.why, true
			}
		}
		return 0, 0, false
	}
	// openOrBarHit is gapHit, else barHit: fill close checks bar j's open
	// (a gap through a level exits at the open) before its low and high.
	openOrBarHit := func(j int, side int8) (F, engine.Exit, bool) {
		if X, why, hit := gapHit(j, side); hit {
			return X, why, hit
		}
		return barHit(j, side)
	}
	track := func(j int, side int8) { // the trade's best price after bar j
		if side == 1 {
			best = max(best, x.High[j])
		} else {
			best = min(best, x.Low[j])
		}
	}

	// hold is the held position pos's factor over bar j from its fill at
	// price from (close[i], or open[j] under next-open), whose move to
	// close[j] is mv (r[j] or Intra[j]): a stop the check hit finds ends it
	// at the stop's price X, 1 + pos*(X/from - 1), and closes the trade
	// (the caller pays k); else 1 + pos*mv, and the trade's best price
	// takes bar j's.
	hold := func(i, j int, pos int8, from, mv F, hit func(int, int8) (F, engine.Exit, bool)) (F, bool) {
		tbars++
		if X, why, ok := stopsOn(stops, j, pos, hit); ok {
			f := fac(pos, X/from-1)
			tp *= f
			closeTr(i, j, X, why)
			return f, true
		}
		f := fac(pos, mv)
		tp *= f
		track(j, pos)
		return f, false
	}

	flat = first
	top = first // E[0..first] = 1: the warm-up's points are at the peak
	for i := 0; i < first; i++ {
		rs[i] = 0
	}
	if tr != nil {
		for i := 0; i <= first; i++ {
			tr.Equity[i] = 1
		}
	}
	for i := first; i < n-1; i++ {
		j := i + 1
		s := state(a, b, i, st, longOnly)
		if gated && s != st {
			gated = false
		}
		st = s
		pos := s
		if gated {
			pos = 0
		}
		d := pos - held
		var g F
		after := pos // the position after bar j (0 when a stop ended it)
		if !nextOpen {
			g = fee(d)
			if d != 0 {
				if held != 0 {
					closeTr(i, i, x.Close[i], engine.ExitSignal)
				}
				if pos != 0 {
					open(i, pos, x.Close[i])
				}
			}
			if pos != 0 {
				f, stopped := hold(i, j, pos, x.Close[i], r[j], openOrBarHit)
				g *= f
				if stopped {
					g *= keep
					after, gated = 0, true
				}
			} else {
				g *= fac(0, r[j])
			}
		} else {
			f1 := fac(held, x.Gap[j])
			g = f1
			if held != 0 {
				tp *= f1
				if d == 0 && stops {
					if X, why, hit := gapHit(j, held); hit {
						g *= keep
						closeTr(i, j, X, why)
						pos, after, gated, d = 0, 0, true, 0
						held = 0
					}
				}
			}
			if d != 0 {
				g *= fee(d)
				if held != 0 {
					closeTr(i, j, x.Open[j], engine.ExitSignal)
				}
				if pos != 0 {
					open(j, pos, x.Open[j])
				}
			}
			if pos != 0 {
				f, stopped := hold(i, j, pos, x.Open[j], x.Intra[j], barHit)
				g *= f
				if stopped {
					g *= keep
					after, gated = 0, true
				}
			}
		}
		switch pos {
		case 1:
			long++
		case -1:
			short++
		default:
			flat++
		}
		if i == n-2 && after != 0 {
			g *= keep
			closeTr(i, n-1, x.Close[n-1], engine.ExitEnd)
		}
		held = after
		E *= g
		if tr != nil {
			tr.Pos[i] = pos
			tr.Equity[j] = float64(E)
			tr.Returns[j] = float64(g - 1)
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
		gains += max(v, 0)
		losses -= min(v, 0)
	}

	acc.DDBars = max(ddBars, n-1-top) // a run still open at the last point counts
	acc.E, acc.MinRatio, acc.Sum, acc.Gains, acc.Losses = E, minRatio, sum, gains, losses
	acc.Trades, acc.Wins, acc.Long, acc.Short, acc.Flat = trades, wins, long, short, flat
	return finishLoop(&acc, rs, rf, n, p, sc, bs, bc)
}

// stopsOn is hit(j, side) when the combo has stops, else no hit.
func stopsOn[F Float](stops bool, j int, side int8, hit func(int, int8) (F, engine.Exit, bool)) (F, engine.Exit, bool) {
	if !stops {
		return 0, 0, false
	}
	return hit(j, side)
}
