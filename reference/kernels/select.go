package kernels

import "sweepbench/engine"

// Select reorders a so that a[k] is the k-th smallest element (0-based),
// a[:k] <= a[k] <= a[k+1:], and returns it. Hoare partition around a
// median of three; O(len(a)) expected; no NaN allowed. 0 <= k < len(a).
// It is sb_select of sweep_common.h in Go: the CPU backtest's VaR
// (reference's tail selection) and the VaR histogram's bins (bins.go)
// select with it, the GPU kernels with sb_select.
func Select[F engine.Float](a []F, k int) F {
	lo, hi := 0, len(a)-1
	for hi > lo {
		if hi-lo < 16 {
			for i := lo + 1; i <= hi; i++ {
				for j := i; j > lo && a[j] < a[j-1]; j-- {
					a[j], a[j-1] = a[j-1], a[j]
				}
			}
			return a[k]
		}
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		pivot := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for a[j] > pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}
