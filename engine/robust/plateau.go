package robust

import (
	"math"

	"sweepbench/engine"
)

// DefaultNeighbourhood is the plateau's window: 3 x 3 combos.
const DefaultNeighbourhood = 3

// PlateauResult is the neighbourhood stability of a grid's objective.
type PlateauResult struct {
	K int // the window is K x K combos
	// Score is, per combo (engine.Grid order), the mean of the objective
	// values in its window: rows (HMA lengths) and columns (HMA3 lengths)
	// within (K-1)/2 grid steps of it. The window is clipped at the grid's
	// edges (cells outside the grid do not exist and are not counted: an
	// edge combo of a 3 x 3 window averages 6 values, a corner one 4).
	// Every combo in the window counts, selectable or not: the plateau is
	// about how the objective varies around a parameter set.
	//
	// A strategy family's grid (engine.Grid.Strategy) has N axes: a combo's
	// window is the combos within (K-1)/2 steps of it on every axis
	// (Strategy.Coords, Strategy.IndexOf), K^N cells clipped at the edges
	// and, under --fast-below-slow, at the pairs the grid drops: whichever
	// exist count.
	Score []float64
	// Best is the selectable combo with the best Score (the plateau best);
	// RawBest the selectable combo with the best value (the raw best).
	// Ties: the lowest index; NaN never wins.
	Best, RawBest              int
	BestScore, BestValue       float64 // Best's score and its own value
	RawBestValue, RawBestScore float64 // RawBest's value and its score
}

// ObjectiveValues is obj's value for every combo of bs over the blocks of
// m (AllBlocks(bs.Blocks): the whole sample), in obj's units. Errors: bs
// invalid (Validate), ErrBlocks for a mask outside bs's blocks, the
// objective's errors.
func ObjectiveValues(bs *BlockStats, obj Objective, m Mask) ([]float64, error) {
	if err := bs.Validate(); err != nil {
		return nil, err
	}
	if err := bs.checkMask("blocks", m); err != nil {
		return nil, err
	}
	if err := obj.validate(); err != nil {
		return nil, err
	}
	out := make([]float64, bs.Combos)
	for c := range out {
		out[c] = obj.Value(bs.Union(c, m))
	}
	return out, nil
}

// Plateau scores every combo of grid by the mean of values (one per combo,
// engine.Grid order: any metric, a non-decomposable one such as
// max_drawdown included, e.g. from ObjectiveValues or the study's Metrics)
// over its k x k neighbourhood (see PlateauResult.Score), and finds the
// best combo by that score beside the best by the raw value; minimise says
// which way is better. Non-finite values propagate into the scores around
// them (an +Inf Sortino gives +Inf scores, +Inf beside -Inf gives NaN).
//
// Errors (*InputError): ErrEmpty for an empty grid; ErrLength when values
// or selectable (nil: all) do not hold one entry per combo; ErrValue for k
// even or < 1; ErrNoSelectable when no selectable combo has a non-NaN
// score.
func Plateau(values []float64, grid engine.Grid, k int, minimise bool, selectable []bool) (*PlateauResult, error) {
	if grid.Strategy != nil {
		return plateauAxes(values, grid.Strategy, k, minimise, selectable)
	}
	rows, cols := grid.HMA.Len(), grid.HMA3.Len()
	if rows < 1 || cols < 1 {
		return nil, inputErr(ErrEmpty, "grid", "grid %s x %s has no combos", grid.HMA, grid.HMA3)
	}
	if len(values) != rows*cols {
		return nil, inputErr(ErrLength, "values", "%d values for a grid of %d x %d = %d combos", len(values), rows, cols, rows*cols)
	}
	if k < 1 || k%2 == 0 {
		return nil, inputErr(ErrValue, "neighbourhood", "%d: the window must be odd (3 for 3 x 3) so that a combo sits at its centre", k)
	}
	if _, err := countSelectable(selectable, rows*cols); err != nil {
		return nil, err
	}
	h := (k - 1) / 2
	r := &PlateauResult{K: k, Score: make([]float64, len(values)), Best: -1, RawBest: -1}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			var sum float64
			var cnt int
			for a := max(0, i-h); a <= min(rows-1, i+h); a++ {
				for b := max(0, j-h); b <= min(cols-1, j+h); b++ {
					sum += values[grid.Index(a, b)]
					cnt++
				}
			}
			r.Score[grid.Index(i, j)] = sum / float64(cnt)
		}
	}
	return r.best(values, minimise, selectable)
}

// plateauAxes is Plateau over a strategy grid of N axes: each combo's
// window the combos within (k-1)/2 steps of it on every axis that the
// grid holds (IndexOf >= 0).
func plateauAxes(values []float64, st engine.Strategy, k int, minimise bool, selectable []bool) (*PlateauResult, error) {
	n := st.Len()
	if n < 1 {
		return nil, inputErr(ErrEmpty, "grid", "grid %s has no combos", st)
	}
	if len(values) != n {
		return nil, inputErr(ErrLength, "values", "%d values for a grid of %d combos", len(values), n)
	}
	if k < 1 || k%2 == 0 {
		return nil, inputErr(ErrValue, "neighbourhood", "%d: the window must be odd (3 for 3 x 3) so that a combo sits at its centre", k)
	}
	if _, err := countSelectable(selectable, n); err != nil {
		return nil, err
	}
	axes := st.Axes()
	size := make([]int, len(axes))
	for a, ax := range axes {
		size[a] = len(ax.Values)
	}
	h := (k - 1) / 2
	r := &PlateauResult{K: k, Score: make([]float64, n), Best: -1, RawBest: -1}
	lo, hi, at := make([]int, len(axes)), make([]int, len(axes)), make([]int, len(axes))
	for c := 0; c < n; c++ {
		co := st.Coords(c)
		for a := range axes {
			lo[a], hi[a] = max(0, co[a]-h), min(size[a]-1, co[a]+h)
		}
		copy(at, lo)
		var sum float64
		var cnt int
		for {
			if i := st.IndexOf(at); i >= 0 {
				sum += values[i]
				cnt++
			}
			// The next cell of the window, the last axis fastest.
			a := len(at) - 1
			for ; a >= 0; a-- {
				if at[a] < hi[a] {
					at[a]++
					break
				}
				at[a] = lo[a]
			}
			if a < 0 {
				break
			}
		}
		r.Score[c] = sum / float64(cnt) // cnt >= 1: the combo itself
	}
	return r.best(values, minimise, selectable)
}

// best sets r's plateau best and raw best from its scores and values.
func (r *PlateauResult) best(values []float64, minimise bool, selectable []bool) (*PlateauResult, error) {
	better := func(a, b float64) bool {
		if minimise {
			return a < b
		}
		return a > b
	}
	for c := range values {
		if selectable != nil && !selectable[c] {
			continue
		}
		if s := r.Score[c]; !math.IsNaN(s) && (r.Best < 0 || better(s, r.Score[r.Best])) {
			r.Best = c
		}
		if v := values[c]; !math.IsNaN(v) && (r.RawBest < 0 || better(v, values[r.RawBest])) {
			r.RawBest = c
		}
	}
	if r.Best < 0 || r.RawBest < 0 {
		return nil, inputErr(ErrNoSelectable, "selectable", "no selectable combo has a score (every one is NaN or excluded)")
	}
	r.BestScore, r.BestValue = r.Score[r.Best], values[r.Best]
	r.RawBestValue, r.RawBestScore = values[r.RawBest], r.Score[r.RawBest]
	return r, nil
}
