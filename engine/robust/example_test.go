package robust_test

import (
	"context"
	"fmt"

	"sweepbench/engine/robust"
)

// Three combos' bar returns (fractions), eight bars in four blocks of two:
// the statistics, a metric over a union of blocks, then PBO with the mean
// bar return as the objective.
func Example() {
	rs := [][]float64{
		{0.02, -0.01, 0.01, 0.00, -0.02, 0.01, 0.00, -0.01},
		{-0.01, 0.01, 0.02, 0.01, 0.00, -0.01, 0.01, 0.02},
		{0.00, 0.00, -0.01, 0.01, 0.015, 0.01, -0.01, 0.00},
	}
	bounds, _ := robust.EqualBounds(8, 4)
	bs, err := robust.FromReturns(rs, nil, bounds)
	if err != nil {
		fmt.Println(err)
		return
	}
	u := bs.Union(1, robust.BlockRange(0, 2)) // combo 1 over blocks 0 and 1
	fmt.Printf("combo 1, blocks 0-1: %d bars, total return %.6f, mean %.4f\n", u.Bars, u.TotalReturn(), u.Mean())

	r, err := robust.PBO(context.Background(), bs, robust.PBOOptions{Objective: robust.Objective{Metric: robust.MetricMean}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("PBO %.3f over %d splits; split 0 (blocks 0-1 in sample) chose combo %d, OOS rank %.1f of %d\n",
		r.PBO, r.Splits(), r.Selected[0], r.Rank[0], r.Trials)
	// Output:
	// combo 1, blocks 0-1: 4 bars, total return 0.030097, mean 0.0075
	// PBO 0.667 over 6 splits; split 0 (blocks 0-1 in sample) chose combo 1, OOS rank 3.0 of 3
}
