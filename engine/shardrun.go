package engine

import (
	"context"
	"time"
)

// ShardRun is one precision's part of a slice of a study (package shard):
// the run's settings and timings and its results, indexed in the whole
// grid. It is declared here, not in package shard, because a shard file
// keeps its parts gob-encoded and gob spells a slice of them by its Go
// name, "[]engine.ShardRun": declared elsewhere, every shard file written
// would change (TestShardFileLayoutUnchanged).
type ShardRun struct {
	Precision  Precision
	Backend    string
	Device     string
	WMA        Formulation
	Prepare    time.Duration
	Indicators time.Duration
	Saving     time.Duration
	Elapsed    time.Duration
	Results    []ComboResult
}

// Slice is the study of combos [lo, hi) of s's strategy grid (s.Grid.Strategy
// set; 0 <= lo <= hi <= Grid.Len()): the same study (dataset, parameters,
// precisions, backends, blocks) over a grid whose combo i is the whole grid's
// lo+i, computed by the whole grid's own arithmetic (its kernel and parity,
// each combo's metrics and per-block statistics depending only on its
// parameters and the bars, as a hull rectangle's do: Rect). A strategy grid's
// combos are ordered by its axes, not by HMA rows, so a contiguous range of
// them is no rectangle: package shard runs a slice of it this way. The sub
// study's parameters come from the whole grid (Grid.Point(i) is the whole
// grid's Point(lo+i)); only its axes' coordinates are the whole grid's too,
// so IndexOf of a combo outside the range is -1. Nil for a hull grid or a
// range outside the grid.
func (s *Study) Slice(lo, hi int) *Study {
	st := s.Grid.Strategy
	if st == nil || lo < 0 || hi > st.Len() || lo > hi {
		return nil
	}
	sub := *s
	sub.Grid = Grid{Strategy: &sliceStrategy{Strategy: st, lo: lo, n: hi - lo}}
	sub.Note, sub.wholeCombos = "", s.computedCombos()
	return &sub
}

// sliceStrategy is combos [lo, lo+n) of a strategy grid (Study.Slice):
// every index-free method is the whole grid's (embedded), the index ones
// shifted by lo (a method added to Strategy that takes or returns a combo
// index must be shifted here too).
type sliceStrategy struct {
	Strategy
	lo, n int
}

func (s *sliceStrategy) Len() int                 { return s.n }
func (s *sliceStrategy) Point(i int) []ParamValue { return s.Strategy.Point(s.lo + i) }
func (s *sliceStrategy) Coords(i int) []int       { return s.Strategy.Coords(s.lo + i) }
func (s *sliceStrategy) IndexOf(coords []int) int {
	if i := s.Strategy.IndexOf(coords); i >= s.lo && i < s.lo+s.n {
		return i - s.lo
	}
	return -1
}

func (s *sliceStrategy) Prepare(ctx context.Context, job *Job, threads int) (Kernel, error) {
	k, err := s.Strategy.Prepare(ctx, job, threads)
	if err != nil {
		return nil, err
	}
	if bk, ok := k.(BlockKernel); ok {
		return &sliceBlockKernel{sliceKernel{k, s.lo}, bk}, nil
	}
	return &sliceKernel{k, s.lo}, nil
}

func (s *sliceStrategy) Trace(ctx context.Context, job *Job, i int) (StrategyTrace, error) {
	return s.Strategy.Trace(ctx, job, s.lo+i)
}

func (s *sliceStrategy) Compare(ctx context.Context, job *Job, test Precision, form Formulation, i int, tol float64) ([]StrategyFlip, error) {
	return s.Strategy.Compare(ctx, job, test, form, s.lo+i, tol)
}

// sliceKernel computes the slice's combo first+i as the whole grid's
// lo+first+i.
type sliceKernel struct {
	Kernel
	lo int
}

func (k *sliceKernel) Compute(ctx context.Context, lane, first int, out []Metrics) error {
	return k.Kernel.Compute(ctx, lane, k.lo+first, out)
}

// sliceBlockKernel is a sliceKernel of a BlockKernel (its out and bs are
// indexed from the call's first combo, as the whole grid's are).
type sliceBlockKernel struct {
	sliceKernel
	bk BlockKernel
}

func (k *sliceBlockKernel) ComputeBlocks(ctx context.Context, lane, first int, out []Metrics, bs *BlockStats) error {
	return k.bk.ComputeBlocks(ctx, lane, k.lo+first, out, bs)
}

// JudgeAsFamily marks p as the parity report of grid g's family, for a
// report rebuilt from saved rows (a shard file's parts, the sessions
// store's rows, which keep no unexported field): a family with memory (Strategy.Memory) has its
// sensitive combos pass, as compareStrategy judged them (SPEC Part 2
// "Parity for families with memory"). It takes effect when p is merged
// (MergeParity, OverallParity) or judged again; nil p is left alone.
func (p *Parity) JudgeAsFamily(g Grid) {
	if p != nil {
		p.memory = g.Strategy != nil && g.Strategy.Memory()
	}
}
