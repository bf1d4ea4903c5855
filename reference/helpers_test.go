package reference_test

import (
	"sweepbench/conformance"
	"sweepbench/engine"
)

func toF[F engine.Float](x []float64) []F {
	out := make([]F, len(x))
	for i, v := range x {
		out[i] = F(v)
	}
	return out
}

func precName[F engine.Float]() string {
	var z F
	if _, ok := any(z).(float32); ok {
		return "fp32"
	}
	return "fp64"
}

// unitRoundoff is 2^-53 for float64 and 2^-24 for float32.
func unitRoundoff[F engine.Float]() float64 {
	var z F
	if _, ok := any(z).(float32); ok {
		return 0x1p-24
	}
	return 0x1p-53
}

// sameMetrics is conformance.SameMetrics as a condition.
func sameMetrics(a, b engine.Metrics) bool {
	_, same := conformance.SameMetrics(a, b)
	return same
}
