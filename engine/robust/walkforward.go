package robust

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"sweepbench/engine"
)

// WFMode is how walk-forward folds take their in-sample blocks.
type WFMode int

const (
	// Rolling: K blocks in sample, the next block out, sliding by one
	// (`--wf rolling:K`): folds OOS = K..S-1, IS = blocks OOS-K..OOS-1.
	Rolling WFMode = iota
	// Anchored: every block before in sample, the next out (`--wf
	// anchored`, or anchored:K for a first fold of K blocks): folds
	// OOS = K..S-1, IS = blocks 0..OOS-1.
	Anchored
)

func (m WFMode) String() string {
	if m == Anchored {
		return "anchored"
	}
	return "rolling"
}

// WFSpec describes a walk-forward: the mode and K, the in-sample blocks
// of every fold (rolling) or of the first fold (anchored), 1..S-1.
type WFSpec struct {
	Mode     WFMode
	InSample int
}

func (w WFSpec) String() string {
	if w.Mode == Anchored && w.InSample == 1 {
		return "anchored"
	}
	return w.Mode.String() + ":" + strconv.Itoa(w.InSample)
}

// ParseWF reads `rolling:K`, `anchored` (K = 1) or `anchored:K`. Errors
// (*InputError, ErrValue) name the text and the forms it takes.
func ParseWF(s string) (WFSpec, error) {
	mode, k, hasK := strings.Cut(strings.TrimSpace(s), ":")
	var w WFSpec
	switch mode {
	case "rolling":
		w.Mode = Rolling
		if !hasK {
			return w, inputErr(ErrValue, "wf", "%q: rolling needs its in-sample block count, e.g. rolling:4", s)
		}
	case "anchored":
		w.Mode, w.InSample = Anchored, 1
		if !hasK {
			return w, nil
		}
	default:
		return w, inputErr(ErrValue, "wf", "%q: want rolling:K or anchored (anchored:K)", s)
	}
	n, err := strconv.Atoi(k)
	if err != nil || n < 1 {
		return w, inputErr(ErrValue, "wf", "%q: K must be a whole number of blocks >= 1", s)
	}
	w.InSample = n
	return w, nil
}

// Fold is one walk-forward step: the combo chosen over the in-sample blocks
// and how it did there and on the next block. Returns are fractions; CAGRs
// fractions per year.
type Fold struct {
	ISBlocks     Mask
	OOSBlock     int
	Combo        int     // chosen in sample by the objective among the selectable (ties: lowest index)
	IS, OOS      Moments // its statistics over the in-sample blocks and the out-of-sample block
	ISObjective  float64 // the objective's value over them
	OOSObjective float64
	ISReturn     float64 // total return, compounded
	OOSReturn    float64
	ISCAGR       float64 // Moments.CAGR: annualised over the fold's bars
	OOSCAGR      float64
	// Efficiency is OOSCAGR/ISCAGR, NaN when ISCAGR <= 0 (an efficiency
	// relative to a loss means nothing).
	Efficiency float64
	// OOSBuyHold is the out-of-sample block's buy-and-hold return
	// (engine.BuyHoldReturn over the bars of its returns: the close before
	// its first return to its last close), the benchmark of OOSReturn; set
	// by Analyse when it has the study's bars, NaN otherwise.
	OOSBuyHold float64
}

// WFResult is a walk-forward over every fold. The stitched out-of-sample
// series is the concatenation of each fold's out-of-sample block as the
// chosen combo traded it (its own positions and fees, the strategy running
// continuously: no switching cost is modelled at the block edges).
type WFResult struct {
	Spec      WFSpec
	Objective Objective
	Folds     []Fold
	// Stitched is the sum of the folds' OOS statistics: every decomposable
	// metric of the stitched series follows from it exactly.
	Stitched     Moments
	BlockReturns []float64 // per fold, its OOS block's total return: the stitched equity curve's steps
	TotalReturn  float64   // of the stitched series, compounded
	CAGR         float64   // of the stitched series: expm1(SumLog*bpy/Bars)
	SharpePerBar float64   // of the stitched series
	Sharpe       float64   // annualised
	// ISCAGR is the folds' in-sample growth annualised the same way,
	// expm1(bpy * sum(IS SumLog) / sum(IS Bars)) over the folds (overlapping
	// windows counted in each fold they belong to).
	ISCAGR float64
	// Efficiency (walk-forward efficiency) is CAGR/ISCAGR: out-of-sample
	// over in-sample annualised return (Pardo, "The Evaluation and
	// Optimization of Trading Strategies", 2008: annualised OOS profit over
	// annualised IS profit); NaN when ISCAGR <= 0.
	Efficiency float64
	// Equity is the stitched out-of-sample equity curve bar by bar
	// (StitchedEquity), set by Analyse when it has the study's bars
	// (Options.Bars); nil otherwise, EquityNote saying why when it failed.
	Equity     []EquityPoint
	EquityNote string
}

// WalkForward runs a walk-forward on block statistics: for every fold
// (WFSpec) the selectable combo with the best objective over the fold's
// in-sample blocks is chosen and measured on the next block; the
// out-of-sample blocks are stitched. obj.BarsPerYear must be positive (every
// CAGR needs it). selectable is nil (all) or one entry per combo.
//
// Errors (*InputError): bs invalid (Validate); ErrBlocks when bs has fewer
// than 2 blocks or K is outside 1..S-1; ErrValue for a BarsPerYear that is
// not positive; ErrLength, ErrNoSelectable for the mask; the objective's
// errors.
func WalkForward(bs *BlockStats, spec WFSpec, obj Objective, selectable []bool) (*WFResult, error) {
	if err := bs.Validate(); err != nil {
		return nil, err
	}
	s := bs.Blocks
	if s < 2 {
		return nil, inputErr(ErrBlocks, "blocks", "%d block: a walk-forward needs at least 2", s)
	}
	if spec.InSample < 1 || spec.InSample > s-1 {
		return nil, inputErr(ErrBlocks, "wf", "%s: K = %d in-sample blocks, want 1..%d with %d blocks", spec, spec.InSample, s-1, s)
	}
	if spec.Mode != Rolling && spec.Mode != Anchored {
		return nil, inputErr(ErrValue, "wf", "unknown mode %d", int(spec.Mode))
	}
	if err := obj.validate(); err != nil {
		return nil, err
	}
	bpy := obj.BarsPerYear
	if !(bpy > 0) || math.IsInf(bpy, 0) {
		return nil, inputErr(ErrValue, "bars_per_year", "%v: a walk-forward annualises its returns and needs a positive, finite bars_per_year", bpy)
	}
	if _, err := countSelectable(selectable, bs.Combos); err != nil {
		return nil, err
	}
	r := &WFResult{Spec: spec, Objective: obj}
	var isLog float64
	var isBars int64
	// Each fold's in-sample best, the folds side by side (each a pass
	// over every combo); the folds then in order.
	best := make([]int, s)
	_ = engine.Parallel(context.Background(), s-spec.InSample, min(runtime.GOMAXPROCS(0), s-spec.InSample), func(_, i int) {
		oos := spec.InSample + i
		best[oos] = bestCombo(bs, obj, BlockRange(wfStart(spec, oos), oos), selectable)
	})
	for oos := spec.InSample; oos < s; oos++ {
		is := BlockRange(wfStart(spec, oos), oos)
		c := best[oos]
		f := Fold{ISBlocks: is, OOSBlock: oos, Combo: c, IS: bs.Union(c, is), OOS: bs.Union(c, 1<<uint(oos)), OOSBuyHold: math.NaN()}
		f.ISObjective, f.OOSObjective = obj.Value(f.IS), obj.Value(f.OOS)
		f.ISReturn, f.OOSReturn = f.IS.TotalReturn(), f.OOS.TotalReturn()
		f.ISCAGR, f.OOSCAGR = f.IS.CAGR(bpy), f.OOS.CAGR(bpy)
		f.Efficiency = efficiency(f.OOSCAGR, f.ISCAGR)
		r.Folds = append(r.Folds, f)
		r.Stitched = r.Stitched.Add(f.OOS)
		r.BlockReturns = append(r.BlockReturns, f.OOSReturn)
		isLog += f.IS.SumLog
		isBars += f.IS.Bars
	}
	r.TotalReturn = r.Stitched.TotalReturn()
	r.CAGR = r.Stitched.CAGR(bpy)
	r.SharpePerBar = r.Stitched.SharpePerBar()
	r.Sharpe = r.Stitched.Sharpe(bpy)
	r.ISCAGR = Moments{Bars: isBars, SumLog: isLog}.CAGR(bpy)
	r.Efficiency = efficiency(r.CAGR, r.ISCAGR)
	return r, nil
}

// wfStart is the first in-sample block of the fold whose out-of-sample
// block is oos: 0 when anchored, oos-K when rolling.
func wfStart(spec WFSpec, oos int) int {
	if spec.Mode == Rolling {
		return oos - spec.InSample
	}
	return 0
}

func efficiency(oos, is float64) float64 {
	if !(is > 0) {
		return math.NaN()
	}
	return oos / is
}

// bestCombo is the selectable combo with the largest objective key over m
// (ties: lowest index). The caller has checked that one is selectable.
func bestCombo(bs *BlockStats, obj Objective, m Mask, selectable []bool) int {
	best, at := math.Inf(-1), -1
	for c := 0; c < bs.Combos; c++ {
		if selectable != nil && !selectable[c] {
			continue
		}
		if k := obj.key(bs.Union(c, m)); at < 0 || k > best {
			best, at = k, c
		}
	}
	return at
}

// FoldLabel names a fold's blocks for tables: "IS 0-3 -> OOS 4".
func (f Fold) FoldLabel() string {
	lo, hi := -1, -1
	for b := 0; b < MaxBlocks; b++ {
		if f.ISBlocks.Has(b) {
			if lo < 0 {
				lo = b
			}
			hi = b
		}
	}
	return fmt.Sprintf("IS %d-%d -> OOS %d", lo, hi, f.OOSBlock)
}
