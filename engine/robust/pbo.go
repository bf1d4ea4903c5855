package robust

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/combin"

	"sweepbench/engine"
)

// MaxPBOBlocks bounds S for PBO: C(24, 12) = 2,704,156 splits, 210 times
// the default's 12,870.
const MaxPBOBlocks = 24

// PBOOptions configure PBO.
type PBOOptions struct {
	// Objective picks the in-sample best and ranks out of sample
	// (DefaultObjective(bars_per_year): the Sharpe ratio, maximised).
	Objective Objective
	// Selectable, when not nil (length Combos), marks the combos that may
	// be chosen (the constraints: min trades, max drawdown, computed
	// elsewhere). The others are never chosen but still count as trials:
	// they take part in every out-of-sample rank, as the paper ranks the
	// chosen strategy among all N it tried.
	Selectable []bool
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Device, when set, runs both passes on a device for the Sharpe
	// objective (equal bar counts per block, no Selectable mask): the same
	// sums in the same order and the same comparisons as the CPU's passes.
	Device engine.PBODevice
}

// PBOResult is the outcome of CSCV over every split. Per-split slices are in
// the order in which gonum's combin.CombinationGenerator(S, S/2) yields the
// in-sample block sets (lexicographic: split 0 is blocks 0..S/2-1).
type PBOResult struct {
	Objective  Objective
	Blocks     int // S
	Trials     int // N, every combo of the statistics
	Selectable int // combos that could be chosen

	// PBO is the share of splits whose logit is <= 0, i.e. whose chosen
	// combo ranks at or below the median out of sample (Bailey et al.
	// 2015, the CSCV estimate of phi = Prob[lambda <= 0]).
	PBO float64

	ISBlocks  []Mask    // per split: the in-sample blocks (out of sample: the others)
	Selected  []int     // per split: the combo chosen in sample (ties: lowest index)
	IS        []float64 // per split: the chosen combo's objective value over the in-sample blocks
	OOS       []float64 // per split: its objective value over the out-of-sample blocks
	OOSReturn []float64 // per split: its total return over the out-of-sample blocks, a fraction
	// Rank is the chosen combo's rank out of sample among all N trials by
	// the objective, 1 = worst, N = best; tied values share their average
	// rank (so a half-integer is possible).
	Rank []float64
	// Logits are lambda = ln(w/(1-w)), w = Rank/(N+1): > 0 when the
	// chosen combo stays in the better half out of sample.
	Logits []float64

	// The performance degradation: the least-squares line
	// OOS = Intercept + Slope*IS over the splits (gonum stat.LinearRegression),
	// its R2 (stat.RSquared), and RegressionSplits, the splits it used (those
	// whose IS and OOS values are both finite). NaN with fewer than 2.
	Slope, Intercept, R2 float64
	RegressionSplits     int

	// ProbOOSLoss is the share of splits whose chosen combo lost money out
	// of sample (OOSReturn < 0). The paper's "probability of loss" is
	// Prob[OOS performance < 0] for its performance statistic (the Sharpe
	// ratio, i.e. a negative mean); the compounded return is used here
	// because it is a loss for every objective, a win rate's included.
	ProbOOSLoss float64
}

// Splits is the number of in-sample/out-of-sample splits, C(S, S/2).
func (r *PBOResult) Splits() int { return len(r.Logits) }

// LogitHistogram counts the logits in bins equal bins spanning every logit
// the trial count allows, [-ln N, ln N] (ranks 1 and N), and returns the
// bins+1 edges and the counts (gonum stat.Histogram). bins < 1 is taken as 1.
func (r *PBOResult) LogitHistogram(bins int) (edges, counts []float64) {
	bins = max(bins, 1)
	lim := math.Log(float64(max(r.Trials, 2)))
	sorted := slices.Clone(r.Logits)
	sort.Float64s(sorted)
	edges = make([]float64, bins+1)
	for i := range edges {
		edges[i] = -lim + 2*lim*float64(i)/float64(bins)
	}
	if len(sorted) > 0 {
		edges[0] = math.Min(edges[0], sorted[0])
		edges[bins] = math.Nextafter(math.Max(edges[bins], sorted[len(sorted)-1]), math.Inf(1))
	}
	return edges, stat.Histogram(nil, edges, sorted, nil)
}

// PBO estimates the probability of backtest overfitting by combinatorially
// symmetric cross-validation (Bailey, Borwein, López de Prado and Zhu, "The
// Probability of Backtest Overfitting", Journal of Computational Finance
// 20(4), 2017; SSRN 2326253, 2015), exactly, over every combo and every
// split:
//
//  1. the S blocks of bs (S even, 2..MaxPBOBlocks) are the paper's S
//     submatrices of the returns matrix; every set J of S/2 blocks (all
//     C(S, S/2) of them, gonum combin) is an in-sample set, its complement
//     the out-of-sample set;
//  2. in sample, the combo with the best objective over J's bars among the
//     selectable ones is chosen (n*; ties go to the lowest combo index);
//  3. out of sample, its rank among all N combos by the objective over the
//     complement's bars gives w = rank/(N+1) and the logit
//     lambda = ln(w/(1-w));
//  4. PBO is the share of splits with lambda <= 0.
//
// The objective is any decomposable metric of the union's statistics
// (Moments), maximised or minimised; it ranks by an exact monotone key of the
// metric (sign(SR)*SR^2 for the Sharpe ratio: no square root), computed the
// same way for every combo. Units of IS and OOS: the objective's.
//
// How it is fast (pbo_kernel.go): per tile of 32 combos it tabulates the
// sums of every subset of the first S/2 blocks and of the last S/2
// (2 x 2^(S/2) rows), so a split's sums are one addition per field, added
// in BlockStats.Union's order: no rounding drifts from split to split (as
// it would in a Gray-code walk that adds one block and removes another) and
// every path ranks the same numbers. Pass 1 finds each split's in-sample
// best per tile, pass 2 counts per tile the combos below and equal to the
// chosen one out of sample; tiles run in parallel, nothing is allocated per
// split, and the result does not depend on Workers. For the Sharpe ratio
// (the default) the kernels compare keys as fractions (no division), and
// bounds of every combo's key over any S/2 blocks let whole tiles be
// skipped in pass 1 and counted at once in pass 2.
//
// Errors (*InputError): bs invalid (see Validate); ErrBlocks for S odd,
// below 2 or above MaxPBOBlocks; ErrLength for a Selectable of the wrong
// length; ErrNoSelectable when it selects nothing; the objective's errors
// (ErrNotDecomposable, ErrValue); ctx's error when cancelled.
func PBO(ctx context.Context, bs *BlockStats, opt PBOOptions) (*PBOResult, error) {
	if err := bs.Validate(); err != nil {
		return nil, err
	}
	s := bs.Blocks
	if s < 2 || s%2 != 0 || s > MaxPBOBlocks {
		return nil, inputErr(ErrBlocks, "blocks", "%d blocks: PBO needs an even count from 2 to %d (default %d)", s, MaxPBOBlocks, DefaultBlocks)
	}
	if err := opt.Objective.validate(); err != nil {
		return nil, err
	}
	nsel, err := countSelectable(opt.Selectable, bs.Combos)
	if err != nil {
		return nil, err
	}
	sets := splitSets(s)
	nsp := len(sets)

	comp := complementIndex(sets, s)
	var sel, less, equal []int32
	if opt.Device != nil && opt.Objective.Metric == MetricSharpe && uniformBars(bs) && opt.Selectable == nil {
		sign := 1.0
		if opt.Objective.Minimise {
			sign = -1
		}
		sel, less, equal, err = devicePasses(ctx, opt.Device, bs, sign, sets, comp)
	} else {
		p := newPBOPlan(bs, opt.Objective, opt.Selectable, sets, opt.Workers)
		sel, less, equal, err = p.cpuPasses(ctx, sets, comp, opt.Workers)
	}
	if err != nil {
		return nil, err
	}

	n := bs.Combos
	r := &PBOResult{
		Objective: opt.Objective, Blocks: s, Trials: n, Selectable: nsel,
		ISBlocks: sets, Selected: make([]int, nsp),
		IS: make([]float64, nsp), OOS: make([]float64, nsp), OOSReturn: make([]float64, nsp),
		Rank: make([]float64, nsp), Logits: make([]float64, nsp),
	}
	var below, losses int
	all := AllBlocks(s)
	for j, is := range sets {
		c := int(sel[j])
		r.Selected[j] = c
		r.IS[j] = opt.Objective.Value(bs.Union(c, is))
		oos := bs.Union(c, all&^is)
		r.OOS[j] = opt.Objective.Value(oos)
		r.OOSReturn[j] = oos.TotalReturn()
		if r.OOSReturn[j] < 0 {
			losses++
		}
		lt, eq := int64(less[comp[j]]), int64(equal[comp[j]])
		// rank = lt + (eq+1)/2 (eq counts the chosen combo itself);
		// lambda <= 0 <=> rank <= (N+1)/2 <=> 2 lt + eq <= N, in integers.
		r.Rank[j] = float64(lt) + float64(eq+1)/2
		r.Logits[j] = math.Log(r.Rank[j] / (float64(n) + 1 - r.Rank[j]))
		if 2*lt+eq <= int64(n) {
			below++
		}
	}
	r.PBO = float64(below) / float64(nsp)
	r.ProbOOSLoss = float64(losses) / float64(nsp)
	r.Intercept, r.Slope, r.R2, r.RegressionSplits = degradation(r.IS, r.OOS)
	return r, nil
}

// cpuPasses are PBO's two passes on every core. Pass 1: each set as
// in-sample set, its best selectable combo. Pass 2: set k as out-of-sample
// set belongs to the split whose in-sample set is its complement; the
// split's chosen combo is ranked over it.
func (p *pboPlan) cpuPasses(ctx context.Context, sets []Mask, comp []int32, workers int) (sel, less, equal []int32, err error) {
	if sel, err = p.bestPerSet(ctx, workers); err != nil {
		return nil, nil, nil, err
	}
	chosen := make([]int32, len(sets))
	for k := range sets {
		chosen[k] = sel[comp[k]]
	}
	less, equal, err = p.rankPerSet(ctx, chosen, workers)
	return sel, less, equal, err
}

// devicePasses are PBO's two passes on dev: the sign-adjusted sums and
// the squares transposed block-major for it, its answers checked.
func devicePasses(ctx context.Context, dev engine.PBODevice, bs *BlockStats, sign float64, sets []Mask, comp []int32) (sel, less, equal []int32, err error) {
	n, s := bs.Combos, bs.Blocks
	sum := make([]float64, n*s)
	sq := make([]float64, n*s)
	for c := 0; c < n; c++ {
		for b := 0; b < s; b++ {
			sum[b*n+c] = sign * bs.Sum[c*s+b]
			sq[b*n+c] = bs.SumSq[c*s+b]
		}
	}
	bars := make([]float64, s)
	for b := range bars {
		bars[b] = float64(bs.Bars[b])
	}
	masks := make([]uint64, len(sets))
	for k, m := range sets {
		masks[k] = uint64(m)
	}
	sel, less, equal, err = dev.PBOSharpe(ctx, sum, sq, n, s, bars, masks, comp)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(sel) != len(sets) || len(less) != len(sets) || len(equal) != len(sets) {
		return nil, nil, nil, fmt.Errorf("PBO on the device: %d/%d/%d answers for %d splits", len(sel), len(less), len(equal), len(sets))
	}
	for k := range sets {
		if sel[k] < 0 || int(sel[k]) >= n || less[k] < 0 || equal[k] < 1 || int(less[k]+equal[k]) > n {
			return nil, nil, nil, fmt.Errorf("PBO on the device: split %d: combo %d, %d below and %d equal of %d", k, sel[k], less[k], equal[k], n)
		}
	}
	return sel, less, equal, nil
}

// degradation fits OOS = alpha + beta*IS over the finite pairs.
func degradation(is, oos []float64) (alpha, beta, r2 float64, used int) {
	x := make([]float64, 0, len(is))
	y := make([]float64, 0, len(is))
	for i := range is {
		if !math.IsInf(is[i], 0) && !math.IsNaN(is[i]) && !math.IsInf(oos[i], 0) && !math.IsNaN(oos[i]) {
			x = append(x, is[i])
			y = append(y, oos[i])
		}
	}
	if len(x) < 2 {
		return math.NaN(), math.NaN(), math.NaN(), len(x)
	}
	alpha, beta = stat.LinearRegression(x, y, nil, false)
	return alpha, beta, stat.RSquared(x, y, nil, alpha, beta), len(x)
}

// countSelectable checks the mask's length and counts its true entries
// (all combos when nil).
func countSelectable(sel []bool, combos int) (int, error) {
	if sel == nil {
		return combos, nil
	}
	if len(sel) != combos {
		return 0, inputErr(ErrLength, "selectable", "%d entries for %d combos", len(sel), combos)
	}
	n := 0
	for _, ok := range sel {
		if ok {
			n++
		}
	}
	if n == 0 {
		return 0, inputErr(ErrNoSelectable, "selectable", "every one of the %d combos fails a constraint", combos)
	}
	return n, nil
}

// splitSets lists every set of s/2 of the s blocks as masks, in the order of
// gonum's CombinationGenerator (lexicographic).
func splitSets(s int) []Mask {
	out := make([]Mask, 0, combin.Binomial(s, s/2))
	gen := combin.NewCombinationGenerator(s, s/2)
	buf := make([]int, s/2)
	for gen.Next() {
		var m Mask
		for _, b := range gen.Combination(buf) {
			m |= 1 << uint(b)
		}
		out = append(out, m)
	}
	return out
}

// complementIndex maps each set's index to its complement's.
func complementIndex(sets []Mask, s int) []int32 {
	at := make(map[Mask]int32, len(sets))
	for i, m := range sets {
		at[m] = int32(i)
	}
	all := AllBlocks(s)
	out := make([]int32, len(sets))
	for i, m := range sets {
		out[i] = at[all&^m]
	}
	return out
}
