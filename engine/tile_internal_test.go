package engine

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// TestPlanTilesByHand: 10 HMA lengths x hma3 6:15 (10 lengths, 5 series:
// p = 3..7) at 1 byte a series. A budget of 8 series (7 besides the
// returns) cannot hold a whole row band's 5 HMA3 series with 4 HMA
// lengths, so tiles are 3 HMA lengths by 4 series (8 lengths, 6..13) and
// the rest (14, 15): 4 bands x 2 = 8 tiles. A budget of 16 holds bands of
// 10 lengths: one tile, the grid.
func TestPlanTilesByHand(t *testing.T) {
	g := Grid{HMA: Range{10, 19, 1}, HMA3: Range{6, 15, 1}}
	ts, err := planTiles(g, 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := []tile{
		{Grid{HMA: Range{10, 12, 1}, HMA3: Range{6, 13, 1}}, 0, 0}, {Grid{HMA: Range{10, 12, 1}, HMA3: Range{14, 15, 1}}, 0, 8},
		{Grid{HMA: Range{13, 15, 1}, HMA3: Range{6, 13, 1}}, 3, 0}, {Grid{HMA: Range{13, 15, 1}, HMA3: Range{14, 15, 1}}, 3, 8},
		{Grid{HMA: Range{16, 18, 1}, HMA3: Range{6, 13, 1}}, 6, 0}, {Grid{HMA: Range{16, 18, 1}, HMA3: Range{14, 15, 1}}, 6, 8},
		{Grid{HMA: Range{19, 19, 1}, HMA3: Range{6, 13, 1}}, 9, 0}, {Grid{HMA: Range{19, 19, 1}, HMA3: Range{14, 15, 1}}, 9, 8},
	}
	if len(ts) != len(want) {
		t.Fatalf("%d tiles %v, want %d", len(ts), ts, len(want))
	}
	for i := range want {
		if ts[i] != want[i] {
			t.Errorf("tile %d: %+v, want %+v", i, ts[i], want[i])
		}
	}
	// 11 series: a band of 5 HMA lengths by every HMA3 series.
	if ts, err := planTiles(g, 1, 11); err != nil || len(ts) != 2 || ts[0].Grid != (Grid{HMA: Range{10, 14, 1}, HMA3: g.HMA3}) || ts[1].r0 != 5 {
		t.Errorf("budget 11: %+v, %v; want 2 bands of 5 HMA lengths", ts, err)
	}
	if ts, err := planTiles(g, 1, 16); err != nil || len(ts) != 1 || ts[0].Grid != g {
		t.Errorf("budget 16: %+v, %v; want the grid itself", ts, err)
	}
	var be *TileBudgetError
	if _, err := planTiles(g, 1000, 2999); !errors.As(err, &be) || be.Budget != 2999 || be.PerSeries != 1000 {
		t.Errorf("budget of 2.999 series: %v, want a TileBudgetError", err)
	}
}

// TestPlanTilesCover: on random grids and budgets, the tiles cover every
// combo of the grid once (global and local are inverse), each holds at
// most the budget's series, and no tile ends between the lengths 2p and
// 2p+1 of a step-1 HMA3 range (one series).
func TestPlanTilesCover(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		h := Range{Start: 2 + rng.IntN(10), Step: 1 + rng.IntN(3)}
		h.Stop = h.Start + rng.IntN(60)
		h3 := Range{Start: 6 + rng.IntN(10), Step: 1 + rng.IntN(2)}
		h3.Stop = h3.Start + rng.IntN(80)
		g := Grid{HMA: h, HMA3: h3}
		budget := int64(3 + rng.IntN(int(gridSeries(g))+5))
		ts, err := planTiles(g, 1, budget)
		if err != nil {
			t.Fatalf("%v budget %d: %v", g, budget, err)
		}
		seen := make([]int, g.Len())
		for _, tl := range ts {
			if n := gridSeries(tl.Grid); n > budget {
				t.Fatalf("%v budget %d: tile %v holds %d series", g, budget, tl.Grid, n)
			}
			if c := tl.Grid.HMA3.Start; tl.c0 > 0 && h3.Step == 1 && c%2 == 1 && g.Distinct() != g {
				t.Fatalf("%v budget %d: tile %v starts at %d, the twin of %d", g, budget, tl.Grid, c, c-1)
			}
			for c := 0; c < tl.Grid.Len(); c++ {
				gi := tl.global(g, c)
				if g.At(gi) != tl.Grid.At(c) || tl.local(g, gi) != c {
					t.Fatalf("%v: tile %+v combo %d is grid combo %d (%v), local %d", g, tl, c, gi, g.At(gi), tl.local(g, gi))
				}
				seen[gi]++
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("%v budget %d: combo %d in %d tiles", g, budget, i, n)
			}
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "512KiB": 512 << 10, " 64 MiB": 64 << 20, "2GiB": 2 << 30} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "1.5GiB", "12 GB", "9999999999TiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q): no error", in)
		}
	}
}
