package cuda

import "testing"

// TestLaneHMA: with one chunk per lane each GPU holds the HMA series of its
// own combos (c / n3) and nothing else; with more chunks than lanes, all.
func TestLaneHMA(t *testing.T) {
	cases := []struct {
		total, lanes, n3, nh int
		want                 [][2]int
	}{
		{102400, 2, 320, 320, [][2]int{{0, 160}, {160, 320}}},   // 320 x 320 on 2 GPUs: an even split
		{102400, 1, 320, 320, [][2]int{{0, 320}}},               // one GPU: everything
		{80, 2, 8, 10, [][2]int{{0, 5}, {5, 10}}},               // 40 combos each, 8 per HMA row
		{30, 4, 7, 5, [][2]int{{0, 2}, {1, 3}, {2, 4}, {3, 5}}}, // chunk 8: rows shared at the edges
		{4, 3, 2, 2, [][2]int{{0, 1}, {1, 2}, {0, 1}}},          // chunk 2: the third lane has no combos
	}
	for _, c := range cases {
		chunk := chunkSize(c.total, c.lanes)
		for i, w := range c.want {
			lo, hi := laneHMA(c.total, c.lanes, chunk, c.n3, c.nh, i)
			if lo != w[0] || hi != w[1] {
				t.Errorf("total %d on %d lanes (chunk %d, n3 %d): lane %d holds [%d,%d), want [%d,%d)", c.total, c.lanes, chunk, c.n3, i, lo, hi, w[0], w[1])
			}
			// Every combo of the lane's chunk has its HMA row in range.
			for cmb := i * chunk; cmb < min((i+1)*chunk, c.total); cmb++ {
				if h := cmb / c.n3; h < lo || h >= hi {
					t.Errorf("lane %d: combo %d uses HMA row %d outside [%d,%d)", i, cmb, h, lo, hi)
				}
			}
		}
	}
	// A grid larger than lanes x maxChunk is handed out chunk by chunk: every
	// lane holds every series.
	if lo, hi := laneHMA(1_000_000, 2, chunkSize(1_000_000, 2), 1000, 1000, 1); lo != 0 || hi != 1000 {
		t.Errorf("1,000,000 combos on 2 lanes: lane 1 holds [%d,%d), want all", lo, hi)
	}
}
