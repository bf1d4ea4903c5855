package sessions

import (
	"encoding/json"
	"fmt"
	"maps"

	"sweepbench/engine"
)

// Strategy studies (SPEC Part 2) in the store (schema v14): a study's
// family, its grid's parameters as the grid writes them
// (engine.Strategy.Texts, JSON) and the crossover restriction are saved
// with it; reading it back builds the grid again through
// engine.NewStrategy (a program must link package strategy). Results,
// parity rows and flips are by combo index: a combo's parameters and
// label come from the rebuilt grid (Grid.Point, Grid.Label), never from
// the row.

// strategyColumns are what studies holds of st's family: the family
// ("" for hull), its parameters as JSON ("" for hull) and the restriction.
func strategyColumns(g engine.Grid) (family, params string, fastBelowSlow bool, err error) {
	if g.Strategy == nil {
		return "", "", false, nil
	}
	b, err := json.Marshal(g.Strategy.Texts())
	if err != nil {
		return "", "", false, err
	}
	return g.Strategy.Family(), string(b), g.Strategy.FastBelowSlow(), nil
}

// strategyGrid builds again the grid of a study saved with family (not
// "") and params (strategyColumns).
func strategyGrid(family, params string, fastBelowSlow bool) (engine.Grid, map[string]string, error) {
	var texts map[string]string
	if err := json.Unmarshal([]byte(params), &texts); err != nil {
		return engine.Grid{}, nil, fmt.Errorf("its %s parameters %q cannot be read: %w", family, params, err)
	}
	if engine.NewStrategy == nil {
		return engine.Grid{}, texts, fmt.Errorf("it is a %s study and %w", family, engine.ErrNoStrategies)
	}
	s, err := engine.NewStrategy(family, texts, fastBelowSlow)
	if err != nil {
		return engine.Grid{}, texts, fmt.Errorf("its %s grid cannot be built again: %w", family, err)
	}
	return engine.Grid{Strategy: s}, texts, nil
}

// sameGrid reports whether a and b are one grid: hull's same ranges, or
// one family's same parameters and restriction (two builds of one
// strategy grid are two values: == compares them by identity).
func sameGrid(a, b engine.Grid) bool {
	if a.Strategy == nil || b.Strategy == nil {
		return a.Strategy == nil && b.Strategy == nil && a.HMA == b.HMA && a.HMA3 == b.HMA3
	}
	return a.Strategy.Family() == b.Strategy.Family() && a.Strategy.FastBelowSlow() == b.Strategy.FastBelowSlow() &&
		maps.Equal(a.Strategy.Texts(), b.Strategy.Texts())
}

// GridName names a session's grid for a list or a message: hull's "hma
// 20:200:20 x hma3 30:240:30", a family's "cross fast ema:5:50:5 x slow
// sma:20:200:10".
func GridName(g engine.Grid) string {
	if g.Strategy == nil {
		return g.Text()
	}
	return g.Family() + " " + g.Text()
}

// gridMismatch says why two sessions' grids are not one: different
// families, or one family's different parameters.
func gridMismatch(a, b *Session) string {
	if fa, fb := a.Grid.Family(), b.Grid.Family(); fa != fb {
		return fmt.Sprintf("sessions %d and %d are studies of different strategy families (%s; %s): a diff compares the same combos of one family",
			a.ID, b.ID, GridName(a.Grid), GridName(b.Grid))
	}
	if a.Grid.Strategy == nil {
		return fmt.Sprintf("sessions %d and %d swept different grids (hma %s x hma3 %s; hma %s x hma3 %s): a diff compares the same combos",
			a.ID, b.ID, a.Grid.HMA, a.Grid.HMA3, b.Grid.HMA, b.Grid.HMA3)
	}
	return fmt.Sprintf("sessions %d and %d swept different %s grids (%s; %s): a diff compares the same combos",
		a.ID, b.ID, a.Grid.Family(), a.Grid.Text(), b.Grid.Text())
}

// paramCells are combo i's parameters in the order of g.Columns(): a
// leg's kind then its length, every other parameter its value (hull: hma,
// hma3).
func paramCells(g engine.Grid, i int) []string {
	var out []string
	for _, p := range g.Point(i) {
		if p.Kind != "" {
			out = append(out, p.Kind)
		}
		out = append(out, p.Text)
	}
	return out
}

// labeller names the combos of g for its parity rows and flips (the
// store keeps their index, not their label), as compareStrategy names
// them: Grid.Label for a strategy grid, "" for hull (whose rows carry
// their lengths) and for an index outside the grid.
func labeller(g engine.Grid) func(int) string {
	if g.Strategy == nil {
		return func(int) string { return "" }
	}
	n := g.Len()
	return func(i int) string {
		if i < 0 || i >= n {
			return ""
		}
		return g.Label(i)
	}
}
