package engine

// SetMergeAliases turns Sweep's computing of each HMA3 twin pair once
// (Grid.Distinct) on or off, returning the previous setting, so that a
// test of package engine_test can compare with the sweep of every combo.
func SetMergeAliases(on bool) (was bool) {
	was, mergeAliases = mergeAliases, on
	return was
}

// MetricValues is Metrics.values, for TestMetricValuesOrder.
func MetricValues(m *Metrics) [NumMetrics]float64 {
	var out [NumMetrics]float64
	m.Values(&out)
	return out
}
