package reference

//go:noescape
func scanAlikeAVX2(h3, h *float64, f3, f *float32, blocks int) int

// scanAlikeBlocks skips, from bar i on, the whole blocks of 8 bars where
// the fp64 and the fp32 series compare alike at every bar (AVX2; the
// caller checks useAVX2) and returns the first bar not skipped.
func scanAlikeBlocks(h, h3 []float64, g, g3 []float32, i int) int {
	n := len(h)
	if n-i < 8 {
		return i
	}
	return i + scanAlikeAVX2(&h3[i], &h[i], &g3[i], &g[i], (n-i)/8)
}
