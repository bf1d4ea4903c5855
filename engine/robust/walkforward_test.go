package robust

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestWalkForwardHandWorked: 3 combos x 4 blocks of one bar, objective the
// mean (maximised), returns in percent:
//
//	c0:  3 -1  2 -2
//	c1: -1  4 -3  5
//	c2:  1  1  1  1
//
// rolling:2: fold OOS 2, IS {0,1}: means 1, 1.5, 1 -> c1, OOS -3;
// fold OOS 3, IS {1,2}: 0.5, 0.5, 1 -> c2, OOS +1. Stitched: 0.97*1.01 - 1
// = -0.0203. anchored: OOS 1, IS {0}: 3, -1, 1 -> c0, OOS -1; OOS 2, IS
// {0,1}: c1 -> -3; OOS 3, IS {0,1,2}: 4/3, 0, 1 -> c0 -> -2.
func TestWalkForwardHandWorked(t *testing.T) {
	pct := [][]float64{{3, -1, 2, -2}, {-1, 4, -3, 5}, {1, 1, 1, 1}}
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
	obj := Objective{Metric: MetricMean, BarsPerYear: 4}
	for _, c := range []struct {
		spec   string
		combos []int
		oos    []float64
	}{
		{"rolling:2", []int{1, 2}, []float64{-0.03, 0.01}},
		{"anchored", []int{0, 1, 0}, []float64{-0.01, -0.03, -0.02}},
	} {
		spec, err := ParseWF(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		r, err := WalkForward(bs, spec, obj, nil)
		if err != nil {
			t.Fatal(err)
		}
		growth := 1.0
		for i, f := range r.Folds {
			if f.Combo != c.combos[i] || math.Abs(f.OOSReturn-c.oos[i]) > 1e-15 {
				t.Errorf("%s fold %d (%s): combo %d OOS %v, want %d %v", c.spec, i, f.FoldLabel(), f.Combo, f.OOSReturn, c.combos[i], c.oos[i])
			}
			growth *= 1 + c.oos[i]
		}
		if relErr(r.TotalReturn, growth-1) > 1e-12 {
			t.Errorf("%s: stitched return %v, want %v", c.spec, r.TotalReturn, growth-1)
		}
	}
}

// TestWalkForwardDirect: on random bars with random block edges, every fold
// chooses the combo a direct search over the in-sample bars chooses (the
// objective computed from the bars), and the stitched series' total
// return, Sharpe and CAGR equal those of the concatenated out-of-sample
// bars within 1e-12; the efficiency is CAGR over the pooled in-sample CAGR.
func TestWalkForwardDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const n, bars, s, bpy = 12, 3000, 10, 8760
	mu := make([]float64, n)
	for c := range mu {
		mu[c] = 0.001 * rng.NormFloat64()
	}
	rs := randomReturns(rng, n, bars, mu, 0.01)
	bounds := randomBounds(rng, bars, s)
	bs, err := FromReturns(rs, nil, bounds)
	if err != nil {
		t.Fatal(err)
	}
	sel := make([]bool, n)
	for c := range sel {
		sel[c] = c%3 != 0
	}
	blockBars := func(c, lo, hi int) []float64 { return rs[c][bounds[lo]:bounds[hi]] }
	for _, spec := range []WFSpec{{Rolling, 3}, {Anchored, 1}, {Anchored, 4}, {Rolling, 1}} {
		r, err := WalkForward(bs, spec, DefaultObjective(bpy), sel)
		if err != nil {
			t.Fatal(err)
		}
		if want := s - spec.InSample; len(r.Folds) != want {
			t.Fatalf("%s: %d folds, want %d", spec, len(r.Folds), want)
		}
		var stitched []float64
		var isLog float64
		var isBars int
		for i, f := range r.Folds {
			lo := 0
			if spec.Mode == Rolling {
				lo = f.OOSBlock - spec.InSample
			}
			best, at := math.Inf(-1), -1
			for c := 0; c < n; c++ {
				if !sel[c] {
					continue
				}
				if v := directMetrics(blockBars(c, lo, f.OOSBlock), nil, bpy).sharpe; v > best {
					best, at = v, c
				}
			}
			if f.Combo != at || f.OOSBlock != spec.InSample+i {
				t.Errorf("%s fold %d: combo %d OOS block %d, direct search %d", spec, i, f.Combo, f.OOSBlock, at)
			}
			stitched = append(stitched, blockBars(f.Combo, f.OOSBlock, f.OOSBlock+1)...)
			for _, x := range blockBars(f.Combo, lo, f.OOSBlock) {
				isLog += math.Log1p(x)
			}
			isBars += bounds[f.OOSBlock] - bounds[lo]
		}
		want := directMetrics(stitched, nil, bpy)
		isCAGR := math.Expm1(isLog * bpy / float64(isBars))
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"total return", r.TotalReturn, want.totalReturn}, {"sharpe", r.Sharpe, want.sharpe},
			{"cagr", r.CAGR, want.cagr}, {"IS cagr", r.ISCAGR, isCAGR},
		} {
			if relErr(c.got, c.want) > 1e-12 {
				t.Errorf("%s: %s %v, direct %v", spec, c.name, c.got, c.want)
			}
		}
		if r.ISCAGR > 0 && r.Efficiency != r.CAGR/r.ISCAGR || r.ISCAGR <= 0 && !math.IsNaN(r.Efficiency) {
			t.Errorf("%s: efficiency %v with CAGR %v, IS CAGR %v", spec, r.Efficiency, r.CAGR, r.ISCAGR)
		}
	}
}

// TestParseWF: the accepted forms and the typed errors.
func TestParseWF(t *testing.T) {
	for in, want := range map[string]WFSpec{"rolling:4": {Rolling, 4}, "anchored": {Anchored, 1}, "anchored:3": {Anchored, 3}} {
		got, err := ParseWF(in)
		if err != nil || got != want {
			t.Errorf("ParseWF(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := ParseWF(got.String()); back != got {
			t.Errorf("%v round-trips to %v", got, back)
		}
	}
	for _, in := range []string{"rolling", "rolling:0", "rolling:x", "expanding", ""} {
		if _, err := ParseWF(in); !errors.Is(err, ErrValue) {
			t.Errorf("ParseWF(%q): %v, want ErrValue", in, err)
		}
	}
	bs := synthStats(rand.New(rand.NewPCG(1, 1)), 4, 4, 10, nil, 0.01)
	if _, err := WalkForward(bs, WFSpec{Rolling, 4}, DefaultObjective(252), nil); !errors.Is(err, ErrBlocks) {
		t.Errorf("K = S: %v, want ErrBlocks", err)
	}
	if _, err := WalkForward(bs, WFSpec{Rolling, 2}, Objective{Metric: MetricMean}, nil); !errors.Is(err, ErrValue) {
		t.Errorf("no bars per year: %v, want ErrValue", err)
	}
	if _, err := WalkForward(bs, WFSpec{Rolling, 2}, DefaultObjective(252), make([]bool, 4)); !errors.Is(err, ErrNoSelectable) {
		t.Errorf("nothing selectable: %v, want ErrNoSelectable", err)
	}
}
