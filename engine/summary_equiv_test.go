package engine_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"sweepbench/engine"
)

// tieValue draws a metric value from a few that tie often (zeros of both
// signs, infinities, NaN, small integers and halves) or, one time in
// three, a full-width double.
func tieValue(rng *rand.Rand) float64 {
	switch rng.IntN(12) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return math.Copysign(0, -1)
	case 4:
		return 0
	case 5, 6, 7:
		return float64(rng.IntN(7)-3) / 2
	}
	return rng.NormFloat64()
}

// tieResults are every combo of g with metrics of tieValue (the counts
// small integers, now and then a negative trade count, which no list
// takes), shuffled and cut into chunks of random sizes: the order a
// study's lanes may deliver them in.
func tieResults(rng *rand.Rand, g engine.Grid) (all []engine.ComboResult, chunks [][]engine.ComboResult) {
	all = make([]engine.ComboResult, g.Len())
	for i := range all {
		var m engine.Metrics
		for _, name := range engine.MetricNames {
			v := tieValue(rng)
			if engine.IsCount(name) {
				v = float64(rng.IntN(4))
			}
			m.SetValue(name, v)
		}
		if rng.IntN(50) == 0 {
			m.TotalTrades = -1
		}
		all[i] = engine.ComboResult{Index: i, Combo: g.At(i), Metrics: m}
	}
	order := rng.Perm(len(all))
	for lo := 0; lo < len(order); {
		hi := min(lo+1+rng.IntN(300), len(order))
		c := make([]engine.ComboResult, 0, hi-lo)
		for _, i := range order[lo:hi] {
			c = append(c, all[i])
		}
		chunks = append(chunks, c)
		lo = hi
	}
	return all, chunks
}

// plainTop is a straightforward top list: every selectable result sorted
// by o.Ranks (the order the engine promises), the first k.
func plainTop(rs []engine.ComboResult, o engine.Objective, k int) []engine.ComboResult {
	var out []engine.ComboResult
	for _, r := range rs {
		if o.Selectable(&r) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return o.Ranks(&out[a], &out[b]) })
	return out[:min(k, len(out))]
}

// sameBits: a == b bit for bit (NaN equal to NaN: its payload is not
// shown).
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// TestSummaryAgainstPlain: the summary (the top lists' one-comparison
// rejection, the heatmaps' accumulators) against a straightforward
// recomputation over results that tie, hold NaN, both zeros and both
// infinities, arrive shuffled in chunks, and a few of which have a
// negative trade count: every list combo for combo (NaN last, ties to the
// lower index), every cell's max, min, count and mean bit for bit (the
// mean as the sum in arrival order over the count; the max of -0 and +0
// is +0), reduced by blocks and at full resolution; the study's best
// under constraints too.
func TestSummaryAgainstPlain(t *testing.T) {
	g := engine.Grid{HMA: engine.Range{Start: 2, Stop: 38, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 58, Step: 3}} // 37 x 18
	obj := engine.Objective{Metric: "calmar", MinTrades: 1, MaxDrawdown: 1}
	for seed := uint64(1); seed <= 6; seed++ {
		for _, opt := range []engine.SummaryOptions{{K: 5, MaxRows: 8, MaxCols: 5}, {K: 1, MaxRows: 64, MaxCols: 64}, {K: 2000, MaxRows: 3, MaxCols: 2}} {
			t.Run(fmt.Sprintf("seed%d/K%d", seed, opt.K), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 29))
				all, chunks := tieResults(rng, g)
				sm := engine.NewSummariser(g, engine.FP64, obj, opt, nil)
				var arrived []engine.ComboResult
				for _, c := range chunks {
					sm.Add(c)
					arrived = append(arrived, c...)
				}
				run := &engine.Run{Grid: g, Precision: engine.FP64}
				sm.Keep(run)
				s := run.Summary
				checkPlainSummary(t, s, all, arrived, opt)
				if want := plainTop(all, obj, opt.K); !sameList(s.Best, want) {
					t.Errorf("best by %s: %v, want %v", obj.Label(), indicesOf(s.Best), indicesOf(want))
				}
			})
		}
	}
}

func checkPlainSummary(t *testing.T, s *engine.Summary, all, arrived []engine.ComboResult, opt engine.SummaryOptions) {
	t.Helper()
	if s.Count != len(all) {
		t.Errorf("count %d, want %d", s.Count, len(all))
	}
	lists := 0
	for _, name := range engine.MetricNames {
		sides := map[engine.Sense][]bool{engine.HigherIsBetter: {false}, engine.LowerIsBetter: {true}, engine.EitherSide: {false, true}}[engine.MetricSense(name)]
		for _, minimise := range sides {
			lists++
			got, ok := s.Top(name, minimise)
			want := plainTop(all, engine.Objective{Metric: name, Minimise: minimise}, opt.K)
			if !ok || !sameList(got, want) {
				t.Errorf("%s (minimise %v): %v, want %v", name, minimise, indicesOf(got), indicesOf(want))
			}
		}
		h := s.Heatmap(name)
		type acc struct {
			max, min, sum float64
			n             int
		}
		cells := map[[2]int]*acc{}
		for i := range arrived {
			v, _ := arrived[i].Metrics.Value(name)
			if math.IsNaN(v) {
				continue
			}
			r, c := h.CellOf(arrived[i].Index)
			a := cells[[2]int{r, c}]
			if a == nil {
				cells[[2]int{r, c}] = &acc{max: v, min: v, sum: v, n: 1}
				continue
			}
			a.max, a.min, a.sum, a.n = max(a.max, v), min(a.min, v), a.sum+v, a.n+1
		}
		for r := 0; r < h.Rows; r++ {
			for c := 0; c < h.Cols; c++ {
				got, a := h.Cell(r, c), cells[[2]int{r, c}]
				if a == nil {
					if got.N != 0 || !math.IsNaN(got.Max) || !math.IsNaN(got.Min) || !math.IsNaN(got.Mean) {
						t.Errorf("%s cell (%d, %d): %+v, want empty", name, r, c, got)
					}
					continue
				}
				if got.N != a.n || !sameBits(got.Max, a.max) || !sameBits(got.Min, a.min) || !sameBits(got.Mean, a.sum/float64(a.n)) {
					t.Errorf("%s cell (%d, %d): %+v, want max %v min %v mean %v n %d", name, r, c, got, a.max, a.min, a.sum/float64(a.n), a.n)
				}
			}
		}
	}
	if lists != len(s.Lists) {
		t.Errorf("%d lists, want %d", len(s.Lists), lists)
	}
}

// sameList: the same combos in the same order, each result bit for bit.
func sameList(a, b []engine.ComboResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameResult(a[i], b[i]) {
			return false
		}
	}
	return true
}

func indicesOf(rs []engine.ComboResult) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = r.Index
	}
	return out
}

// TestTopAgainstPlain: Top (its one-comparison rejection once full)
// against sorting everything, for every metric on both sides and under
// constraints, over the tied, NaN-holding, shuffled results.
func TestTopAgainstPlain(t *testing.T) {
	g := engine.Grid{HMA: engine.Range{Start: 2, Stop: 30, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 40, Step: 2}}
	rng := rand.New(rand.NewPCG(7, 29))
	all, chunks := tieResults(rng, g)
	for _, name := range engine.MetricNames {
		for _, o := range []engine.Objective{{Metric: name}, {Metric: name, Minimise: true}, {Metric: name, MinTrades: 2, MaxDrawdown: 0.5}} {
			for _, k := range []int{1, 3, 40} {
				top := engine.NewTop(o, k)
				for _, c := range chunks {
					for i := range c {
						top.Offer(&c[i])
					}
				}
				if got, want := top.Sorted(), plainTop(all, o, k); !sameList(got, want) {
					t.Errorf("%+v k %d: %v, want %v", o, k, indicesOf(got), indicesOf(want))
				}
			}
		}
	}
}
