package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// ErrNoBlocks: the backend does not emit per-block statistics (BlockKernel),
// so it cannot run a study that asks for robustness statistics.
var ErrNoBlocks = errors.New("this backend does not emit per-block statistics (robustness): run the study on the reference backend")

// BlockStats is what a sweep emits, per combo and block, when its job asks
// for blocks (Job.Blocks): the sufficient statistics from which every
// decomposable metric follows over any union of blocks (docs/SPEC.md
// "Robustness: decomposable metrics"; package engine/robust computes them,
// and PBO, DSR and walk-forward from them).
//
// The strategy runs once, continuously, over the whole history; blocks
// only partition its bar returns: block b holds the returns rs[k] (k = 0 ..
// n-2, SPEC's rs[k+1]) with Bounds[b] <= k < Bounds[b+1]. Per-block fields
// are flat, combo-major: element [c*Blocks + b] is combo c (the index the
// slice's first combo is counted from: the grid's index in a study's
// statistics, the launch's in a kernel's), block b. Sum3 and Sum4 are per
// combo, [c], over the whole sample. Sums are float64, in bar order,
// whatever the sweep's precision (an fp32 lane's returns are widened
// exactly). SumLog is sum log1p(rs), the block's log growth.
type BlockStats struct {
	Combos int   // combos the slices hold
	Blocks int   // S
	Bounds []int // S+1 edges, 0 = Bounds[0] < ... < Bounds[S] = n-1

	Bars    []int32   // [c*S+b] returns in the block
	Sum     []float64 // [c*S+b] sum rs
	SumSq   []float64 // [c*S+b] sum rs^2
	SumDown []float64 // [c*S+b] sum min(rs,0)^2
	SumLog  []float64 // [c*S+b] sum log1p(rs) (-Inf after a total loss)
	Trades  []int32   // [c*S+b] trades closed in the block (the exit's return index)
	Wins    []int32   // [c*S+b] of those, won (trade return > 0, SPEC "Trades")
	Sum3    []float64 // [c] sum rs^3
	Sum4    []float64 // [c] sum rs^4
}

// MaxBlocks is the most blocks a study splits its bar returns into (one
// bit each in engine/robust's masks).
const MaxBlocks = 64

// NewBlockStats allocates zeroed statistics of combos x len(bounds)-1
// blocks over the given edges.
func NewBlockStats(combos int, bounds []int) *BlockStats {
	s := len(bounds) - 1
	n := combos * s
	return &BlockStats{Combos: combos, Blocks: s, Bounds: bounds,
		Bars: make([]int32, n), Sum: make([]float64, n), SumSq: make([]float64, n), SumDown: make([]float64, n),
		SumLog: make([]float64, n), Trades: make([]int32, n), Wins: make([]int32, n),
		Sum3: make([]float64, combos), Sum4: make([]float64, combos)}
}

// BlockBounds splits the n-1 bar returns of n bars into s contiguous
// blocks whose sizes differ by at most one: edge b is floor(b*(n-1)/s)
// (docs/SPEC.md "Robustness: decomposable metrics"), the S+1 edges.
// Errors: s < 1, or fewer returns than blocks (FieldBlocks).
func BlockBounds(n, s int) ([]int, error) {
	m := n - 1
	if s < 1 || m < s {
		return nil, fieldErr(FieldBlocks, fmt.Sprint(s), "%d blocks of %d bar returns: want 1 to %d", s, max(m, 0), max(m, 0))
	}
	b := make([]int, s+1)
	for i := range b {
		b[i] = int(int64(i) * int64(m) / int64(s))
	}
	return b, nil
}

// CopyCombo copies combo i of src into combo j of dst (same blocks).
func (dst *BlockStats) CopyCombo(j int, src *BlockStats, i int) {
	s := dst.Blocks
	a, b := i*s, j*s
	copy(dst.Bars[b:b+s], src.Bars[a:a+s])
	copy(dst.Sum[b:b+s], src.Sum[a:a+s])
	copy(dst.SumSq[b:b+s], src.SumSq[a:a+s])
	copy(dst.SumDown[b:b+s], src.SumDown[a:a+s])
	copy(dst.SumLog[b:b+s], src.SumLog[a:a+s])
	copy(dst.Trades[b:b+s], src.Trades[a:a+s])
	copy(dst.Wins[b:b+s], src.Wins[a:a+s])
	dst.Sum3[j], dst.Sum4[j] = src.Sum3[i], src.Sum4[i]
}

// Frexp splits a normal positive x into m in [0.5, 1) and x = m * 2^e,
// adding e to ex, as math.Frexp does; zero, negative, subnormal and
// non-finite x are returned as they are (the CUDA kernel's sb_frexp, bit
// for bit: how the block statistics keep a long product of growth factors
// in range without a log per bar).
func Frexp(x float64, ex int) (float64, int) {
	b := math.Float64bits(x)
	be := int(b>>52) & 0x7ff
	if !(x > 0) || be == 0 || be == 0x7ff {
		return x, ex
	}
	return math.Float64frombits(b&^(0x7ff<<52) | 1022<<52), ex + be - 1022
}

// LogGrowth is the log growth of a block whose product of growth factors
// is m * 2^ex: log(m) + ex*ln 2 (-Inf after a total loss, NaN when the
// product went negative).
func LogGrowth(m float64, ex int) float64 {
	return math.Log(m) + float64(float64(ex)*math.Ln2)
}

// BlockKernel is implemented by kernels that emit per-block statistics
// beside the metrics: ComputeBlocks is Compute that also fills bs, whose
// combo c is the call's combo first+c (bs holds len(out) combos, zeroed,
// over the job's Bounds).
type BlockKernel interface {
	ComputeBlocks(ctx context.Context, lane, first int, out []Metrics, bs *BlockStats) error
}
