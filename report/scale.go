package report

import (
	"image/color"
	"math"

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
