package cuda

import (
	"math"
	"testing"
)

// TestBarMajor: value i of series j lands at [i*m + j], negated on asking,
// NaN kept, for bar counts that leave a partial last block.
func TestBarMajor(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1000} {
		ss := make([][]float32, 5)
		for j := range ss {
			ss[j] = make([]float32, n)
			for i := range ss[j] {
				ss[j][i] = float32(1000*j + i)
			}
		}
		if n > 3 {
			ss[2][3] = float32(math.NaN())
		}
		for _, neg := range []bool{false, true} {
			out := barMajor(ss, n, neg)
			if len(out) != n*len(ss) {
				t.Fatalf("n %d: %d values", n, len(out))
			}
			for j, s := range ss {
				for i, v := range s {
					want := v
					if neg {
						want = -v
					}
					got := out[i*len(ss)+j]
					if got != want && !(got != got && want != want) {
						t.Fatalf("n %d neg %v: [%d*m+%d] = %v, want %v", n, neg, i, j, got, want)
					}
				}
			}
		}
	}
}
