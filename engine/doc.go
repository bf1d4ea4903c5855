// Package engine is the vocabulary and the orchestration of a sweepbench
// study; it owns no arithmetic of its own.
//
// What it defines, and every other package speaks:
//   - a study's description, Spec (plain data, one set of defaults:
//     DefaultSpec), validated by Spec.Study into a Study, with typed
//     *FieldError values naming the bad field;
//   - the grid (Range, Grid, Combo), the sweep parameters (Params, Mode,
//     Source, Precision, Formulation), a combo's Metrics under SPEC's names;
//   - the Backend interface (Prepare a Job, a Kernel computes chunks of
//     combos) and its optional capabilities (MultiDevice, PrecisionSupport),
//     the Registry main fills;
//   - runs and reports: Sweep runs one precision on one backend, RunStudy
//     (the only code that runs a study, a new one or a resumed one) runs
//     every precision and the parity report (SPEC "Parity"), Report
//     formats them as table, JSON or CSV.
//
// The fp64/fp32 arithmetic (WMA, HMA, HMA3, the backtest, metrics, the
// indicator series) lives in package reference, which engine reaches for
// parity, inspection and estimates through an interface; engine imports no
// backend (reference, cuda, metal), no store (sessions) and no UI (tui):
// main wires them in. Its subpackage data loads and validates bars.
package engine
