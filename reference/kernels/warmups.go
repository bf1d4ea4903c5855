package kernels

import "sweepbench/engine"

// Warmups are the sweep kernels' warm-up tables (the warmH and warm3
// arguments of sweep.cu and sweep.metal): the first bar at which the HMA
// of each length in hma, and the HMA3 of each length in hma3, is defined
// (engine.HMAWarmup, engine.HMA3Warmup), as int32.
func Warmups(hma, hma3 []int) (warmH, warm3 []int32) {
	warmH = make([]int32, len(hma))
	for i, L := range hma {
		warmH[i] = int32(engine.HMAWarmup(L))
	}
	warm3 = make([]int32, len(hma3))
	for i, L := range hma3 {
		warm3[i] = int32(engine.HMA3Warmup(L))
	}
	return warmH, warm3
}
