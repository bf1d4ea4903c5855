package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"sweepbench/colorscale"
)

// Levels is the number of colours of a heatmap's quantile scale.
const Levels = 8

// Scale maps a metric's values to colour levels: the workbench heatmap's
// scale (colorscale, shared with tui/components/heatmap), so that a
// figure colours a grid as the workbench does.
type Scale = colorscale.Scale

// QuantileScale is the quantile scale of vals (NaN and ±Inf skipped) with
// n >= 1 levels: each level holds the same share of the values by rank, so
// one outlier takes one colour, not the whole range (colorscale.Quantile:
// type-7 quantiles, R's and NumPy's default).
func QuantileScale(vals []float64, n int) Scale { return colorscale.New(colorscale.Quantile, vals, n) }

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

// divScale is a diverging scale centred on 0 for a signed difference
// (fp32 - fp64): 0 white, negative blue, positive red, and the |values|
// in up to four shades a side whose upper edges (edges, increasing, the
// last the largest |value|) are the quartiles of the non-zero |values|,
// so that each shade holds about a quarter of the cells that differ,
// however spread their sizes (dPnL's 0.01 pp beside one of 0.3 pp no
// longer share one shade). An integer difference (dn) has integer
// edges, one a step when its largest |value| is 4 or less.
type divScale struct {
	edges     []float64
	quartiles bool // edges by quartile (else one integer a step)
}

// newDivScale is the divScale of vals (NaN skipped; ±Inf take the
// outermost shades and set no edge).
func newDivScale(vals []float64, integer bool) divScale {
	var xs []float64
	for _, v := range vals {
		if a := math.Abs(v); a > 0 && !math.IsInf(a, 0) && !math.IsNaN(a) {
			xs = append(xs, a)
		}
	}
	if len(xs) == 0 {
		return divScale{}
	}
	slices.Sort(xs)
	mid := len(diverging) / 2
	var edges []float64
	if integer && xs[len(xs)-1] <= float64(mid) {
		for k := 1; k <= int(math.Ceil(xs[len(xs)-1])); k++ {
			edges = append(edges, float64(k))
		}
	} else {
		for _, e := range colorscale.Of(colorscale.Quantile, xs, mid).Edges[1:] {
			if integer {
				e = math.Ceil(e)
			}
			if len(edges) == 0 || e > edges[len(edges)-1] {
				edges = append(edges, e)
			}
		}
	}
	return divScale{edges, !(integer && xs[len(xs)-1] <= float64(mid))}
}

// Words is the scale as a caption says it.
func (d divScale) Words() string {
	if len(d.edges) == 0 {
		return "white: no difference (every value 0)"
	}
	w := "white is exactly 0 (no difference), blue fp32 below fp64, red above, darker for a larger |value|"
	if d.quartiles {
		return w + fmt.Sprintf(" (%d shades a side, their edges the quartiles of the non-zero |values| up to the largest, %s, so that each shade holds about a quarter of the cells that differ; the key gives each shade's largest |value|)", len(d.edges), g3(d.Lim()))
	}
	return w + fmt.Sprintf(" (one shade a step of 1, up to %s)", g3(d.Lim()))
}

// Lim is the scale's largest |value| (0: no value differs).
func (d divScale) Lim() float64 {
	if len(d.edges) == 0 {
		return 0
	}
	return d.edges[len(d.edges)-1]
}

// shade is the colour index (into diverging) of the k-th (0-based) of
// the scale's len(edges) shades a side, positive side; the outermost
// always the darkest.
func (d divScale) shade(k int) int {
	mid, m := len(diverging)/2, len(d.edges)
	return mid + (k+1)*mid/m
}

// Level is v's index into diverging: the middle (white) for 0 exactly,
// else the first shade whose edge is at or above |v| (beyond the last,
// the last), on v's side.
func (d divScale) Level(v float64) int {
	mid := len(diverging) / 2
	if v == 0 || math.IsNaN(v) || len(d.edges) == 0 {
		return mid
	}
	k, _ := slices.BinarySearch(d.edges, math.Abs(v))
	k = min(k, len(d.edges)-1)
	if v < 0 {
		return 2*mid - d.shade(k)
	}
	return d.shade(k)
}

// Colour is v's colour.
func (d divScale) Colour(v float64) color.Color { return diverging[d.Level(v)] }
