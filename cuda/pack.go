package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"sweepbench/reference/kernels"
)

// devPtr is a CUdeviceptr: an address in device memory.
type devPtr uint64

// kernelArgs holds a launch's parameters in the form cuLaunchKernel takes:
// one 8-byte slot per parameter holding its value (little-endian, so a
// 4-byte int or float sits in the slot's low bytes), and an array of
// pointers to the slots. The slots live on the heap, which the Go collector
// never moves, and stay alive as long as the kernelArgs value does.
type kernelArgs struct {
	slots []uint64
	ptrs  []unsafe.Pointer
}

// packArgs lays out kernel parameters. Allowed types mirror the kernels'
// C signatures: devPtr (any T*), int32 (int), int64 (long long), float32,
// float64. A Go int is refused: its C width would be a guess.
func packArgs(args ...any) (*kernelArgs, error) {
	ka := &kernelArgs{slots: make([]uint64, len(args)), ptrs: make([]unsafe.Pointer, len(args))}
	for i, a := range args {
		var v uint64
		switch x := a.(type) {
		case devPtr:
			v = uint64(x)
		case int32:
			v = uint64(uint32(x))
		case int64:
			v = uint64(x)
		case float32:
			v = uint64(math.Float32bits(x))
		case float64:
			v = math.Float64bits(x)
		default:
			return nil, fmt.Errorf("kernel argument %d: unsupported type %T", i, a)
		}
		ka.slots[i] = v
	}
	for i := range ka.slots {
		ka.ptrs[i] = unsafe.Pointer(&ka.slots[i])
	}
	return ka, nil
}

// floatArg converts a float64 parameter to the kernel's float type F.
func floatArg[F ~float32 | ~float64](v F) any {
	if unsafe.Sizeof(v) == 4 {
		return float32(v)
	}
	return float64(v)
}

// Limits of one sweep launch (the layout shared with Metal is in
// sweepbench/reference/kernels: SweepBlock, NF, NI, MinLaunch, SelectCap).
const (
	segThreads     = 256     // SEG_T in sweep.cu: threads (bar segments) per combo
	posPerWord     = 16      // SB_PW: bars per stored position word
	maxLaunch      = 1 << 20 // combos per launch, at most
	maxChunk       = 1 << 18 // combos per Compute call (engine.Sweep's buffer)
	memoryFraction = 0.5     // of the free device memory a launch may take
)

// bytesPerCombo is the device memory one combo of a launch needs: its
// selection buffer (cap values of elem bytes), its stored positions and
// its outputs.
func bytesPerCombo(cap, elem, n int) uint64 {
	return uint64(cap*elem + kernels.NF*elem + kernels.NI*4 + 4*posWords(n))
}

// posWords is the 32-bit words of stored positions per combo over n bars
// (sweep.cu SB_PW = 16 bars of 2 bits per word; pass 1 writes them, pass 2
// reads them back).
func posWords(n int) int {
	return max((n-1+posPerWord-1)/posPerWord, 1)
}

// launchCombos is how many combos one launch takes: want, bounded by
// maxLaunch and by memoryFraction of free device memory. 0 means not even
// kernels.MinLaunch combos fit.
func launchCombos(free, perCombo uint64, want int) int {
	return kernels.LaunchCombos(uint64(float64(free)*memoryFraction), perCombo, want, maxLaunch)
}

// chunkSize is the combos per Compute call: the grid split evenly over the
// lanes (GPUs), at most maxChunk so engine.Sweep's per-lane buffer stays
// small.
func chunkSize(total, lanes int) int { return kernels.ChunkSize(total, lanes, maxChunk) }

// laneHMA is the range [lo, hi) of HMA indices whose series GPU lane i
// needs: when the grid is one chunk per lane, engine.Sweep gives lane i the
// combos [i*chunk, (i+1)*chunk) (engine.Kernel.ChunkSize), whose HMA
// indices are c / n3; otherwise every lane may get any combo, so all nh.
// A lane with no combos gets the first series only (it is never launched).
// On 2 GPUs and a 320 x 320 grid each computes 160 + 320 series, not 640.
func laneHMA(total, lanes, chunk, n3, nh, i int) (lo, hi int) {
	if total > lanes*chunk || n3 <= 0 {
		return 0, nh
	}
	a, b := i*chunk, min((i+1)*chunk, total)
	if a >= b {
		return 0, min(1, nh)
	}
	return a / n3, (b-1)/n3 + 1
}

// segMaxCombos: grids of fewer combos ran the bar-parallel kernel
// (sweep_seg: one block of segThreads per combo, bars split across its
// threads) until issue 29; kernelFor no longer chooses it. Its sums run
// segment by segment (another order than the reference's, so fp32 agrees
// to rounding only), it keeps Part 1's accumulators only (no trade
// metrics, no risk-free downside), and the thread-per-combo kernel runs a
// small grid within the command's budget (docs/PERFORMANCE.md, issue 29).
// Tests still force it (its check against the reference stays).
const segMaxCombos = 0

// sweepKernel is the sweep kernel a prepared job launches: the bar-parallel
// one (seg: series-major indicator series) or the thread-per-combo one
// (bar-major series). A variant with two combos per thread is measured in
// cuda/dev/sweep_k2.cu, not shipped.
type sweepKernel struct {
	seg bool
}

var (
	barParallel    = sweepKernel{seg: true}
	threadPerCombo = sweepKernel{}
)

// kernelFor is the kernel a grid of total combos takes: the
// thread-per-combo one, whose results equal the reference's fp32 path bit
// for bit and carry every metric (segMaxCombos says why not the
// bar-parallel one).
func kernelFor(total int) sweepKernel {
	if total < segMaxCombos {
		return barParallel
	}
	return threadPerCombo
}

// entry is the kernel's entry point in sweep.cu for float suffix sfx
// ("f32", "f64"): sweep_seg_f32, sweep_f32_k1, ...
func (s sweepKernel) entry(sfx string) string {
	if s.seg {
		return "sweep_seg_" + sfx
	}
	return "sweep_" + sfx + "_k1"
}

// String names the kernel for reports and test labels.
func (s sweepKernel) String() string {
	if s.seg {
		return "bar-parallel"
	}
	return "thread-per-combo"
}
