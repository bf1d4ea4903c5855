package bench

import (
	"math"

	"sweepbench/engine"
)

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// gtNaN is a > b where NaN counts as larger than everything.
func gtNaN(a, b float64) bool {
	if math.IsNaN(a) {
		return !math.IsNaN(b)
	}
	return a > b
}

func toFloat64[F engine.Float](x []F) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
