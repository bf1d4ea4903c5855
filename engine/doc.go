// Package engine is the vocabulary every side of sweepbench speaks and the
// run path under every front end: bars (engine/data), the grid and its
// combos, the parameters, the metrics and their SPEC names, runs and
// reports, the Backend interface and its Registry, the sweep
// orchestration (Sweep, RunStudy), the parity report and the bench ladder.
//
// It imports no backend and no UI. The CPU arithmetic it needs outside a
// backend (the indicator series parity compares, the workbench's one-combo
// trace, the estimate's calibration, the CPU rungs of the bench ladder) is
// an Arithmetic that package reference registers when imported: without
// one, those return ErrNoArithmetic.
package engine
