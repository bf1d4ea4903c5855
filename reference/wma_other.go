//go:build !amd64

package reference

var useAVX2 = false

// wmaSIMD has no vector path off amd64; the scalar loop does the work.
func wmaSIMD[F Float](x []F, p, i int, out []F, den F) int { return 0 }
