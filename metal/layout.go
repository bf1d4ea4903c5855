package metal

import (
	"encoding/binary"
	"fmt"
	"math"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// This file is the Metal side of the kernels' memory contract, shared by
// the darwin build and the tests on every system: threadgroup geometry,
// the constant blocks the kernels read (IndParams, SweepParams,
// BlockParams in kernels/*.metal), block_stats_f32's outputs and buffer
// sizes. What CUDA shares (the sweep's block size and output layout, the
// VaR buffer, launch sizing, the finishing of the raw outputs and of the
// block statistics) is in sweepbench/reference/kernels. Nothing here calls
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
//	offset 12 int   count      offset 36 int   kth        offset 52 float rf
//	offset 16 long  comboFirst                            size 56, align 8
type sweepParams struct {
	N, NH, N3, Count int32
	ComboFirst       int64
	Keep, Keep2      float32
	LongOnly, Kth    int32
	K0, Shift        uint32
	Cap              int32
	RF               float32 // the risk-free rate per bar, in float32
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
	le.PutUint32(b[52:], math.Float32bits(p.RF))
	return b
}

// blockParams is BlockParams in blocks.metal, laid out as C does:
//
//	offset  0 int   n          offset 24 float keep
//	offset  4 int   nh         offset 28 float keep2
//	offset  8 int   n3         offset 32 int   longOnly
//	offset 12 int   count      offset 36 int   S
//	offset 16 long  comboFirst size 40, align 8
type blockParams struct {
	N, NH, N3, Count int32
	ComboFirst       int64
	Keep, Keep2      float32
	LongOnly, S      int32
}

const blockParamsSize = 40

func (p blockParams) bytes() []byte {
	b := make([]byte, blockParamsSize)
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(p.N))
	le.PutUint32(b[4:], uint32(p.NH))
	le.PutUint32(b[8:], uint32(p.N3))
	le.PutUint32(b[12:], uint32(p.Count))
	le.PutUint64(b[16:], uint64(p.ComboFirst))
	le.PutUint32(b[24:], math.Float32bits(p.Keep))
	le.PutUint32(b[28:], math.Float32bits(p.Keep2))
	le.PutUint32(b[32:], uint32(p.LongOnly))
	le.PutUint32(b[36:], uint32(p.S))
	return b
}

// blockParamsFor is the block_stats_f32 dispatch over the same combos as
// the sweep dispatch p, in S blocks.
func blockParamsFor(p sweepParams, S int) blockParams {
	return blockParams{N: p.N, NH: p.NH, N3: p.N3, Count: p.Count, ComboFirst: p.ComboFirst,
		Keep: p.Keep, Keep2: p.Keep2, LongOnly: p.LongOnly, S: int32(S)}
}

// blockOutputs are block_stats_f32's outputs for one dispatch of count
// combos in S blocks, as the kernel lays them out: per block at [j*S + b]
// (sum, sq, down, mant: binary64 bits, which are float64's; ex, trades,
// wins: int32), per combo at [j] (s3, s4). The darwin build views its
// shared buffers through them; the host emulation reads them from a file.
type blockOutputs struct {
	sum, sq, down, mant []float64
	ex, trades, wins    []int32
	s3, s4              []float64
}

// finish copies the outputs of the dispatch of combos first.. into rows
// row.. of bs and finishes them (kernels.FinishBlocks: the poison check,
// the logs, the bar counts).
func (o *blockOutputs) finish(bs *engine.BlockStats, row, first int) error {
	cnt, S := len(o.s3), bs.Blocks
	a, z := row*S, (row+cnt)*S
	for _, f := range [][]float64{o.sum, o.sq, o.down} {
		if len(f) != z-a {
			return fmt.Errorf("internal error: %s: %d values for %d combos x %d blocks", fnBlockStats, len(f), cnt, S)
		}
	}
	if len(o.trades) != z-a || len(o.wins) != z-a || len(o.s4) != cnt || z > len(bs.Sum) {
		return fmt.Errorf("internal error: %s: outputs for %d combos x %d blocks do not fit rows %d.. of %d", fnBlockStats, cnt, S, row, bs.Combos)
	}
	copy(bs.Sum[a:z], o.sum)
	copy(bs.SumSq[a:z], o.sq)
	copy(bs.SumDown[a:z], o.down)
	copy(bs.Trades[a:z], o.trades)
	copy(bs.Wins[a:z], o.wins)
	copy(bs.Sum3[row:row+cnt], o.s3)
	copy(bs.Sum4[row:row+cnt], o.s4)
	return kernels.FinishBlocks(bs, row, cnt, o.mant, o.ex, fnBlockStats, first)
}

// Buffer sizes in bytes (fp32 elements, int32 indices).

// seriesBytes is ns series of n floats (H, H3, the stage-1 series).
func seriesBytes(n, ns int) uint64 { return uint64(n) * uint64(ns) * 4 }

// prefixBytes is one prefix-sum array (S1 or S2) of ns series: n+1 each.
func prefixBytes(n, ns int) uint64 { return uint64(n+1) * uint64(ns) * 4 }

// sweepScratch is what a dispatch of count combos needs: the selection
// buffer (cap floats per combo, combo-major) and the outputs; with blocks,
// block_stats_f32's outputs too (blockScratch).
type sweepScratch struct {
	buf, outF, outI uint64
	blocks          blockScratch
}

// blockScratch sizes block_stats_f32's outputs for count combos of S
// blocks: four binary64 fields per block (sum, sumSq, sumDown, mantissa),
// three int32 (exponent, trades, wins), two binary64 per combo (sum3,
// sum4); each field is one buffer of that many bytes.
type blockScratch struct{ f64, i32, combo uint64 }

// scratchFor sizes a dispatch of count combos, a VaR buffer of cap floats
// each, and S blocks (0: no block_stats_f32).
func scratchFor(count, cap, S int) sweepScratch {
	c := uint64(count)
	s := sweepScratch{buf: c * uint64(cap) * 4, outF: c * kernels.NF * 4, outI: c * kernels.NI * 4}
	if S > 0 {
		s.blocks = blockScratch{f64: c * uint64(S) * 8, i32: c * uint64(S) * 4, combo: c * 8}
	}
	return s
}

func (s blockScratch) total() uint64   { return 4*s.f64 + 3*s.i32 + 2*s.combo }
func (s sweepScratch) total() uint64   { return s.buf + s.outF + s.outI + s.blocks.total() }
func (s sweepScratch) largest() uint64 { return max(s.buf, s.outF, s.outI, s.blocks.f64) }

// launchCombos is how many combos one dispatch takes: want, at most
// maxLaunch, and at most what fits in memoryFraction of budget bytes (the
// device's recommendedMaxWorkingSetSize) and in one buffer of maxBuf
// bytes (maxBufferLength), with block_stats_f32's outputs for S blocks
// (0: no blocks). 0 means not even min(want, kernels.MinLaunch) fit.
func launchCombos(budget, maxBuf uint64, cap, S, want int) int {
	per := scratchFor(1, cap, S)
	most := maxLaunch
	if l := per.largest(); l > 0 {
		most = int(min(uint64(maxLaunch), maxBuf/l))
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
