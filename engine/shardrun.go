package engine

import "time"

// ShardRun is one precision's part of a slice of a study (package shard):
// the run's settings and timings and its results, indexed in the whole
// grid. It is declared here, not in package shard, because a shard file
// keeps its parts gob-encoded and gob spells a slice of them by its Go
// name, "[]engine.ShardRun": declared elsewhere, every shard file written
// would change (TestShardFileLayoutUnchanged).
type ShardRun struct {
	Precision  Precision
	Backend    string
	Device     string
	WMA        Formulation
	Prepare    time.Duration
	Indicators time.Duration
	Saving     time.Duration
	Elapsed    time.Duration
	Results    []ComboResult
}
