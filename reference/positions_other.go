//go:build !amd64

package reference

// scanAlikeBlocks has no vector path off amd64 (useAVX2 is false there and
// PositionFlips walks both machines bar by bar).
func scanAlikeBlocks(h, h3 []float64, g, g3 []float32, i int) int { return i }
