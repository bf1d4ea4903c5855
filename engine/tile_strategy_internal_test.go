package engine

import "testing"

// fakeStrategy is a strategy grid of n combos, for planTiles: only Len is
// read of it.
type fakeStrategy struct {
	Strategy
	n int
}

func (f fakeStrategy) Len() int { return f.n }

// TestPlanTilesStrategy: a strategy grid is never cut into HMA bands: its
// HMA and HMA3 ranges are empty, and whatever the budget (none, or one too
// small for three series of hull's) it runs as one tile, itself.
func TestPlanTilesStrategy(t *testing.T) {
	g := Grid{Strategy: fakeStrategy{n: 1000}}
	for _, budget := range []int64{0, 1, 2, 1 << 40} {
		ts, err := planTiles(g, 8<<20, budget)
		if err != nil || len(ts) != 1 || ts[0].Grid.Strategy != g.Strategy || ts[0].r0 != 0 || ts[0].c0 != 0 {
			t.Errorf("budget %d: %v tiles %+v, want the grid as one tile", budget, err, ts)
		}
	}
}
