// Package engine is the vocabulary every side of sweepbench speaks and the
// one run path under every front end; it owns no arithmetic of its own.
//
// What it defines:
//   - a study's description, Spec (plain data, one set of defaults:
//     DefaultSpec), validated by Spec.Study (or Spec.Build, which loads the
//     data too) into a Study, with typed *FieldError values naming the bad
//     field; front ends phrase them (the CLI as flags, the TUI on the form);
//   - the grid (Range, Grid, Combo), the sweep parameters (Params, Mode,
//     Source, Precision, Formulation), a combo's Metrics under SPEC's names;
//   - the Backend interface (Prepare a Job, a Kernel computes chunks of
//     combos), its optional capabilities (MultiDevice, PrecisionSupport,
//     IndicatorDevice) and the Registry main fills;
//   - runs and reports: Sweep runs one precision on one backend (each pair
//     of HMA3 twins, lengths of one p = floor(L/2), computed once and
//     reported under both combos: Grid.Distinct, Grid.Aliases); RunStudy,
//     the only code that runs a study (a new one, or a resumed one whose
//     saved results come in as StudyOptions.Prior), runs every precision and
//     the parity report (SPEC "Parity"); a Report (its JSON shape is
//     package output's: output.WriteJSON, output.MarshalReport);
//     a run's results in bounded memory, Summary (top lists and heatmaps
//     of every metric, built from the streamed chunks: StudyOptions.Summary,
//     or Summariser over results read back); RungBackend, the bench
//     ladder's rung that sweeps with one backend;
//   - the parity figures over several parts or datasets (MergeParity,
//     OverallParity) and Report.Keep; Study.Rect, the study over one
//     rectangle of its grid, on which package shard runs its slices.
//
// Its sub-packages: data loads and validates bars; output writes a report
// (the table, the JSON document, the per-combo files CSV, JSON lines and
// Parquet, and RowWriter, which writes them while a study runs); shard cuts a study or
// suite into shards, runs one, keeps it in a shard file and merges them;
// robust runs the robustness checks of a study; suite runs one Spec over
// several datasets (Suite, the cross-dataset Aggregate, ExpandDatasets,
// SuiteID and SuiteRef); bench is the method ladder of `sweepbench bench`;
// preflight estimates a study's time and asks before a long or heavy one
// (the memory forecast and check it shares with RunStudy stay here:
// ForecastMemory, CheckMemory); memlimit, a leaf engine imports, reads the
// host's memory limits (/proc, cgroups, RLIMIT_AS: SystemMemoryLimit);
// text, another leaf, formats numbers, sizes and plurals for every message
// and table (FormatFloat, Bytes, Plural, Thousands, ErrWriter).
//
// It imports no backend (reference, cuda, metal), no store (sessions) and
// no UI (tui). The CPU arithmetic it needs outside a backend (the indicator
// series parity compares, the workbench's one-combo trace, the estimate's
// calibration, the CPU rungs of the bench ladder) is an Arithmetic that
// package reference registers when imported: without one, those return
// ErrNoArithmetic.
package engine
