// Package output writes an engine.Report for people and for other tools,
// as plain functions of the report: the table (WriteTable, and the parity
// summary WriteParitySummary other reports share), the per-combo files in
// every RowFormat (WriteRows: CSV, JSON lines, Parquet; WriteRowsFrom for
// rows read back a run at a time), a suite's rows (WriteSuiteRows), the
// per-block statistics (WriteBlocksParquet), and RowWriter, which writes
// the rows while a study runs and rewinds to relabel them at its end; and
// the JSON document (WriteJSON, streamed element by element, the same
// bytes as MarshalReport's one value indented; ParseMetricsJSON reads a
// combo object back).
//
// A strategy study's outputs carry its family ("strategy") and each
// combo's parameters under their SPEC names in hma and hma3's place (see
// params.go): the same values in the table, the JSON, the rows and the
// per-block file.
//
// It imports engine, its data and package strategy (its registry: which
// parameters are lengths); engine never imports it. The Parquet
// columns of a combo (ComboColumns) are shared with package shard's file.
package output
