package reference

import "sweepbench/engine"

// Internals the external tests (package reference_test) reach.

// TailSelect is tailSelect: VaR's selection with the sample-and-band pass.
func TailSelect[F Float](a []F, k int, sc *Scratch[F]) (v, sumLE F, cntLE int) {
	return tailSelect(a, k, sc)
}

// HasAVX2 reports whether the AVX2 paths (WMA blocks, the parity scan) run
// on this machine.
func HasAVX2() bool { return useAVX2 }

// SetAVX2 turns the AVX2 paths on or off (to compare the two paths)
// and returns the previous setting.
func SetAVX2(on bool) (was bool) {
	was, useAVX2 = useAVX2, on
	return was
}

// BacktestExecForced runs the execution options' loop even when x asks
// for nothing beyond Part 1 (to compare it with the fast loop).
func BacktestExecForced[F Float](st []int8, r []F, first int, p engine.Params, x *Exec[F]) engine.Metrics {
	var sc Scratch[F]
	return backtestExec(st, nil, r, first, p, x, &sc, nil, nil, 0)
}

// BacktestExecForcedTrace is BacktestExecForced with the trace.
func BacktestExecForcedTrace[F Float](st []int8, r []F, first int, p engine.Params, x *Exec[F]) (engine.Metrics, *engine.Trace) {
	n := len(r)
	tr := &engine.Trace{Pos: make([]int8, n), Equity: make([]float64, n), Returns: make([]float64, n)}
	var sc Scratch[F]
	return backtestExec(st, nil, r, first, p, x, &sc, tr, nil, 0), tr
}
