package report

import (
	"html"
	"image/color"
	"math"

	"gonum.org/v1/plot/vg/draw"
)

type colorT = color.Color

var (
	crossGlyph = draw.CrossGlyph{}
	ringGlyph  = draw.RingGlyph{}
)

func abs(v float64) float64 { return math.Abs(v) }

func isInf(v float64) bool { return math.IsInf(v, 0) }

// htmlAttr escapes s for an HTML attribute value in double quotes.
func htmlAttr(s string) string { return html.EscapeString(s) }
