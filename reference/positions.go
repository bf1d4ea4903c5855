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
// and no bar can flip: PositionFlips scans for the next bar where they
// compare differently, eight bars at a time with no state carried from
// bar to bar (scanAlike: AVX2 where the CPU has it, else Go with no
// branch but the loop's), and walks the two
// machines one bar at a time only from there until their states agree
// again. Flips are rare (a few per combo over 150,000 bars), so nearly
// every bar is scanned.
func PositionFlips(h, h3 []float64, g, g3 []float32, first, held int, mode engine.Mode, flip func(i int, p64, p32 int8)) {
	low := int8(-1)
	if mode == engine.LongOnly {
		low = 0
	}
	first = max(first, 0)
	h, h3, g, g3 = h[:held], h3[:held], g[:held], g3[:held]
	var p, q int8 // the states after bar i-1
	for i := first; i < held; {
		// States equal: skip the bars where both compare alike; the state
		// after them is the one the last bar that was not a tie set.
		j := scanAlike(h, h3, g, g3, i)
		if j > i {
			for k := j - 1; k >= i; k-- {
				if a, b := h3[k], h[k]; a > b {
					p = 1
					break
				} else if a < b {
					p = low
					break
				}
			}
			q = p
		}
		// Then one bar at a time until the states agree again.
		for i = j; i < held; {
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
			}
			i++
			if p == q {
				break
			}
		}
	}
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

// scanAlikeGo is scanAlikeBlocks in Go: eight bars at a time with no
// branch but the loop's.
func scanAlikeGo(h, h3 []float64, g, g3 []float32, i int) int {
	n := len(h)
	for ; i+8 <= n; i += 8 {
		a8, b8, c8, d8 := h3[i:i+8], h[i:i+8], g3[i:i+8], g[i:i+8]
		var diff uint8
		for k := range 8 {
			a, b, c, d := a8[k], b8[k], c8[k], d8[k]
			diff |= (b2u(a > b) ^ b2u(c > d)) | (b2u(a < b) ^ b2u(c < d))
		}
		if diff != 0 {
			break
		}
	}
	return i
}

// b2u is 1 for true, 0 for false (a SETcc, no branch).
func b2u(x bool) uint8 {
	if x {
		return 1
	}
	return 0
}
