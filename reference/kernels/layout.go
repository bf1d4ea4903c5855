package kernels

import "math"

// Launch geometry and output layout shared by the sweep kernels
// (sweep.cu, sweep.metal and sweep_common.h's SB_* constants).
const (
	SweepBlock = 64 // SB_BLOCK: threads per block (thread-per-combo kernels)
	NF         = 15 // SB_NF: float outputs per combo, in OF_* order (see Raw)
	NI         = 10 // SB_NI: int32 outputs per combo, in OI_* order (see Raw)
	// NFBase and NIBase are the fields a kernel without the trade
	// accumulators writes (CUDA's bar-parallel sweep_seg): the first 9
	// and 8 of the layout (Outputs.NoTrades).
	NFBase = 9
	NIBase = 8
	// MinLaunch: below this many combos per launch an out-of-memory is final.
	MinLaunch = 128
)

// SelectCap is how many values of its VaR bin a thread keeps (the buffer
// per combo, in floats) for n bars: about 1/64 of the m = n-1 strategy
// returns, at least 1024 and at most 8192. Bins near the 5% quantile are
// ~0.5% of the candidate returns wide, so the bin normally holds several
// hundred; an overflow costs refinement passes, never a wrong answer.
func SelectCap(n int) int { return min(max((n-1)/64, 1024), 8192) }

// KthIndex is SPEC's VaR index floor(0.05*(m-1)) for m returns, computed as
// reference.Backtest computes it.
func KthIndex(m int) int { return int(math.Floor(0.05 * float64(m-1))) }

// LaunchCombos is how many combos one launch takes: want, at most most, and
// at most budget/perCombo (bytes). 0 means not even min(want, MinLaunch)
// fit: the launch cannot run.
func LaunchCombos(budget, perCombo uint64, want, most int) int {
	if want <= 0 || perCombo == 0 {
		return 0
	}
	c := min(uint64(want), uint64(most), budget/perCombo)
	if c < uint64(min(want, MinLaunch)) {
		return 0
	}
	return int(c)
}

// ChunkSize is the combos per Compute call (engine.Kernel.ChunkSize): the
// grid of total combos split evenly over lanes (GPUs), at most most, so
// engine.Sweep's per-lane buffer stays bounded; at least 1.
func ChunkSize(total, lanes, most int) int {
	lanes = max(lanes, 1)
	return max(min((total+lanes-1)/lanes, most), 1)
}
