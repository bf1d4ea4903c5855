package robust

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sweepbench/engine"
	"testing"

	"gonum.org/v1/gonum/stat/combin"
)

// naivePBO is CSCV written the plain way, as the paper lists its steps:
// for every split, every combo's objective value (not the ranking key)
// over the in-sample and out-of-sample blocks, the best selectable one in
// sample (ties: lowest index), its out-of-sample rank among all combos
// (ties averaged). It returns per split the chosen combo and its rank.
func naivePBO(bs *BlockStats, obj Objective, sel []bool) (chosen []int, rank []float64) {
	s := bs.Blocks
	all := AllBlocks(s)
	for _, comb := range combin.Combinations(s, s/2) {
		var is Mask
		for _, b := range comb {
			is |= 1 << uint(b)
		}
		best := -1
		var bestV float64
		for c := 0; c < bs.Combos; c++ {
			if sel != nil && !sel[c] {
				continue
			}
			v := obj.Value(bs.Union(c, is))
			if best < 0 || obj.Better(v, bestV) {
				best, bestV = c, v
			}
		}
		t := obj.Value(bs.Union(best, all&^is))
		var lt, eq int
		for c := 0; c < bs.Combos; c++ {
			v := obj.Value(bs.Union(c, all&^is))
			switch {
			case v == t:
				eq++
			case obj.Better(t, v):
				lt++
			}
		}
		chosen = append(chosen, best)
		rank = append(rank, float64(lt)+float64(eq+1)/2)
	}
	return chosen, rank
}

// TestPBOHandWorked: 4 combos x 4 blocks of one bar each, objective the
// mean bar return (maximised). Returns in percent (block 0..3):
//
//	c0:  5 -1 -3  1
//	c1: -2  4  2 -3
//	c2:  1  2 -2  6
//	c3:  2 -4  3  0
//
// Pair sums (the mean is half of them, so they rank the same):
//
//	blocks  01  02  03  12  13  23
//	c0       4   2   6  -4   0  -2
//	c1       2   0  -5   6   1  -1
//	c2       3  -1   7   0   8   4
//	c3      -2   5   2  -1  -4   3
//
// Splits (in sample -> best -> out-of-sample values c0..c3 -> its rank):
//
//	{0,1} -> c0 (4) -> OOS {2,3}: -2 -1  4  3 -> c0 rank 1, lambda ln(1/4)
//	{0,2} -> c3 (5) -> OOS {1,3}:  0  1  8 -4 -> c3 rank 1, ln(1/4)
//	{0,3} -> c2 (7) -> OOS {1,2}: -4  6  0 -1 -> c2 rank 3, ln(3/2)
//	{1,2} -> c1 (6) -> OOS {0,3}:  6 -5  7  2 -> c1 rank 1, ln(1/4)
//	{1,3} -> c2 (8) -> OOS {0,2}:  2  0 -1  5 -> c2 rank 1, ln(1/4)
//	{2,3} -> c2 (4) -> OOS {0,1}:  4  2  3 -2 -> c2 rank 3, ln(3/2)
//
// PBO = 4/6. Out-of-sample compounded returns of the chosen: 0.97*1.01,
// 0.96*1.00, 1.02*0.98, 0.98*0.97, 1.01*0.98 below 1, 1.01*1.02 above:
// ProbOOSLoss = 5/6. Degradation, in percent: IS means x = 2, 2.5, 3.5, 3,
// 4, 2 and OOS means y = -1, -2, 0, -2.5, -0.5, 1.5: Sxx = 10/3, Sxy = -3/4,
// Syy = 10.375, slope = -0.225, intercept = -0.75 + 0.225*17/6 = -0.1125
// (-0.001125 as a fraction), R^2 = 0.5625/(10/3*10.375) = 0.016265.
func TestPBOHandWorked(t *testing.T) {
	pct := [][]float64{{5, -1, -3, 1}, {-2, 4, 2, -3}, {1, 2, -2, 6}, {2, -4, 3, 0}}
	rs := make([][]float64, len(pct))
	for c, row := range pct {
		for _, v := range row {
			rs[c] = append(rs[c], v/100)
		}
	}
	bs, err := FromReturns(rs, nil, []int{0, 1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	r, err := PBO(context.Background(), bs, PBOOptions{Objective: Objective{Metric: MetricMean}})
	if err != nil {
		t.Fatal(err)
	}
	wantSel := []int{0, 3, 2, 1, 2, 2}
	wantRank := []float64{1, 1, 3, 1, 1, 3}
	for j := range wantSel {
		if r.Selected[j] != wantSel[j] || r.Rank[j] != wantRank[j] {
			t.Errorf("split %d (IS %04b): chosen %d rank %v, want %d rank %v", j, r.ISBlocks[j], r.Selected[j], r.Rank[j], wantSel[j], wantRank[j])
		}
		want := math.Log(wantRank[j] / (5 - wantRank[j]))
		if math.Abs(r.Logits[j]-want) > 1e-15 {
			t.Errorf("split %d: logit %v, want %v", j, r.Logits[j], want)
		}
	}
	if r.PBO != 4.0/6 || r.ProbOOSLoss != 5.0/6 {
		t.Errorf("PBO %v, ProbOOSLoss %v; want 4/6, 5/6", r.PBO, r.ProbOOSLoss)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"slope", r.Slope, -0.225}, {"intercept", r.Intercept, -0.001125}, {"R2", r.R2, 0.5625 / (10.0 / 3 * 10.375)}} {
		if relErr(c.got, c.want) > 1e-9 {
			t.Errorf("%s %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.RegressionSplits != 6 || r.Splits() != 6 || r.Trials != 4 {
		t.Errorf("regression splits %d, splits %d, trials %d", r.RegressionSplits, r.Splits(), r.Trials)
	}
	edges, counts := r.LogitHistogram(2)
	if len(edges) != 3 || counts[0] != 4 || counts[1] != 2 {
		t.Errorf("histogram edges %v counts %v, want 4 below 0 and 2 above", edges, counts)
	}
}

// TestPBOMatchesNaive compares the tabulated two-pass PBO with naivePBO:
// random statistics with duplicated combos (exact ties), a combo that never
// trades and one with a constant return (zero variance: key 0, more ties),
// a planted edge on some (so that pass 2 counts whole tiles at once), a
// random selectable mask, every metric in both directions, several block
// counts, non-uniform bar counts (the general kernels) and worker counts
// (the result must not depend on them).
func TestPBOMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		s, n    int
		edge    bool
		ragged  bool
		metrics []Metric
	}{
		{2, 40, false, false, Metrics()},
		{4, 49, false, true, Metrics()},
		{6, 55, false, false, Metrics()},
		{8, 61, false, false, Metrics()},
		{8, 300, true, false, []Metric{MetricSharpe}},
		{10, 150, false, false, []Metric{MetricSharpe, MetricMean}},
	} {
		s, n := c.s, c.n
		mu := make([]float64, n)
		for i := range mu {
			mu[i] = 0.0005 * rng.NormFloat64()
			if c.edge && i%7 == 0 {
				mu[i] = 0.003
			}
		}
		bs := synthStats(rng, n, s, 50, mu, 0.01)
		for _, dup := range [][2]int{{3, 5}, {10, 11}, {0, n - 1}} { // combo dup[1] := combo dup[0]
			for b := 0; b < s; b++ {
				i, j := dup[0]*s+b, dup[1]*s+b
				bs.Sum[j], bs.SumSq[j], bs.SumDown[j], bs.SumLog[j] = bs.Sum[i], bs.SumSq[i], bs.SumDown[i], bs.SumLog[i]
				bs.Trades[j], bs.Wins[j] = bs.Trades[i], bs.Wins[i]
			}
		}
		for b := 0; b < s; b++ { // combo 7 never trades, combo 8 earns 0.1% every bar
			i, j := 7*s+b, 8*s+b
			bs.Sum[i], bs.SumSq[i], bs.SumDown[i], bs.SumLog[i], bs.Trades[i], bs.Wins[i] = 0, 0, 0, 0, 0, 0
			bs.Sum[j], bs.SumSq[j], bs.SumDown[j], bs.SumLog[j] = 50*0.001, 50*0.001*0.001, 0, 50*math.Log1p(0.001)
		}
		if c.ragged {
			bs.Bars[2*s+1]++
		}
		sel := make([]bool, n)
		for i := range sel {
			sel[i] = rng.Float64() < 0.7
		}
		for _, m := range c.metrics {
			for _, minimise := range []bool{false, true} {
				obj := Objective{Metric: m, Minimise: minimise, BarsPerYear: 8760}
				chosen, rank := naivePBO(bs, obj, sel)
				for _, workers := range []int{1, 3} {
					r, err := PBO(context.Background(), bs, PBOOptions{Objective: obj, Selectable: sel, Workers: workers})
					if err != nil {
						t.Fatal(err)
					}
					for j := range chosen {
						if r.Selected[j] != chosen[j] || r.Rank[j] != rank[j] {
							t.Fatalf("S=%d N=%d %v workers %d split %d: chosen %d rank %v, naive %d rank %v",
								s, n, obj, workers, j, r.Selected[j], r.Rank[j], chosen[j], rank[j])
						}
					}
				}
			}
		}
	}
}

// TestPBONoise: combos whose returns are pure noise (independent normal
// bar returns, i.e. random-walk equity) have no edge to find, so the
// chosen combo's out-of-sample rank is uniform and PBO is near 0.5: the
// mean over 20 seeds must lie in 0.35..0.65 (one seed alone varies widely,
// its 12,870 splits being far from independent: over 300 other seeds the
// mean was 0.488 and the standard deviation of one seed's PBO 0.17, so
// these 20 seeds' 0.39 is within three standard errors of 0.5).
func TestPBONoise(t *testing.T) {
	const seeds, n, s, per = 20, 60, 16, 40
	bounds, _ := EqualBounds(s*per, s)
	var sum float64
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 99))
		bs, err := FromReturns(randomReturns(rng, n, s*per, nil, 0.01), nil, bounds)
		if err != nil {
			t.Fatal(err)
		}
		r, err := PBO(context.Background(), bs, PBOOptions{Objective: DefaultObjective(525600)})
		if err != nil {
			t.Fatal(err)
		}
		sum += r.PBO
	}
	if mean := sum / seeds; mean < 0.35 || mean > 0.65 {
		t.Errorf("mean PBO over %d noise seeds %.3f, want 0.35..0.65", seeds, mean)
	} else {
		t.Logf("mean PBO over %d noise seeds %.3f", seeds, mean)
	}
}

// TestPBOPlantedEdge: one region of the grid (combos 0..9 of 60) has a
// positive mean of 0.3 standard deviations per bar, so positive in every
// block; the rest is noise. The in-sample best is then one of the region,
// which stays in the top out of sample: PBO < 0.1, and DSR-free sanity:
// the chosen combo is always in the region.
func TestPBOPlantedEdge(t *testing.T) {
	const n, s, per = 60, 16, 40
	bounds, _ := EqualBounds(s*per, s)
	mu := make([]float64, n)
	for c := 0; c < 10; c++ {
		mu[c] = 0.003
	}
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 7))
		bs, err := FromReturns(randomReturns(rng, n, s*per, mu, 0.01), nil, bounds)
		if err != nil {
			t.Fatal(err)
		}
		r, err := PBO(context.Background(), bs, PBOOptions{Objective: DefaultObjective(525600)})
		if err != nil {
			t.Fatal(err)
		}
		if r.PBO >= 0.1 {
			t.Errorf("seed %d: PBO %.3f with a planted edge, want < 0.1", seed, r.PBO)
		}
		for j, c := range r.Selected {
			if c >= 10 {
				t.Errorf("seed %d split %d: chose combo %d outside the edge region", seed, j, c)
				break
			}
		}
	}
}

// TestPBOErrors: the typed errors for bad input.
func TestPBOErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	odd := synthStats(rng, 5, 5, 10, nil, 0.01)
	ok := synthStats(rng, 5, 4, 10, nil, 0.01)
	big := synthStats(rng, 2, 26, 10, nil, 0.01)
	cases := []struct {
		name string
		bs   *BlockStats
		opt  PBOOptions
		want error
	}{
		{"odd blocks", odd, PBOOptions{Objective: DefaultObjective(252)}, ErrBlocks},
		{"too many blocks", big, PBOOptions{Objective: DefaultObjective(252)}, ErrBlocks},
		{"mask length", ok, PBOOptions{Objective: DefaultObjective(252), Selectable: []bool{true}}, ErrLength},
		{"nothing selectable", ok, PBOOptions{Objective: DefaultObjective(252), Selectable: make([]bool, 5)}, ErrNoSelectable},
		{"no bars per year", ok, PBOOptions{Objective: Objective{Metric: MetricSharpe}}, ErrValue},
		{"empty", &BlockStats{}, PBOOptions{Objective: DefaultObjective(252)}, ErrEmpty},
		{"short field", &BlockStats{BlockStats: engine.BlockStats{Combos: 1, Blocks: 2}}, PBOOptions{Objective: DefaultObjective(252)}, ErrLength},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := PBO(context.Background(), c.bs, c.opt)
			var ie *InputError
			if !errors.Is(err, c.want) || !errors.As(err, &ie) {
				t.Fatalf("error %v, want an *InputError wrapping %v", err, c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PBO(ctx, ok, PBOOptions{Objective: DefaultObjective(252)}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v, want context.Canceled", err)
	}
}

// BenchmarkPBO is the size: 102,400 combos x 16 blocks (12,870
// splits) of 10,980 bars. noise: every combo pure noise (the out-of-sample
// thresholds sit near the median, so pass 2 must look at every combo: the
// worst case); edge: one combo in ten with an edge (thresholds high, whole
// tiles counted at once). sharpe runs the Sharpe kernels, sortino the
// general ones. workers=N: N goroutines (GOMAXPROCS, and 1).
func BenchmarkPBO(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 102400
	noise := synthStats(rng, n, 16, 10980, nil, 0.001)
	mu := make([]float64, n)
	for c := 0; c < n; c += 10 {
		mu[c] = 0.00002
	}
	edge := synthStats(rng, n, 16, 10980, mu, 0.001)
	all := runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		name    string
		bs      *BlockStats
		metric  Metric
		workers int
	}{
		{"sharpe/noise", noise, MetricSharpe, all},
		{"sharpe/noise", noise, MetricSharpe, 1},
		{"sharpe/edge", edge, MetricSharpe, all},
		{"sortino/noise", noise, MetricSortino, all},
	} {
		b.Run(c.name+"/workers="+strconv.Itoa(c.workers), func(b *testing.B) {
			obj := Objective{Metric: c.metric, BarsPerYear: 525600}
			for b.Loop() {
				if _, err := PBO(context.Background(), c.bs, PBOOptions{Objective: obj, Workers: c.workers}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPBOMergeIgnoresIdleWorkers: pass 1's merge of the workers' bests.
// A worker that met no tile of a set holds its starting entry (key -Inf,
// fraction 0/1, no combo); it must lose to a real best whose Sharpe ratio
// is negative (fraction below 0/1), and to one whose key is -Inf. Before,
// it won those, a split chose combo -1 and PBO's pass 2 indexed the
// statistics at -1 (a panic on a 35-combo study, two tiles, two workers,
// whenever one worker took both tiles).
func TestPBOMergeIgnoresIdleWorkers(t *testing.T) {
	none := [4]float64{math.Inf(-1), 0, 1, -1}
	for _, c := range []struct {
		name   string
		sharpe bool
		real   [4]float64 // key, num, den, combo
	}{
		{"negative Sharpe", true, [4]float64{-0.5, -0.5, 1, 3}},
		{"positive Sharpe", true, [4]float64{0.5, 0.5, 1, 3}},
		{"a key of -Inf", false, [4]float64{math.Inf(-1), 0, 1, 3}},
		{"a finite key", false, [4]float64{-2, 0, 1, 3}},
	} {
		p := &pboPlan{sharpe: c.sharpe}
		if p.betterBest(none[0], none[1], none[2], int32(none[3]), c.real[0], c.real[1], c.real[2], int32(c.real[3])) {
			t.Errorf("%s: no combo beats combo %v", c.name, c.real[3])
		}
		if !p.betterBest(c.real[0], c.real[1], c.real[2], int32(c.real[3]), none[0], none[1], none[2], int32(none[3])) {
			t.Errorf("%s: combo %v does not beat no combo", c.name, c.real[3])
		}
	}
}
