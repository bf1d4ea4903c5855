package kernels

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"sweepbench/engine"
)

// FinishBlocks completes rows row..row+count-1 of bs after a block_stats
// launch (cuda/kernels/sweep.cu, metal/kernels/blocks.metal) of the combos
// first..first+count-1, whose outputs were copied in: bs.Sum, SumSq,
// SumDown, Trades, Wins, Sum3 and Sum4 of those rows, and mant and ex
// (len count*bs.Blocks, row-relative) the blocks' products of growth
// factors as mantissa and power of two. The launch's outputs were filled
// with 0xFF bytes before it (a negative count, a NaN with every bit set):
// a slot still holding them is an error naming the kernel, the combo and
// the block (the exponents, any int, are not checked). FinishBlocks then takes each block's one log (engine.LogGrowth:
// bs.SumLog) and fills its bar count from bs.Bounds, on every core (1.6
// million logs for 102,400 combos x 16 blocks).
func FinishBlocks(bs *engine.BlockStats, row, count int, mant []float64, ex []int32, kernel string, first int) error {
	S := bs.Blocks
	a, z := row*S, (row+count)*S
	if len(mant) != z-a || len(ex) != z-a {
		return fmt.Errorf("internal error: %s: %d mantissas and %d exponents for %d combos x %d blocks", kernel, len(mant), len(ex), count, S)
	}
	const span = 1 << 15
	parts := (z - a + span - 1) / span
	bad := make([]int, parts)
	_ = engine.Parallel(context.Background(), parts, min(runtime.GOMAXPROCS(0), parts), func(_, p int) { // no ctx: nothing to stop
		bad[p] = -1
		for i := a + p*span; i < min(a+(p+1)*span, z); i++ {
			if bs.Trades[i] < 0 || bs.Wins[i] < 0 || poisoned(bs.Sum[i]) || poisoned(bs.SumSq[i]) ||
				poisoned(bs.SumDown[i]) || poisoned(mant[i-a]) {
				bad[p] = i
				return
			}
			bs.SumLog[i] = engine.LogGrowth(mant[i-a], int(ex[i-a]))
			bs.Bars[i] = int32(bs.Bounds[(i-a)%S+1] - bs.Bounds[(i-a)%S])
		}
	})
	for _, i := range bad {
		if i >= 0 {
			return fmt.Errorf("%s: combo %d block %d was not written", kernel, first+(i-a)/S, (i-a)%S)
		}
	}
	for c := row; c < row+count; c++ {
		if poisoned(bs.Sum3[c]) || poisoned(bs.Sum4[c]) {
			return fmt.Errorf("%s: combo %d: the sums of rs^3 and rs^4 were not written", kernel, first+c-row)
		}
	}
	return nil
}

// poisoned reports whether x still holds the 0xFF bytes a launch's
// outputs are filled with (a NaN no arithmetic produces).
func poisoned(x float64) bool { return math.Float64bits(x) == math.MaxUint64 }
