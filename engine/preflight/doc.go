// Package preflight is what a front end checks and says before a study
// starts: EstimateStudy, the time a study will take on the CPU reference
// from a calibration of one combo per precision (Estimate), and
// PreflightStudy, which refuses what cannot fit in memory (the memory
// check RunStudy makes, engine.CheckMemory: *engine.MemoryError) and asks
// for a confirmation (*ConfirmError) of what would take longer than
// ConfirmTime or more than ConfirmMemoryFraction of the memory available,
// saying its estimate over ShowEstimateOver (Preflight, Rates,
// DefaultRates). The memory forecast and check stay in engine, whose run
// path checks them too; the limit is package memlimit's.
//
// It imports engine; engine never imports it.
package preflight
