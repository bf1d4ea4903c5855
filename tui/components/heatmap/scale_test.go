package heatmap

import (
	"math"
	"slices"
	"testing"
)

// outlierMatrix is a 10 x 10 grid holding 1..99 and one outlier, 10000,
// in place of 100.
func outlierMatrix() []float64 {
	vals := make([]float64, 100)
	for i := range vals {
		vals[i] = float64(i + 1)
	}
	vals[99] = 10000
	return vals
}

// TestScale checks the edges and the number of values per level of each
// kind on the outlier matrix, with 4 levels, against figures worked by
// hand (type 7 quantiles: the p quantile of N sorted values is
// x[k] + f(x[k+1]-x[k]) with k+f = p(N-1), x indexed from 0):
//   - quantile: p = 1/4 gives k+f = 24.75, 25 + 0.75 = 25.75; p = 1/2,
//     49.5 -> 50.5; p = 3/4, 74.25 -> 75.25: 25 values a level;
//   - linear: steps of (10000-1)/4 = 2499.75 from 1: every value but the
//     outlier in level 0 (the defect of issue 15);
//   - clip 2-98%: p = 0.02 gives 1.98 -> 2 + 0.98 = 2.98, p = 0.98 gives
//     97.02 -> 98 + 0.02 = 98.02, steps of 95.04/4 = 23.76: 1..26, 27..50,
//     51..74 and 75..99 with the outlier.
func TestScale(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kind   ScaleKind
		edges  []float64
		counts []int
	}{
		{"quantile spreads the levels evenly", Quantile, []float64{1, 25.75, 50.5, 75.25, 10000}, []int{25, 25, 25, 25}},
		{"linear collapses them", Linear, []float64{1, 2500.75, 5000.5, 7500.25, 10000}, []int{99, 0, 0, 1}},
		{"clip fixes it", Clip, []float64{2.98, 26.74, 50.5, 74.26, 98.02}, []int{26, 24, 24, 26}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := outlierMatrix()
			s := NewScale(tc.kind, vals, 4)
			if len(s.Edges) != len(tc.edges) {
				t.Fatalf("edges %v, want %v", s.Edges, tc.edges)
			}
			for i := range tc.edges {
				if math.Abs(s.Edges[i]-tc.edges[i]) > 1e-9 {
					t.Fatalf("edges %v, want %v", s.Edges, tc.edges)
				}
			}
			counts := make([]int, s.Levels())
			for _, v := range vals {
				counts[s.Level(v)]++
			}
			if !slices.Equal(counts, tc.counts) {
				t.Errorf("values per level %v, want %v", counts, tc.counts)
			}
		})
	}
}

// TestScaleEdges: values at and beyond the edges, ties, one distinct
// value, and no finite value.
func TestScaleEdges(t *testing.T) {
	s := Scale{Kind: Linear, Edges: []float64{0, 1, 2, 3}}
	for _, tc := range []struct {
		v    float64
		want int
	}{{-5, 0}, {0, 0}, {0.999, 0}, {1, 1}, {2.5, 2}, {3, 2}, {50, 2}} {
		if got := s.Level(tc.v); got != tc.want {
			t.Errorf("Level(%v) = %d, want %d", tc.v, got, tc.want)
		}
	}
	// Ties: half the values are 0, so the 1/4 and 1/2 quantiles are 0 too
	// and every 0 takes the highest level whose lower edge is 0.
	tied := NewScale(Quantile, []float64{0, 0, 0, 0, 1, 2, 3, 4, math.NaN(), math.Inf(1)}, 4)
	if want := []float64{0, 0, 0.5, 2.25, 4}; !slices.Equal(tied.Edges, want) {
		t.Errorf("tied edges %v, want %v", tied.Edges, want)
	}
	if l := tied.Level(0); l != 1 {
		t.Errorf("tied Level(0) = %d, want 1", l)
	}
	one := NewScale(Quantile, []float64{7, 7, 7}, 9)
	if l := one.Level(7); l != 4 {
		t.Errorf("one value: level %d, want the middle 4", l)
	}
	none := NewScale(Clip, []float64{math.NaN()}, 3)
	if !slices.Equal(none.Edges, []float64{0, 0, 0, 0}) || none.Level(0) != 1 {
		t.Errorf("no finite value: edges %v, level %d", none.Edges, none.Level(0))
	}
}
