package engine

import "sweepbench/engine/memlimit"

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

// SetMemoryLimit makes f the memory limit the memory check reads until
// the returned restore is called, for the preflight's tests.
func SetMemoryLimit(f func() memlimit.MemoryLimit) (restore func()) {
	old := memoryLimit
	memoryLimit = f
	return func() { memoryLimit = old }
}

// FakeStudy is fakeStudy, NewFakeBackend a fakeBackend of lanes lanes and
// chunk chunk, for the preflight's tests.
func FakeStudy(b Backend) *Study              { return fakeStudy(b) }
func NewFakeBackend(lanes, chunk int) Backend { return &fakeBackend{lanes: lanes, chunk: chunk} }

// SetParityBlock makes n the combos a parity report without rows builds
// at a time (parityBlock), returning what restores it, so that a test
// runs a report of many blocks on a small grid.
func SetParityBlock(n int) (restore func()) {
	old := parityBlock
	parityBlock = n
	return func() { parityBlock = old }
}
