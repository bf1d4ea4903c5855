// Package suite runs one study description over several datasets: a
// Suite is a list of ordinary engine.Studies, one per dataset
// (BuildSuite: each built by Spec.BuildContext, run by engine.RunStudy,
// the one run path), plus the cross-dataset Aggregate (Aggregator: per
// combo, the median and the worst of the objective over the datasets and
// how many datasets it made money on; its table and JSON shape), a
// suite's datasets (ExpandDatasets: --data values and @lists, --data-each
// globs, each dataset once), its id (SuiteID) and where a study stands in
// it (SuiteRef, as Spec.Suite saves it). Package shard cuts a suite's
// (dataset x combo) work into slices; the parity figures over datasets
// (engine.MergeParity, engine.OverallParity) stay with engine's Parity.
// A strategy family's aggregate (engine.Grid.Strategy) names each combo by
// its parameters (Grid.Columns, Grid.Point) and draws its heatmap over the
// grid's first two axes, each cell the best median over the others
// (suite_strategy.go); hull's table and JSON are as they always were.
//
// It imports engine; engine never imports it.
package suite
