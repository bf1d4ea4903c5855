package reference

import "sweepbench/engine"

// Positions writes pos[i] for i in [0, len(pos)) by the SPEC state machine
// ("Signal, position, fills"): 0 before first (either series undefined),
// +1 when h3 > h, -1 when h3 < h (0 in long-only), unchanged when equal,
// starting from the state prev (0 at a series' start; the state Positions
// returned for the bars before, when a series is walked in blocks). It
// returns the state after the last bar. Over a whole series pos[n-1] is
// computed but never held.
func Positions[F engine.Float](h, h3 []F, first int, mode engine.Mode, prev int8, pos []int8) int8 {
	first = max(0, min(first, len(pos)))
	clear(pos[:first])
	low := int8(-1) // the state h3 < h holds
	if mode == engine.LongOnly {
		low = 0
	}
	h, h3 = h[:len(pos)], h3[:len(pos)]
	// Two independent selects, not an if-else chain (Go 1.26 compiles
	// them to short branches, which predict well away from crossings). A
	// NaN on either side keeps the state, as "equal" does.
	for i := first; i < len(pos); i++ {
		a, b := h3[i], h[i]
		cur := prev
		if a > b {
			cur = 1
		}
		if a < b {
			cur = low
		}
		pos[i] = cur
		prev = cur
	}
	return prev
}

// PositionFlips walks the state machine of Positions over the fp64 series
// (h, h3) and the fp32 series (g, g3) side by side, both from state 0, over
// bars [first, held) (held <= len of each series), and calls flip(i, p64,
// p32) at each bar i whose positions differ: Positions on each, compared
// bar by bar, without the position arrays. The parity report's flips
// (engine.Compare).
//
// Both machines move only on the comparisons h3 > h and h3 < h, so while
// the two precisions compare alike bar after bar their states stay equal
// and no bar can flip. With AVX2, PositionFlips scans for the next bar
// where they compare differently, eight bars a step with no state carried
// from bar to bar (scanAlikeAVX2), and walks the two machines one bar at a
// time only from there until their states agree again; flips are rare (a
// few per combo over 150,000 bars), so nearly every bar is scanned: 1.0 ns
// a bar on one H200-host core against 2.7 ns for the walk alone, which is
// what runs without AVX2 (a scan in Go was slower than the walk: 4.3 ns).
func PositionFlips(h, h3 []float64, g, g3 []float32, first, held int, mode engine.Mode, flip func(i int, p64, p32 int8)) {
	low := int8(-1)
	if mode == engine.LongOnly {
		low = 0
	}
	first = max(first, 0)
	h, h3, g, g3 = h[:held], h3[:held], g[:held], g3[:held]
	if !useAVX2 {
		walkBoth(h, h3, g, g3, first, held, low, 0, flip)
		return
	}
	var p int8 // the state after bar i-1, the same in both precisions
	for i := first; i < held; {
		// Skip the bars where both compare alike; the state after them
		// is the one the last bar that was not a tie set.
		j := scanAlike(h, h3, g, g3, i)
		for k := j - 1; k >= i; k-- {
			if a, b := h3[k], h[k]; a > b {
				p = 1
				break
			} else if a < b {
				p = low
				break
			}
		}
		if j == held {
			return
		}
		// Then one bar at a time until the states agree again.
		i, p = walkBoth(h, h3, g, g3, j, held, low, p, flip)
	}
}

// walkBoth walks both state machines from bar i, both in state p, calling
// flip at each bar whose positions differ, up to held or, with AVX2 (the
// scan takes over), up to the first bar after which the states agree; it
// returns the next bar and the state there.
func walkBoth(h, h3 []float64, g, g3 []float32, i, held int, low, p int8, flip func(i int, p64, p32 int8)) (int, int8) {
	h, h3, g, g3 = h[:held], h3[:held], g[:held], g3[:held]
	q := p
	for ; i < held; i++ {
		a, b := h3[i], h[i]
		c, d := g3[i], g[i]
		if a > b {
			p = 1
		}
		if a < b {
			p = low
		}
		if c > d {
			q = 1
		}
		if c < d {
			q = low
		}
		if p != q {
			flip(i, p, q)
		} else if useAVX2 {
			return i + 1, p // back to the scan
		}
	}
	return held, p
}

// scanAlike returns the first bar k >= i where the fp64 and the fp32
// series compare differently (h3 > h differs from g3 > g, or h3 < h from
// g3 < g), or len(h) when there is none. len(h3), len(g), len(g3) >= len(h).
func scanAlike(h, h3 []float64, g, g3 []float32, i int) int {
	n := len(h)
	h3, g, g3 = h3[:n], g[:n], g3[:n]
	for i = scanAlikeBlocks(h, h3, g, g3, i); i < n; i++ {
		if a, b, c, d := h3[i], h[i], g3[i], g[i]; (a > b) != (c > d) || (a < b) != (c < d) {
			return i
		}
	}
	return n
}
