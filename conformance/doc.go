// Package conformance is the test suite every engine.Backend passes, and
// the fixtures backend tests share (the gonum blas/testblas pattern): a
// backend's test is one line,
//
//	func TestConformance(t *testing.T) {
//		conformance.TestBackend(t, reference.New(), conformance.Options{})
//	}
//
// and checks, on fresh random bars (the seed is logged when a check fails,
// SWEEPBENCH_SEED replays it), that the backend's metrics equal the
// reference arithmetic's in every precision it computes (Reference, by
// hand, per length), that its fp32 indicator series are the reference's bit
// for bit where it exports them (engine.IndicatorDevice), that Compute
// writes every slot of its output, stops on a cancelled context, and gives
// the same bits whatever the chunking (resume included), and that a study
// runs a precision the backend lacks on its fallback. One case has an HMA3
// range of step 1, so engine.Sweep gives the backend the distinct grid
// (each twin pair of HMA3 lengths once) and its results are checked under
// every combo of the grid asked for. Every strategy family of SPEC Part 2
// (cross, zscore, breakout, rsi) runs as a study on the backend too: no GPU
// backend has their kernels yet, so its lanes run on the fallback, the CPU
// reference, and the study's note says so; the metrics of every combo (by
// index) and the parity report's divergences are checked against those
// worked out from strategy.Evaluate and reference.BacktestPositions.
//
// The metric comparisons (SameMetrics, CompareMetrics, NearMetrics) and the
// series comparison (SameSeries) are the ones every package's tests use;
// synthetic bars come from sweepbench/engine/data/datatest.
//
// It is a test-support package: only _test.go files import it. It imports
// engine, engine/data/datatest, reference and strategy, never a GPU
// backend.
package conformance
