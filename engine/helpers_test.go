package engine

import (
	"math/rand/v2"

	"sweepbench/engine/data/datatest"
)

// The sweep tests need bars only for their length: datatest's random walk,
// under the names they call it by.
func randomWalk(rng *rand.Rand, n int, start, vol float64) []float64 {
	return datatest.Closes(rng, n, start, vol)
}

func closeBars(close []float64) *Bars { return datatest.CloseBars(close) }
