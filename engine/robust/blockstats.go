package robust

import (
	"fmt"
	"math"
	"math/bits"
	"sweepbench/engine"
)

// DefaultBlocks is the block count S a study uses unless told otherwise
// (`--blocks`): 16 blocks give C(16, 8) = 12,870 PBO splits, the size
// Bailey et al. (2015) use in their examples.
const DefaultBlocks = 16

// MaxBlocks bounds S so that a union of blocks fits a Mask (one bit each).
const MaxBlocks = 64

// Mask is a set of blocks, bit b for block b (block 0 is the earliest): the
// union of blocks a metric is taken over.
type Mask uint64

// AllBlocks is the mask of blocks 0..s-1 (the whole sample).
func AllBlocks(s int) Mask {
	if s >= 64 {
		return ^Mask(0)
	}
	return Mask(1)<<uint(s) - 1
}

// BlockRange is the mask of blocks lo..hi-1 (a contiguous run).
func BlockRange(lo, hi int) Mask { return AllBlocks(hi) &^ AllBlocks(lo) }

// Has reports whether block b is in the mask.
func (m Mask) Has(b int) bool { return b >= 0 && b < 64 && m&(1<<uint(b)) != 0 }

// Count is the number of blocks in the mask.
func (m Mask) Count() int { return bits.OnesCount64(uint64(m)) }

// BlockStats are the per-block statistics a sweep emits
// (engine.BlockStats: the fields, their layout and units are defined
// there, once, for the kernels that fill them), with the methods that take
// the decomposable metrics (docs/SPEC.md, "Robustness: decomposable
// metrics") over any union of blocks, exactly.
//
// SumLog is the block's log growth: the backends take it as the log of the
// block's product of growth factors (engine.LogGrowth), FromReturns as a
// sum of log1p; the two agree to a few ulps. A union's growth is then a sum
// like every other field, a total loss an exact -Inf that any union holding
// it inherits, and expm1 of the sum the total return without the
// cancellation of prod - 1.
type BlockStats struct {
	engine.BlockStats
	// valid is set once Validate passed: the statistics are not changed
	// afterwards by the functions that take them (each validates its input,
	// and one check of 100,000 combos is enough).
	valid bool
}

// FromSweep views the per-block statistics a sweep emitted as BlockStats,
// sharing their slices.
func FromSweep(e *engine.BlockStats) *BlockStats { return &BlockStats{BlockStats: *e} }

// NewBlockStats allocates zeroed statistics for combos x blocks, every
// slice at its length, Bounds nil. Errors: ErrEmpty for combos < 1,
// ErrBlocks for blocks outside 1..MaxBlocks.
func NewBlockStats(combos, blocks int) (*BlockStats, error) {
	if combos < 1 {
		return nil, inputErr(ErrEmpty, "combos", "%d combos: the grid is empty", combos)
	}
	if blocks < 1 || blocks > MaxBlocks {
		return nil, inputErr(ErrBlocks, "blocks", "%d blocks: want 1..%d", blocks, MaxBlocks)
	}
	n := combos * blocks
	return &BlockStats{BlockStats: engine.BlockStats{
		Combos: combos, Blocks: blocks,
		Bars: make([]int32, n), Sum: make([]float64, n), SumSq: make([]float64, n),
		SumDown: make([]float64, n), SumLog: make([]float64, n),
		Trades: make([]int32, n), Wins: make([]int32, n),
		Sum3: make([]float64, combos), Sum4: make([]float64, combos),
	}}, nil
}

// Validate checks the shapes and the domains (once: a BlockStats that
// passed is not checked again, so change none of its slices afterwards): Combos >= 1 (ErrEmpty),
// Blocks in 1..MaxBlocks (ErrBlocks), every slice at its length (ErrLength),
// counts >= 0 and wins <= trades, sums not NaN, SumSq, SumDown and Sum4 not
// negative, SumLog not +Inf, Bounds (when set) S+1 increasing edges from 0
// whose block sizes equal Bars (ErrValue). Each error names the field and
// the first bad element.
func (bs *BlockStats) Validate() error {
	if bs != nil && bs.valid {
		return nil
	}
	if err := bs.validate(); err != nil {
		return err
	}
	bs.valid = true
	return nil
}

func (bs *BlockStats) validate() error {
	if bs == nil || bs.Combos < 1 {
		return inputErr(ErrEmpty, "Combos", "no combos")
	}
	if bs.Blocks < 1 || bs.Blocks > MaxBlocks {
		return inputErr(ErrBlocks, "Blocks", "%d blocks: want 1..%d", bs.Blocks, MaxBlocks)
	}
	n := bs.Combos * bs.Blocks
	for _, f := range []struct {
		name string
		got  int
		want int
	}{
		{"Bars", len(bs.Bars), n}, {"Sum", len(bs.Sum), n}, {"SumSq", len(bs.SumSq), n},
		{"SumDown", len(bs.SumDown), n}, {"SumLog", len(bs.SumLog), n},
		{"Trades", len(bs.Trades), n}, {"Wins", len(bs.Wins), n},
		{"Sum3", len(bs.Sum3), bs.Combos}, {"Sum4", len(bs.Sum4), bs.Combos},
	} {
		if f.got != f.want {
			return inputErr(ErrLength, f.name, "length %d, want %d (%d combos x %d blocks)", f.got, f.want, bs.Combos, bs.Blocks)
		}
	}
	at := func(i int) string { return elemName(i, bs.Blocks) }
	for i := 0; i < n; i++ {
		switch {
		case bs.Bars[i] < 0:
			return inputErr(ErrValue, "Bars", "%s is %d", at(i), bs.Bars[i])
		case bs.Trades[i] < 0 || bs.Wins[i] < 0 || bs.Wins[i] > bs.Trades[i]:
			return inputErr(ErrValue, "Wins", "%s: %d wins of %d trades", at(i), bs.Wins[i], bs.Trades[i])
		case math.IsNaN(bs.Sum[i]) || math.IsInf(bs.Sum[i], 0):
			return inputErr(ErrValue, "Sum", "%s is %v", at(i), bs.Sum[i])
		case !(bs.SumSq[i] >= 0) || math.IsInf(bs.SumSq[i], 0):
			return inputErr(ErrValue, "SumSq", "%s is %v", at(i), bs.SumSq[i])
		case !(bs.SumDown[i] >= 0) || math.IsInf(bs.SumDown[i], 0):
			return inputErr(ErrValue, "SumDown", "%s is %v", at(i), bs.SumDown[i])
		case math.IsNaN(bs.SumLog[i]) || math.IsInf(bs.SumLog[i], 1):
			return inputErr(ErrValue, "SumLog", "%s is %v", at(i), bs.SumLog[i])
		}
	}
	for c := 0; c < bs.Combos; c++ {
		if math.IsNaN(bs.Sum3[c]) || !(bs.Sum4[c] >= 0) {
			return inputErr(ErrValue, "Sum3", "combo %d: sum rs^3 %v, sum rs^4 %v", c, bs.Sum3[c], bs.Sum4[c])
		}
	}
	if bs.Bounds != nil {
		if len(bs.Bounds) != bs.Blocks+1 {
			return inputErr(ErrLength, "Bounds", "%d edges, want blocks+1 = %d", len(bs.Bounds), bs.Blocks+1)
		}
		if bs.Bounds[0] != 0 {
			return inputErr(ErrValue, "Bounds", "first edge %d, want 0", bs.Bounds[0])
		}
		for b := 0; b < bs.Blocks; b++ {
			size := bs.Bounds[b+1] - bs.Bounds[b]
			if size < 1 {
				return inputErr(ErrValue, "Bounds", "block %d is empty (edges %d, %d)", b, bs.Bounds[b], bs.Bounds[b+1])
			}
			for c := 0; c < bs.Combos; c++ {
				if int(bs.Bars[c*bs.Blocks+b]) != size {
					return inputErr(ErrValue, "Bars", "%s is %d, Bounds give %d", at(c*bs.Blocks+b), bs.Bars[c*bs.Blocks+b], size)
				}
			}
		}
	}
	return nil
}

// elemName names element i of a [c*S+b] field for messages.
func elemName(i, s int) string { return fmt.Sprintf("combo %d block %d", i/s, i%s) }

// checkMask verifies that m names at least one block and only blocks of bs.
func (bs *BlockStats) checkMask(arg string, m Mask) error {
	if m == 0 {
		return inputErr(ErrBlocks, arg, "the union of blocks is empty")
	}
	if m&^AllBlocks(bs.Blocks) != 0 {
		return inputErr(ErrBlocks, arg, "mask %#x names blocks beyond the %d there are", uint64(m), bs.Blocks)
	}
	return nil
}

// Union returns combo c's sufficient statistics over the blocks of m, the
// same numbers a direct pass over those bars would sum (docs/SPEC.md,
// "Robustness: decomposable metrics"), with the trades closed in them.
//
// Order of summation, so that every path agrees bit for bit (PBO's split
// tables, walk-forward, this): the blocks below h = Blocks/2 are added in
// ascending order starting from 0, the blocks from h up likewise, and the
// two partial sums are added last. c must be in 0..Combos-1 (not checked
// here, the hot paths' callers validate: out of range panics like an
// index); bits of m beyond the blocks are ignored.
func (bs *BlockStats) Union(c int, m Mask) Moments {
	s := bs.Blocks
	h := s / 2
	base := c * s
	var lo, hi Moments
	for b := 0; b < s; b++ {
		if m&(1<<uint(b)) == 0 {
			continue
		}
		acc := &lo
		if b >= h {
			acc = &hi
		}
		i := base + b
		acc.Bars += int64(bs.Bars[i])
		acc.Sum += bs.Sum[i]
		acc.SumSq += bs.SumSq[i]
		acc.SumDown += bs.SumDown[i]
		acc.SumLog += bs.SumLog[i]
		acc.Trades += int64(bs.Trades[i])
		acc.Wins += int64(bs.Wins[i])
	}
	return lo.Add(hi)
}

// Chunk returns a view of combos c0..c1-1 (0 <= c0 < c1 <= Combos): the
// same arrays re-sliced, so that a backend that computes the grid in chunks
// of combos writes each chunk's statistics in place (combo c of the chunk is
// combo c0+c of bs). Bounds are shared. It panics on a range outside bs,
// like a slice expression.
func (bs *BlockStats) Chunk(c0, c1 int) *BlockStats {
	s := bs.Blocks
	lo, hi := c0*s, c1*s
	return &BlockStats{BlockStats: engine.BlockStats{
		Combos: c1 - c0, Blocks: s, Bounds: bs.Bounds,
		Bars: bs.Bars[lo:hi:hi], Sum: bs.Sum[lo:hi:hi], SumSq: bs.SumSq[lo:hi:hi],
		SumDown: bs.SumDown[lo:hi:hi], SumLog: bs.SumLog[lo:hi:hi],
		Trades: bs.Trades[lo:hi:hi], Wins: bs.Wins[lo:hi:hi],
		Sum3: bs.Sum3[c0:c1:c1], Sum4: bs.Sum4[c0:c1:c1],
	}}
}

// Subset copies the combos rows (indices into bs, in that order) into new
// statistics of len(rows) combos (at least one).
func (bs *BlockStats) Subset(rows []int) *BlockStats {
	out, _ := NewBlockStats(max(len(rows), 1), bs.Blocks)
	out.Combos, out.Bounds = len(rows), bs.Bounds
	for j, c := range rows {
		out.CopyCombo(j, &bs.BlockStats, c)
	}
	out.valid = bs.valid && len(rows) > 0 // combos of valid statistics are
	return out
}

// Whole is Union over every block: combo c over the whole sample.
func (bs *BlockStats) Whole(c int) Moments { return bs.Union(c, AllBlocks(bs.Blocks)) }

// Shape returns combo c's skewness g3 and kurtosis g4 over the whole sample,
// population moments of its bar returns from Sum, SumSq (over every block),
// Sum3 and Sum4:
//
//	mu = S1/n, m2 = S2/n - mu^2, m3 = S3/n - 3 mu S2/n + 2 mu^3,
//	m4 = S4/n - 4 mu S3/n + 6 mu^2 S2/n - 3 mu^4,
//	g3 = m3 / m2^(3/2), g4 = m4 / m2^2.
//
// g4 is the non-excess kurtosis (3 for a normal distribution), the
// convention of Bailey & López de Prado's PSR and DSR (their gamma_4, where a
// normal sample gives (gamma_4 - 1)/4 = 1/2). A combo with zero variance
// (within the floor of Moments.SharpePerBar) gets g3 = 0 and g4 = 3, the
// normal values, so that PSR reduces to the textbook Lo (2002) case.
func (bs *BlockStats) Shape(c int) (skew, kurt float64) {
	w := bs.Whole(c)
	if w.Bars == 0 {
		return 0, 3
	}
	n := float64(w.Bars)
	mu := w.Sum / n
	e2 := w.SumSq / n
	m2 := e2 - mu*mu
	if !(m2 > varFloor*e2) {
		return 0, 3
	}
	e3 := bs.Sum3[c] / n
	e4 := bs.Sum4[c] / n
	m3 := e3 - 3*mu*e2 + 2*mu*mu*mu
	m4 := e4 - 4*mu*e3 + 6*mu*mu*e2 - 3*mu*mu*mu*mu
	return m3 / math.Pow(m2, 1.5), m4 / (m2 * m2)
}

// EqualBounds splits bars bar returns into s contiguous blocks of sizes
// floor or ceil of bars/s (block b = [b*bars/s, (b+1)*bars/s), integer
// division), and returns the s+1 edges. Errors: ErrBlocks for s outside
// 1..MaxBlocks, ErrEmpty when bars < s (a block would be empty).
func EqualBounds(bars, s int) ([]int, error) {
	if s < 1 || s > MaxBlocks {
		return nil, inputErr(ErrBlocks, "blocks", "%d blocks: want 1..%d", s, MaxBlocks)
	}
	if bars < s {
		return nil, inputErr(ErrEmpty, "bars", "%d bar returns cannot fill %d blocks", bars, s)
	}
	return engine.BlockBounds(bars+1, s) // the edges a study's sweep uses
}

// TradeExit is one closed trade as FromReturns attributes it: Bar is the
// index (into the combo's rs slice) of the last bar return over which the
// trade holds its position, i.e. SPEC's exit bar b (rs[b], slice index b-1);
// the final open trade, closed at the last bar, has Bar = len(rs)-1. The
// trade is counted in the block that holds Bar. Won is SPEC's win, R > 0.
type TradeExit struct {
	Bar int
	Won bool
}

// FromReturns computes BlockStats on the CPU in fp64 from per-bar returns:
// rs[c] is combo c's bar returns (every combo the same length, at least
// len(bounds)-1), trades[c] its closed trades (nil: no trades; a nil trades
// slice: no trades for any combo), bounds the block edges (EqualBounds, or
// any S+1 increasing edges from 0 to len(rs[c])). Each field is summed in bar
// order within its block. It is the reference a backend's statistics are
// checked against, and the tests' builder.
//
// Errors: ErrEmpty (no combos), ErrLength (ragged rs, trades not one slice
// per combo, bounds not ending at len(rs[c])), ErrBlocks (bounds giving fewer
// than 1 or more than MaxBlocks blocks), ErrValue (bounds not increasing, a
// trade's Bar outside rs, a NaN or infinite return, a block of more than
// 2^31-1 bars or trades).
func FromReturns(rs [][]float64, trades [][]TradeExit, bounds []int) (*BlockStats, error) {
	if len(rs) == 0 {
		return nil, inputErr(ErrEmpty, "rs", "no combos")
	}
	s := len(bounds) - 1
	if s < 1 || s > MaxBlocks {
		return nil, inputErr(ErrBlocks, "bounds", "%d edges give %d blocks: want 1..%d", len(bounds), s, MaxBlocks)
	}
	n := len(rs[0])
	if bounds[0] != 0 || bounds[s] != n {
		return nil, inputErr(ErrLength, "bounds", "edges run %d..%d, want 0..%d (the bar returns)", bounds[0], bounds[s], n)
	}
	for b := 0; b < s; b++ {
		if bounds[b+1] <= bounds[b] {
			return nil, inputErr(ErrValue, "bounds", "block %d is empty or reversed (edges %d, %d)", b, bounds[b], bounds[b+1])
		}
		if bounds[b+1]-bounds[b] > math.MaxInt32 {
			return nil, inputErr(ErrValue, "bounds", "block %d holds %d bars, more than an int32 counts", b, bounds[b+1]-bounds[b])
		}
	}
	if trades != nil && len(trades) != len(rs) {
		return nil, inputErr(ErrLength, "trades", "%d trade lists for %d combos", len(trades), len(rs))
	}
	bs, err := NewBlockStats(len(rs), s)
	if err != nil {
		return nil, err
	}
	bs.Bounds = append([]int(nil), bounds...)
	for c, r := range rs {
		if len(r) != n {
			return nil, inputErr(ErrLength, "rs", "combo %d has %d bar returns, combo 0 has %d", c, len(r), n)
		}
		var s3, s4 float64
		for b := 0; b < s; b++ {
			i := c*s + b
			var sum, sq, down, lg float64
			for _, x := range r[bounds[b]:bounds[b+1]] {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return nil, inputErr(ErrValue, "rs", "combo %d: a bar return is %v", c, x)
				}
				x2 := float64(x * x) // rounded: no fused multiply-add (SPEC)
				sum += x
				sq += x2
				if x < 0 {
					down += x2
				}
				lg += math.Log1p(x)
				s3 += float64(x2 * x)
				s4 += float64(x2 * x2)
			}
			bs.Bars[i] = int32(bounds[b+1] - bounds[b])
			bs.Sum[i], bs.SumSq[i], bs.SumDown[i], bs.SumLog[i] = sum, sq, down, lg
		}
		bs.Sum3[c], bs.Sum4[c] = s3, s4
		if trades == nil {
			continue
		}
		for _, t := range trades[c] {
			if t.Bar < 0 || t.Bar >= n {
				return nil, inputErr(ErrValue, "trades", "combo %d: a trade exits at bar return %d, outside 0..%d", c, t.Bar, n-1)
			}
			b := blockOf(bounds, t.Bar)
			i := c*s + b
			if bs.Trades[i] == math.MaxInt32 {
				return nil, inputErr(ErrValue, "trades", "combo %d block %d: more than 2^31-1 trades", c, b)
			}
			bs.Trades[i]++
			if t.Won {
				bs.Wins[i]++
			}
		}
	}
	return bs, nil
}

// blockOf returns the block whose [bounds[b], bounds[b+1]) holds bar k.
func blockOf(bounds []int, k int) int {
	lo, hi := 0, len(bounds)-2
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if bounds[mid] <= k {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
