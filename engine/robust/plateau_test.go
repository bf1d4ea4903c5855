package robust

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"sweepbench/engine"
)

// TestPlateauHandWorked: a 3 x 4 grid (HMA 10:30:10 x HMA3 6:12:2) whose
// raw best is a lone spike at (row 0, col 3) = 9 among zeros, while a
// plateau of 5s fills rows 1-2, cols 0-1:
//
//	0 0 0 9
//	5 5 0 0
//	5 5 0 0
//
// 3 x 3 scores, clipped: corner (0,3) averages 4 cells: 9/4 = 2.25;
// (2,0) averages 4 cells of 5: 5; (1,0) averages 6 cells: 20/6 = 3.33;
// (1,1) averages 9: 20/9 = 2.22; (2,1) averages 6: 20/6. The plateau best
// is (2,0), the raw best (0,3). With (2,0) not selectable, (1,0) and (2,1)
// tie at 20/6 and the lower index, (1,0), wins.
func TestPlateauHandWorked(t *testing.T) {
	grid := engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 6, Stop: 12, Step: 2}}
	v := []float64{0, 0, 0, 9, 5, 5, 0, 0, 5, 5, 0, 0}
	r, err := Plateau(v, grid, 3, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		row, col int
		want     float64
	}{{0, 3, 9.0 / 4}, {2, 0, 5}, {1, 0, 20.0 / 6}, {1, 1, 20.0 / 9}, {2, 1, 20.0 / 6}} {
		if got := r.Score[grid.Index(c.row, c.col)]; math.Abs(got-c.want) > 1e-15 {
			t.Errorf("score (%d,%d) %v, want %v", c.row, c.col, got, c.want)
		}
	}
	if r.Best != grid.Index(2, 0) || r.RawBest != grid.Index(0, 3) || r.BestValue != 5 || r.RawBestValue != 9 || r.RawBestScore != 2.25 {
		t.Errorf("best %d (score %v value %v), raw best %d (value %v score %v)", r.Best, r.BestScore, r.BestValue, r.RawBest, r.RawBestValue, r.RawBestScore)
	}
	sel := make([]bool, len(v))
	for i := range sel {
		sel[i] = i != grid.Index(2, 0)
	}
	r, _ = Plateau(v, grid, 3, false, sel)
	if r.Best != grid.Index(1, 0) {
		t.Errorf("with (2,0) excluded: best %d, want %d", r.Best, grid.Index(1, 0))
	}
	r, _ = Plateau(v, grid, 1, true, nil)
	if r.Best != 0 || r.Score[3] != 9 {
		t.Errorf("1 x 1 window, minimised: best %d, score %v", r.Best, r.Score[3])
	}
}

// TestPlateauByLengths: on a random 7 x 9 grid with steps 3 and 5, the
// score equals a second formulation by lengths (every combo whose HMA and
// HMA3 lengths lie within (k-1)/2 steps of the centre's), for k = 3 and 5.
func TestPlateauByLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	grid := engine.Grid{HMA: engine.Range{Start: 10, Stop: 28, Step: 3}, HMA3: engine.Range{Start: 20, Stop: 60, Step: 5}}
	v := make([]float64, grid.Len())
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	for _, k := range []int{3, 5} {
		r, err := Plateau(v, grid, k, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := (k - 1) / 2
		for i := range v {
			ci := grid.At(i)
			var sum float64
			var n int
			for j := range v {
				cj := grid.At(j)
				if abs(cj.HMA-ci.HMA) <= h*grid.HMA.Step && abs(cj.HMA3-ci.HMA3) <= h*grid.HMA3.Step {
					sum += v[j]
					n++
				}
			}
			if relErr(r.Score[i], sum/float64(n)) > 1e-14 {
				t.Errorf("k %d combo %v: score %v, by lengths %v", k, ci, r.Score[i], sum/float64(n))
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestPlateauErrors: typed errors, and ObjectiveValues feeding it.
func TestPlateauErrors(t *testing.T) {
	grid := engine.Grid{HMA: engine.Range{Start: 10, Stop: 20, Step: 10}, HMA3: engine.Range{Start: 6, Stop: 8, Step: 2}}
	v := []float64{1, 2, 3, 4}
	for _, c := range []struct {
		name string
		v    []float64
		k    int
		sel  []bool
		want error
	}{
		{"lengths", v[:3], 3, nil, ErrLength},
		{"even", v, 2, nil, ErrValue},
		{"mask", v, 3, []bool{true}, ErrLength},
		{"none", v, 3, make([]bool, 4), ErrNoSelectable},
		{"nan", []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}, 1, nil, ErrNoSelectable},
	} {
		if _, err := Plateau(c.v, grid, c.k, false, c.sel); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	bs := synthStats(rand.New(rand.NewPCG(1, 1)), 4, 4, 10, nil, 0.01)
	vals, err := ObjectiveValues(bs, DefaultObjective(252), AllBlocks(4))
	if err != nil {
		t.Fatal(err)
	}
	for c, x := range vals {
		if want := bs.Whole(c).Sharpe(252); x != want {
			t.Errorf("combo %d: value %v, want %v", c, x, want)
		}
	}
	if _, err := ObjectiveValues(bs, DefaultObjective(252), 1<<4); !errors.Is(err, ErrBlocks) {
		t.Errorf("mask beyond the blocks: %v", err)
	}
}
