package cuda

import (
	"context"
	"errors"
	"fmt"

	"sweepbench/engine"
)

// pboThreads is PB_T in kernels/robust.cu.
const pboThreads = 256

// PBOSharpe runs PBO's two passes for the Sharpe key on the first GPU
// (engine.PBODevice; kernels/robust.cu): one block per split set, the
// block statistics read block-major from device memory (a 102,400-combo
// study's 16 blocks are 26 MB: L2-resident). Outputs are poisoned before
// the kernels and checked after.
func (b *Backend) PBOSharpe(ctx context.Context, sum, sumSq []float64, combos, blocks int, bars []float64, sets []uint64, comp []int32) (sel, less, equal []int32, err error) {
	if err := b.init(); err != nil {
		return nil, nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	n, s, k := combos, blocks, len(sets)
	if len(sum) != n*s || len(sumSq) != n*s || len(bars) != s || len(comp) != k || k == 0 {
		return nil, nil, nil, fmt.Errorf("cuda: PBO: %d sums, %d squares, %d bar counts, %d complements for %d combos x %d blocks and %d sets",
			len(sum), len(sumSq), len(bars), len(comp), n, s, k)
	}
	sel, less, equal = make([]int32, k), make([]int32, k), make([]int32, k)
	d := b.devs[0]
	err = d.do(func() (err error) {
		sc := &scratch{d: d}
		defer func() { err = errors.Join(err, sc.release("PBO kernels")) }()
		// sum, sq, bars, sets, comp, sel, less, equal
		dp, err := sc.getAll(false, uint64(n*s)*8, uint64(n*s)*8, uint64(s)*8, uint64(k)*8, uint64(k)*4, uint64(k)*4, uint64(k)*4, uint64(k)*4)
		if err != nil {
			return err
		}
		if err := errors.Join(upload(dp[0], sum), upload(dp[1], sumSq), upload(dp[2], bars), upload(dp[3], sets), upload(dp[4], comp),
			d.poison(dp[5], uint64(k)*4), d.poison(dp[6], uint64(k)*4), d.poison(dp[7], uint64(k)*4)); err != nil {
			return err
		}
		g, blk := [3]uint32{uint32(k), 1, 1}, [3]uint32{pboThreads, 1, 1}
		if err := d.launch("pbo_best", g, blk, 0, dp[0], dp[1], dp[2], int32(n), int32(s), dp[3], dp[5]); err != nil {
			return err
		}
		if err := d.launch("pbo_rank", g, blk, 0, dp[0], dp[1], dp[2], int32(n), int32(s), dp[3], dp[4], dp[5], dp[6], dp[7]); err != nil {
			return err
		}
		if err := d.sync("PBO kernels"); err != nil {
			return err
		}
		return errors.Join(download(sel, dp[5]), download(less, dp[6]), download(equal, dp[7]))
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cuda: PBO: %w", err)
	}
	for i := range sets {
		if sel[i] < 0 || less[i] < 0 || equal[i] < 0 {
			return nil, nil, nil, fmt.Errorf("cuda: PBO: set %d was not written", i)
		}
	}
	return sel, less, equal, nil
}

var _ engine.PBODevice = (*Backend)(nil)
