//go:build !amd64

package reference

// scanAlikeBlocks skips, from bar i on, the whole blocks of 8 bars where
// the fp64 and the fp32 series compare alike at every bar, and returns the
// first bar not skipped.
func scanAlikeBlocks(h, h3 []float64, g, g3 []float32, i int) int {
	return scanAlikeGo(h, h3, g, g3, i)
}
