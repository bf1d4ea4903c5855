package reference

// Internals the external tests (package reference_test) reach.

// TailSelect is tailSelect: VaR's selection with the sample-and-band pass.
func TailSelect[F Float](a []F, k int, sc *Scratch[F]) (v, sumLE F, cntLE int) {
	return tailSelect(a, k, sc)
}

// HasAVX2 reports whether the AVX2 paths (WMA blocks, the parity scan) run
// on this machine.
func HasAVX2() bool { return useAVX2 }

// SetAVX2 turns the AVX2 paths on or off (to compare the two paths)
// and returns the previous setting.
func SetAVX2(on bool) (was bool) {
	was, useAVX2 = useAVX2, on
	return was
}
