// Package bench is the method ladder of `sweepbench bench`: the same
// dataset, grid and parameters computed by successively better methods
// (Rung, a RungFunc each: RungNaive, the M0 baseline; engine.RungBackend, a
// sweep with one backend; RungDeviceIndicators, device indicators with CPU
// trades), each timed best of N after a warm-up and checked against M2
// (direct fp64, shared indicators, serial) by trade-count parity
// (RunLadder, RungResult, RungParity; SkipNotes for the rungs that could
// not run).
//
// It imports engine; engine never imports it.
package bench
