// Package robust owns the statistics that ratify a sweep's selection rather
// than its arithmetic: from per-combo, per-block sufficient statistics
// (BlockStats, which a backend fills in the same pass as the sweep) it gives
// the decomposable metrics over any union of blocks (Moments, Metric,
// Objective), the probability of backtest overfitting by combinatorially
// symmetric cross-validation (PBO), the probabilistic and deflated Sharpe
// ratios (PSR, DeflatedSharpe), walk-forward analysis (WalkForward) and
// neighbourhood stability on the grid (Plateau).
//
// Every number is fp64 and every formula is the one docs/SPEC.md
// ("Robustness: decomposable metrics") and the cited papers give; the
// docstrings say which.
//
// Files: blockstats.go (the statistics a backend fills, their layout, the
// CPU builder FromReturns, unions of blocks), metrics.go (Moments, Metric,
// Objective and the ranking keys), pbo.go and pbo_kernel.go (CSCV and its
// tiled two-pass kernels), dsr.go, walkforward.go, stitched.go (the
// walk-forward's stitched out-of-sample equity curve), plateau.go,
// errors.go, study.go (Analyse and the Summary front ends show).
//
// It imports sweepbench/engine for the grid's vocabulary (Grid, Combo) and,
// for the stitched curve only, engine.InspectIndex (the registered CPU
// arithmetic, or a strategy family's own Trace, re-running a few chosen
// combos), and nothing from a backend (reference, cuda, metal), the store
// (sessions) or a UI (tui); no backend imports it either (a GPU's PBO
// passes are engine.PBODevice). A strategy grid's combos are
// its indices, named by engine.Grid.Label (Combo.Label); its plateau is
// over its N axes (Strategy.Coords, IndexOf). The run
// path (sessions.RunStudy) calls AnalyseStudy; the front ends only show
// the Summary. Errors are typed (*InputError wrapping ErrBlocks, ErrEmpty,
// ErrLength, ErrValue, ErrNoSelectable, ErrNotDecomposable), for a front
// end to phrase.
package robust
