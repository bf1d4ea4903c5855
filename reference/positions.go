package reference

import "sweepbench/engine"

// Positions writes pos[i] for i in [0, n) by the SPEC state machine: 0
// before first (either series undefined), +1 when h3 > h, -1 when h3 < h
// (0 in long-only), unchanged when equal. pos[n-1] is computed but never held.
func Positions[F engine.Float](h, h3 []F, first int, mode engine.Mode, pos []int8) {
	var prev int8
	for i := range pos {
		if i < first {
			pos[i] = 0
			continue
		}
		cur := prev
		if a, b := h3[i], h[i]; a > b {
			cur = 1
		} else if a < b {
			cur = -1
			if mode == engine.LongOnly {
				cur = 0
			}
		}
		pos[i] = cur
		prev = cur
	}
}
