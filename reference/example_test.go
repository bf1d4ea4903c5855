package reference_test

import (
	"fmt"

	"sweepbench/engine"
	"sweepbench/reference"
)

// WMA(x, 3) over a ramp: (1*1 + 2*2 + 3*3)/6 = 14/6, then 20/6 and 26/6;
// NaN before the first full window.
func ExampleWMA() {
	x := []float64{1, 2, 3, 4, 5}
	out := make([]float64, len(x))
	reference.WMA(x, 3, 0, out)
	fmt.Println(out)
	// Output: [NaN NaN 2.3333333333333335 3.3333333333333335 4.333333333333333]
}

// HMA(x, 4) worked by hand (TestHMAHandComputed): defined from bar
// HMAWarmup(4) = 4, where it is 585/90 = 6.5.
func ExampleHMA() {
	x := []float64{2, 4, 3, 5, 7, 6}
	out := make([]float64, len(x))
	if err := reference.HMA(x, 4, engine.Direct, out); err != nil {
		fmt.Println(err)
	}
	fmt.Println(engine.HMAWarmup(4), out[4])
	// Output: 4 6.5
}
