package metal

import (
	"encoding/binary"
	"fmt"
	"math"

	"sweepbench/reference/kernels"
)

// This file is the Metal side of the kernels' memory contract, shared by
// the darwin build and the tests on every system: threadgroup geometry,
// the constant blocks the kernels read (IndParams, SweepParams in
// kernels/*.metal) and buffer sizes. What CUDA shares (the sweep's block
// size and output layout, the VaR buffer, launch sizing, the finishing of
// the raw outputs) is in sweepbench/reference/kernels. Nothing here calls
// Metal.

// Threadgroup sizes, as the kernels define them.
const (
	indBlock  = 256 // IND_BLOCK in indicators.metal
	scanBlock = 128 // prefix_scan threads per threadgroup
)

// Launch limits.
const (
	maxLaunch = 1 << 18 // combos per dispatch (and per Compute call), at most
	// memoryFraction of the device's recommended working set one launch's
	// scratch may take (the indicator series are already resident).
	memoryFraction = 0.25
)

// mtlSize is MTLSize: three NSUInteger (64-bit on every Mac Metal runs on),
// passed by value to dispatchThreadgroups:threadsPerThreadgroup:.
type mtlSize struct{ Width, Height, Depth uint64 }

// dispatch is one dispatchThreadgroups call's geometry.
type dispatch struct{ groups, threads mtlSize }

// threadsTotal is the number of threads the dispatch starts.
func (d dispatch) threadsTotal() uint64 {
	return d.groups.Width * d.groups.Height * d.groups.Depth * d.threads.Width * d.threads.Height * d.threads.Depth
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// indDispatch covers n bars of ns series: (ceil(n/256), ns) threadgroups
// of 256 threads (hma_stage1, hma3_stage1, wma_series).
func indDispatch(n, ns int) dispatch {
	return dispatch{mtlSize{uint64(ceilDiv(n, indBlock)), uint64(ns), 1}, mtlSize{indBlock, 1, 1}}
}

// scanDispatch runs one thread per series (prefix_scan).
func scanDispatch(ns int) dispatch {
	return dispatch{mtlSize{uint64(ceilDiv(ns, scanBlock)), 1, 1}, mtlSize{scanBlock, 1, 1}}
}

// sweepDispatch runs one thread per combo (sweep_f32).
func sweepDispatch(count int) dispatch {
	return dispatch{mtlSize{uint64(ceilDiv(count, kernels.SweepBlock)), 1, 1}, mtlSize{kernels.SweepBlock, 1, 1}}
}

// indParams is IndParams in indicators.metal: five int32, 20 bytes.
type indParams struct {
	N, NS, Prefix, SI, SJ int32
}

// bytes lays indParams out as the kernels read it (little-endian, no padding).
func (p indParams) bytes() []byte {
	b := make([]byte, 20)
	for i, v := range []int32{p.N, p.NS, p.Prefix, p.SI, p.SJ} {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

// sweepParams is SweepParams in sweep.metal. MSL lays it out as C does:
//
//	offset  0 int   n          offset 24 float keep       offset 40 uint k0
//	offset  4 int   nh         offset 28 float keep2      offset 44 uint shift
//	offset  8 int   n3         offset 32 int   longOnly   offset 48 int  cap
//	offset 12 int   count      offset 36 int   kth        offset 52 int  pad
//	offset 16 long  comboFirst                            size 56, align 8
type sweepParams struct {
	N, NH, N3, Count int32
	ComboFirst       int64
	Keep, Keep2      float32
	LongOnly, Kth    int32
	K0, Shift        uint32
	Cap              int32
}

const sweepParamsSize = 56

func (p sweepParams) bytes() []byte {
	b := make([]byte, sweepParamsSize)
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(p.N))
	le.PutUint32(b[4:], uint32(p.NH))
	le.PutUint32(b[8:], uint32(p.N3))
	le.PutUint32(b[12:], uint32(p.Count))
	le.PutUint64(b[16:], uint64(p.ComboFirst))
	le.PutUint32(b[24:], math.Float32bits(p.Keep))
	le.PutUint32(b[28:], math.Float32bits(p.Keep2))
	le.PutUint32(b[32:], uint32(p.LongOnly))
	le.PutUint32(b[36:], uint32(p.Kth))
	le.PutUint32(b[40:], p.K0)
	le.PutUint32(b[44:], p.Shift)
	le.PutUint32(b[48:], uint32(p.Cap))
	return b
}

// Buffer sizes in bytes (fp32 elements, int32 indices).

// seriesBytes is ns series of n floats (H, H3, the stage-1 series).
func seriesBytes(n, ns int) uint64 { return uint64(n) * uint64(ns) * 4 }

// prefixBytes is one prefix-sum array (S1 or S2) of ns series: n+1 each.
func prefixBytes(n, ns int) uint64 { return uint64(n+1) * uint64(ns) * 4 }

// sweepScratch is what a dispatch of count combos needs: the selection
// buffer (cap floats per combo, combo-major) and the outputs.
type sweepScratch struct{ buf, outF, outI uint64 }

func scratchFor(count, cap int) sweepScratch {
	return sweepScratch{
		buf:  uint64(count) * uint64(cap) * 4,
		outF: uint64(count) * kernels.NF * 4,
		outI: uint64(count) * kernels.NI * 4,
	}
}

func (s sweepScratch) total() uint64 { return s.buf + s.outF + s.outI }

// launchCombos is how many combos one dispatch takes: want, at most
// maxLaunch, and at most what fits in memoryFraction of budget bytes (the
// device's recommendedMaxWorkingSetSize) and in one buffer of maxBuf
// bytes (maxBufferLength). 0 means not even min(want, kernels.MinLaunch)
// fit.
func launchCombos(budget, maxBuf uint64, cap, want int) int {
	per := scratchFor(1, cap)
	most := maxLaunch
	if per.buf > 0 {
		most = int(min(uint64(maxLaunch), maxBuf/per.buf))
	}
	return kernels.LaunchCombos(uint64(float64(budget)*memoryFraction), per.total(), want, most)
}

// chunkSize is the combos per Compute call: the whole grid, at most maxLaunch.
func chunkSize(total int) int { return kernels.ChunkSize(total, 1, maxLaunch) }

// checkSeriesFits refuses a job whose indicator series exceed one Metal
// buffer (maxBufferLength), naming the sizes.
func checkSeriesFits(n, nh, n3 int, maxBuf uint64) error {
	for _, c := range []struct {
		what string
		ns   int
	}{{"HMA", nh}, {"HMA3", n3}} {
		if b := seriesBytes(n, c.ns); b > maxBuf {
			return fmt.Errorf("the %s series (%d lengths x %d bars = %d MiB) exceed the largest Metal buffer (%d MiB): use fewer bars or lengths",
				c.what, c.ns, n, b>>20, maxBuf>>20)
		}
	}
	return nil
}

// toInt32 converts lengths to the kernels' int.
func toInt32(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}
