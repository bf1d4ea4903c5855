// Package shard cuts the (dataset x combo) work of a study or a suite into
// slices of equal bar-steps (PlanShards), runs one slice through
// engine.RunStudy on rectangles of the grid (RunSlice, engine.Study.Rect),
// keeps it in a Parquet shard file (WriteShard, ReadShard), and joins a
// study's shards into the report a single run gives, bit for bit
// (CheckShards, MergeParts). Its errors are typed: ShardSpecError,
// ShardCoverageError, ShardMismatchError, ShardFileError, ShardDataError.
//
// It imports engine and engine/output (the combo columns of its file);
// neither imports it.
package shard
