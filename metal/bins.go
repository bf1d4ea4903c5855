package metal

import "sweepbench/cuda/kernels"

// binSpec is the sweep kernel's VaR histogram (sweep.metal's sb_bin from
// the shared header): the fp32 case of the host code the CUDA backend uses
// too (sweepbench/cuda/kernels), so both GPUs bin the returns with the same
// edges. Only speed depends on its K0 and Shift (a bin that overflows the
// buffer is refined on the device), never the result.
type binSpec = kernels.Bins[float32]

// keyOf is sb_key: a < b <=> keyOf(a) < keyOf(b) for non-NaN floats.
func keyOf(v float32) uint32 { return kernels.KeyHi(v) }

// valOf is sb_val, the inverse of keyOf.
func valOf(k uint32) float32 { return kernels.ValHi[float32](k) }

// thresholdsBars builds the bins from the closes (as cuda.thresholdsBars).
func thresholdsBars(close []float64) binSpec { return kernels.BinsFromCloses[float32](close) }
