package heatmap

import "sweepbench/colorscale"

// The heatmap's scales are colorscale's (shared with the report's
// figures): the names the pane and its tests use.
type (
	// ScaleKind is how the heatmap maps a metric's values to its levels.
	ScaleKind = colorscale.Kind
	// Scale maps values to levels (colorscale.Scale).
	Scale = colorscale.Scale
)

// The scales the scale key cycles through (colorscale.Kind).
const (
	Quantile = colorscale.Quantile
	Clip     = colorscale.Clip
	Linear   = colorscale.Linear
)

// The percentiles Clip keeps, in percent.
const ClipLow, ClipHigh = colorscale.ClipLow, colorscale.ClipHigh

// NewScale is colorscale.New.
func NewScale(kind ScaleKind, vals []float64, n int) Scale { return colorscale.New(kind, vals, n) }

func sortedFinite(vals []float64) []float64 { return colorscale.SortedFinite(vals) }

func scaleOf(kind ScaleKind, xs []float64, n int) Scale { return colorscale.Of(kind, xs, n) }
