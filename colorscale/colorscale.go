// Package colorscale maps a metric's values to the levels of a heatmap
// (glyphs in the workbench, colours in the report's figures): by quantile
// (rank), by percentiles clipped, or linearly. One definition for the
// workbench's heatmap (tui/components/heatmap) and the report's figures
// (report), so that both colour a grid alike.
package colorscale

import (
	"math"
	"slices"
	"sort"
)

// Kind is how a heatmap maps a metric's values to its levels
// (glyphs or colours).
type Kind int

const (
	// Quantile gives each level the same share of the values (by rank),
	// so one outlier takes one level, not the whole range.
	Quantile Kind = iota
	// Clip spreads the levels linearly between the ClipLow and ClipHigh
	// percentiles; values beyond them take the first or last level.
	Clip
	// Linear spreads the levels linearly between the least and the
	// largest value (the scale before issue 15).
	Linear
	nKinds
)

// The percentiles Clip keeps, in percent.
const ClipLow, ClipHigh = 2, 98

// String names the scale for the legend.
func (k Kind) String() string {
	switch k {
	case Clip:
		return "clip 2-98%"
	case Linear:
		return "linear"
	}
	return "quantile"
}

// Next is the scale the scale key cycles to.
func (k Kind) Next() Kind { return (k + 1) % nKinds }

// Scale maps values to n levels: level i holds the values v with
// Edges[i] <= v < Edges[i+1] (the last level also its top edge); values
// below Edges[0] take level 0, values above Edges[n] level n-1. Edges has
// n+1 elements, non-decreasing.
type Scale struct {
	Kind  Kind
	Edges []float64
}

// New is the scale of kind over vals (the finite values the heatmap
// draws; NaN and ±Inf are skipped) with n >= 1 levels. Quantile's edge i
// is the i/n quantile of vals, Clip's and Linear's are n equal steps
// between the ClipLow and ClipHigh percentiles (Clip) or the least and
// largest value (Linear). Quantiles and percentiles interpolate linearly
// between order statistics (Hyndman and Fan's type 7, R's and NumPy's
// default): the p quantile of x sorted, N values, is x[k] + f(x[k+1]-x[k])
// with k+f = p(N-1). With no finite value every edge is 0.
func New(kind Kind, vals []float64, n int) Scale {
	return Of(kind, SortedFinite(vals), n)
}

// SortedFinite is the finite values of vals, sorted (a new slice).
func SortedFinite(vals []float64) []float64 {
	xs := make([]float64, 0, len(vals))
	for _, v := range vals {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	slices.Sort(xs)
	return xs
}

// Of is New over xs, finite and sorted (SortedFinite: a heatmap that
// draws one metric with several scales sorts its values once).
func Of(kind Kind, xs []float64, n int) Scale {
	n = max(n, 1)
	edges := make([]float64, n+1)
	if len(xs) == 0 {
		return Scale{kind, edges}
	}
	switch kind {
	case Quantile:
		for i := range edges {
			edges[i] = quantile(xs, float64(i)/float64(n))
		}
	default:
		lo, hi := xs[0], xs[len(xs)-1]
		if kind == Clip {
			lo, hi = quantile(xs, ClipLow/100.0), quantile(xs, ClipHigh/100.0)
		}
		for i := range edges {
			edges[i] = lo + (hi-lo)*float64(i)/float64(n)
		}
		edges[n] = hi // exact, whatever the rounding of the steps
	}
	return Scale{kind, edges}
}

// quantile is the p quantile (0 <= p <= 1) of xs, sorted and not empty,
// interpolated linearly between order statistics (type 7).
func quantile(xs []float64, p float64) float64 {
	h := p * float64(len(xs)-1)
	k := int(math.Floor(h))
	if k >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[k] + (h-float64(k))*(xs[k+1]-xs[k])
}

// Levels is the number of levels.
func (s Scale) Levels() int { return len(s.Edges) - 1 }

// Level is v's level, 0..Levels()-1: the number of inner edges
// (Edges[1..n-1]) at or below v. A scale whose edges are all equal (one
// distinct value) puts every value in the middle level.
func (s Scale) Level(v float64) int {
	n := s.Levels()
	if n <= 1 {
		return 0
	}
	if s.Edges[0] == s.Edges[n] {
		return (n - 1) / 2
	}
	inner := s.Edges[1:n]
	return sort.Search(len(inner), func(i int) bool { return inner[i] > v })
}
