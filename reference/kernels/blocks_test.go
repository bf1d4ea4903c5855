package kernels

import (
	"math"
	"strings"
	"testing"

	"sweepbench/engine"
)

// TestFinishBlocks: the rows of a launch get their bar counts from the
// bounds and their log growth from mantissa and exponent (log(m) + e ln 2,
// checked against math.Log of the product where it is exact: a power of
// two and 0.75 * 2^e), other rows stay as they were; a slot still holding
// the 0xFF poison is reported by kernel, grid combo and block.
func TestFinishBlocks(t *testing.T) {
	bounds := []int{0, 3, 7, 10} // 3 blocks of 3, 4, 3 returns
	poison := math.Float64frombits(math.MaxUint64)
	launch := func() (*engine.BlockStats, []float64, []int32) {
		bs := engine.NewBlockStats(4, bounds)
		// Rows 1 and 2 are the launch's (combos 41 and 42 of the grid).
		mant := []float64{0.5, 0.75, 0, 0.5, 0.75, 0.5}
		ex := []int32{1, 3, 0, -1, -2, 0}
		for i := 3; i < 9; i++ {
			bs.Sum[i], bs.Trades[i] = float64(i), int32(i)
		}
		return bs, mant, ex
	}

	bs, mant, ex := launch()
	if err := FinishBlocks(bs, 1, 2, mant, ex, "block_stats_f32", 41); err != nil {
		t.Fatal(err)
	}
	wantLog := []float64{0, math.Log(6), math.Inf(-1), math.Log(0.25), math.Log(0.1875), math.Log(0.5)}
	for i := 3; i < 9; i++ {
		if bs.Bars[i] != int32(bounds[i%3+1]-bounds[i%3]) {
			t.Errorf("slot %d: %d bars, want %d", i, bs.Bars[i], bounds[i%3+1]-bounds[i%3])
		}
		if got, want := bs.SumLog[i], wantLog[i-3]; got != want && !(math.Abs(got-want) <= 1e-15*max(1, math.Abs(want))) {
			t.Errorf("slot %d: log growth %v, want %v", i, got, want)
		}
		if bs.SumLog[i] != engine.LogGrowth(mant[i-3], int(ex[i-3])) {
			t.Errorf("slot %d: not engine.LogGrowth's bits", i)
		}
	}
	for _, i := range []int{0, 1, 2, 9, 10, 11} {
		if bs.Bars[i] != 0 || bs.SumLog[i] != 0 {
			t.Errorf("slot %d outside the launch was written", i)
		}
	}

	for _, c := range []struct {
		name   string
		poison func(bs *engine.BlockStats, mant []float64)
		want   string
	}{
		{"trades", func(bs *engine.BlockStats, _ []float64) { bs.Trades[7] = -1 }, "block_stats_f32: combo 42 block 1 was not written"},
		{"sum", func(bs *engine.BlockStats, _ []float64) { bs.Sum[3] = poison }, "block_stats_f32: combo 41 block 0 was not written"},
		{"mantissa", func(_ *engine.BlockStats, m []float64) { m[5] = poison }, "block_stats_f32: combo 42 block 2 was not written"},
		{"sum4", func(bs *engine.BlockStats, _ []float64) { bs.Sum4[2] = poison }, "block_stats_f32: combo 42: the sums of rs^3 and rs^4 were not written"},
	} {
		bs, mant, ex := launch()
		c.poison(bs, mant)
		if err := FinishBlocks(bs, 1, 2, mant, ex, "block_stats_f32", 41); err == nil || err.Error() != c.want {
			t.Errorf("%s poisoned: %v, want %q", c.name, err, c.want)
		}
	}
	if err := FinishBlocks(bs, 1, 2, mant[:5], ex, "k", 0); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("short mantissas: %v", err)
	}
}
