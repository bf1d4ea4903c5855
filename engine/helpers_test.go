package engine

import (
	"math"
	"math/rand/v2"

	"sweepbench/engine/data/datatest"
)

// The sweep tests need bars only for their length: a random walk from
// datatest, the bars every package's tests share.
func randomWalk(rng *rand.Rand, n int, start, vol float64) []float64 {
	return datatest.Closes(rng, n, start, vol)
}

func closeBars(close []float64) *Bars { return datatest.CloseBars(close) }

// sameMetrics is bit-for-bit equality of every metric (any NaN equals any
// NaN), for the report round trips.
func sameMetrics(a, b Metrics) bool {
	for _, name := range MetricNames {
		x, _ := a.Value(name)
		y, _ := b.Value(name)
		if !sameBits(x, y) {
			return false
		}
	}
	return true
}

func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}
