package common

import (
	"fmt"
	"strings"

	"sweepbench/engine"
)

// The grid's parameters as the workbench shows them: hull's hma and hma3,
// or a strategy family's (engine.Grid.Columns, engine.Grid.Point), so that
// every table and line reads a combo's parameters one way.

// GridShape is the grid's size per axis: "3 x 3" (hma x hma3), or a
// family's axes' ("11 x 7 x 3").
func GridShape(g engine.Grid) string {
	if g.Strategy == nil {
		return fmt.Sprintf("%d x %d", g.HMA.Len(), g.HMA3.Len())
	}
	var parts []string
	for _, ax := range g.Strategy.Axes() {
		parts = append(parts, fmt.Sprint(len(ax.Values)))
	}
	return strings.Join(parts, " x ")
}

// ParamCells are combo i's values of g.Columns(), as text: "20", "1.75",
// a leg's kind ("ema") then its length ("-" for a price leg).
func ParamCells(g engine.Grid, i int) []string {
	if g.Strategy == nil {
		c := g.At(i)
		return []string{fmt.Sprint(c.HMA), fmt.Sprint(c.HMA3)}
	}
	var out []string
	for _, p := range g.Strategy.Point(i) {
		if p.Kind != "" {
			out = append(out, p.Kind)
			if p.Kind == "price" {
				out = append(out, "-")
				continue
			}
		}
		out = append(out, p.Text)
	}
	return out
}

// ComboName names combo i in a line: "hma 20 x hma3 30" (as the workbench
// always wrote hull's), or the family's label ("length 20, entry 2, exit
// 0.5").
func ComboName(g engine.Grid, i int) string {
	if g.Strategy == nil {
		c := g.At(i)
		return fmt.Sprintf("hma %d x hma3 %d", c.HMA, c.HMA3)
	}
	if i < 0 || i >= g.Len() {
		return "-"
	}
	return g.Label(i)
}

// ParamOf is combo i's value of parameter column col of g: its text
// ("20", "1.75", a leg's kind "ema", "-" for a price leg's length) and,
// when it is a number, its value (num false for a kind or a price leg);
// ok false when col is not one of g's columns.
func ParamOf(g engine.Grid, i int, col string) (text string, v float64, num, ok bool) {
	if g.Strategy == nil {
		c := g.At(i)
		switch col {
		case engine.FieldHMA:
			return fmt.Sprint(c.HMA), float64(c.HMA), true, true
		case engine.FieldHMA3:
			return fmt.Sprint(c.HMA3), float64(c.HMA3), true, true
		}
		return "", 0, false, false
	}
	if i < 0 || i >= g.Len() {
		return "", 0, false, false
	}
	for _, p := range g.Strategy.Point(i) {
		switch {
		case p.Kind != "" && col == p.Name+"_kind":
			return p.Kind, 0, false, true
		case col == p.Name && p.Kind == "price":
			return "-", 0, false, true
		case col == p.Name:
			return p.Text, p.Value, true, true
		}
	}
	return "", 0, false, false
}
