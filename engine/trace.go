package engine

// Trace is the bar-by-bar record of one combo, for charts and trade lists.
// Pos and Equity have n elements: Pos[i] is the position decided at the
// close of bar i (Pos[n-1] = 0: never held); Equity[i] is E[i] with the
// final exit fee in Equity[n-1].
//
// Returns[i] (i >= 1) is the strategy's return over bar i, g - 1, a
// fraction per bar (Returns[0] = 0): Equity[i] = Equity[i-1]*(1+Returns[i])
// in the run's precision.
type Trace struct {
	Pos     []int8
	Equity  []float64
	Returns []float64
	Trades  []Trade
}

// Trade is one maximal run of a non-zero held position (SPEC "Trades";
// Part 2 "Execution options").
type Trade struct {
	Entry  int     // the bar of the entry fill: a, entered at its close, or a+1 at its open (fill next-open)
	Exit   int     // the bar of the exit fill: its close, its open (next-open), a stop's bar; n-1 for the last open trade
	Side   int8    // +1 long, -1 short
	Return float64 // R = k*prod(growth between the fills)*k - 1, fraction (k = (1-f)(1-q))
	Bars   int     // bars held: the bars counted in long_bars or short_bars for this trade
	Reason Exit    // why it ended: signal, stop, take-profit, trail, end
	// EntryPrice and ExitPrice are the fill prices, in the run's
	// precision widened to float64: the close, the next open or a stop's
	// level (0 where the loop was run without prices: Exec nil).
	EntryPrice, ExitPrice float64
}
