package engine

// Trace is the bar-by-bar record of one combo, for charts and trade lists.
// Pos and Equity have n elements: Pos[i] is the position decided at the
// close of bar i (Pos[n-1] = 0: never held); Equity[i] is E[i] with the
// final exit fee in Equity[n-1].
type Trace struct {
	Pos    []int8
	Equity []float64
	Trades []Trade
}

// Trade is one maximal run of a non-zero held position (SPEC "Trades").
type Trade struct {
	Entry  int     // bar a: entered at its close
	Exit   int     // bar b: exited at its close (n-1 for the last open trade)
	Side   int8    // +1 long, -1 short
	Return float64 // R = (1-f)*prod(1+side*r)*(1-f) - 1, fraction
}
