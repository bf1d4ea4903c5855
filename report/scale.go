package report

import (
	"image/color"
	"math"
	"slices"
	"sort"
)

// Levels is the number of colours of a heatmap's quantile scale.
const Levels = 8

// Scale maps a metric's values to Levels colour levels by quantile: level
// i holds the values v with Edges[i] <= v < Edges[i+1] (values below
// Edges[0] take level 0, above Edges[n] level n-1), and each level holds
// the same share of the values by rank, so one outlier takes one colour,
// not the whole range. It is the workbench heatmap's default scale
// (tui/components/heatmap, "quantile"), defined the same way: edge i is
// the i/n quantile of the finite values, interpolated linearly between
// order statistics (Hyndman and Fan's type 7, R's and NumPy's default).
type Scale struct {
	Edges []float64 // n+1, non-decreasing; all 0 with no finite value
}

// QuantileScale is the scale of vals (NaN and ±Inf skipped) with n >= 1
// levels.
func QuantileScale(vals []float64, n int) Scale {
	n = max(n, 1)
	xs := make([]float64, 0, len(vals))
	for _, v := range vals {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	slices.Sort(xs)
	edges := make([]float64, n+1)
	if len(xs) > 0 {
		for i := range edges {
			edges[i] = quantile(xs, float64(i)/float64(n))
		}
	}
	return Scale{edges}
}

// quantile is the p quantile (0 <= p <= 1) of xs, sorted and not empty
// (type 7: x[k] + f(x[k+1]-x[k]) with k+f = p(N-1)).
func quantile(xs []float64, p float64) float64 {
	h := p * float64(len(xs)-1)
	k := int(math.Floor(h))
	if k >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[k] + (h-float64(k))*(xs[k+1]-xs[k])
}

// Levels is the scale's number of levels.
func (s Scale) Levels() int { return len(s.Edges) - 1 }

// Level is v's level, 0..Levels()-1: the number of inner edges at or
// below v. A scale of one distinct value puts every value in the middle.
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

// sequential is the heatmaps' colours, low to high: viridis at Levels
// even steps (perceptually uniform, readable in grey and by the
// colour-blind, prints).
var sequential = [Levels]color.RGBA{
	{0x44, 0x01, 0x54, 0xff}, {0x46, 0x33, 0x7e, 0xff}, {0x36, 0x5c, 0x8d, 0xff}, {0x27, 0x7f, 0x8e, 0xff},
	{0x1f, 0xa1, 0x87, 0xff}, {0x4a, 0xc1, 0x6d, 0xff}, {0x9f, 0xda, 0x3a, 0xff}, {0xfd, 0xe7, 0x25, 0xff},
}

// diverging is the colours of a signed difference, most negative to most
// positive, white at 0 (ColorBrewer RdBu, 9 classes, reversed: blue low).
var diverging = [9]color.RGBA{
	{0x21, 0x66, 0xac, 0xff}, {0x43, 0x93, 0xc3, 0xff}, {0x92, 0xc5, 0xde, 0xff}, {0xd1, 0xe5, 0xf0, 0xff},
	{0xf7, 0xf7, 0xf7, 0xff}, {0xfd, 0xdb, 0xc7, 0xff}, {0xf4, 0xa5, 0x82, 0xff}, {0xd6, 0x60, 0x4d, 0xff},
	{0xb2, 0x18, 0x2b, 0xff},
}

// Colours shared by the figures.
var (
	greyOut  = color.RGBA{0xbd, 0xbd, 0xbd, 0xff} // constrained-out cells
	missing  = color.RGBA{0xff, 0xff, 0xff, 0xff} // cells without a value (NaN, not computed)
	colFP64  = color.RGBA{0x1f, 0x4e, 0x9a, 0xff}
	colFP32  = color.RGBA{0xd9, 0x5f, 0x02, 0xff}
	colOther = color.RGBA{0x55, 0x55, 0x55, 0xff}
	colGood  = color.RGBA{0x1b, 0x9e, 0x77, 0xff}
	colBad   = color.RGBA{0xc0, 0x1d, 0x2b, 0xff}
	colMark  = color.RGBA{0xe7, 0x29, 0x8a, 0xff}
)

// divergingLevel maps v in [-lim, lim] to a level of diverging: 0 (and
// |v| below lim/1e12) to the middle, the sign to the side, |v|/lim in
// four even steps.
func divergingLevel(v, lim float64) int {
	mid := len(diverging) / 2
	if lim <= 0 || math.Abs(v) <= lim*1e-12 {
		return mid
	}
	k := int(math.Ceil(math.Abs(v) / lim * float64(mid)))
	k = min(max(k, 1), mid)
	if v < 0 {
		return mid - k
	}
	return mid + k
}
