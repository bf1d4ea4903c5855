package robust

import (
	"math"
	"math/rand/v2"
)

// synthStats fills BlockStats for n combos x s blocks directly, without
// bars: each block holds bars returns of mean mu[c] (0 when mu is nil) and
// standard deviation sigma, drawn as block sums with consistent second
// moments (SumSq >= Sum^2/bars), a few trades per block. It is for speed
// and for the PBO comparisons, where only the statistics matter.
func synthStats(rng *rand.Rand, n, s, bars int, mu []float64, sigma float64) *BlockStats {
	bs, err := NewBlockStats(n, s)
	if err != nil {
		panic(err)
	}
	fb := float64(bars)
	for c := 0; c < n; c++ {
		m := 0.0
		if mu != nil {
			m = mu[c]
		}
		var s3, s4 float64
		for b := 0; b < s; b++ {
			i := c*s + b
			sum := m*fb + sigma*math.Sqrt(fb)*rng.NormFloat64()
			// sample variance around the block mean: chi-square-ish.
			v := sigma * sigma * (1 + 0.1*rng.NormFloat64())
			v = math.Max(v, 0.01*sigma*sigma)
			bs.Bars[i] = int32(bars)
			bs.Sum[i] = sum
			bs.SumSq[i] = sum*sum/fb + fb*v
			bs.SumDown[i] = 0.5 * bs.SumSq[i] * (1 + 0.1*rng.NormFloat64())
			bs.SumLog[i] = sum - 0.5*bs.SumSq[i]
			bs.Trades[i] = int32(rng.IntN(20))
			bs.Wins[i] = int32(rng.IntN(int(bs.Trades[i]) + 1))
			s3 += 0
			s4 += 3 * fb * v * v
		}
		bs.Sum3[c], bs.Sum4[c] = s3, s4
	}
	return bs
}

// randomReturns draws n combos x bars returns: combo c has mean mu[c] (0
// when mu is nil) and standard deviation sigma per bar, normal.
func randomReturns(rng *rand.Rand, n, bars int, mu []float64, sigma float64) [][]float64 {
	out := make([][]float64, n)
	for c := range out {
		m := 0.0
		if mu != nil {
			m = mu[c]
		}
		r := make([]float64, bars)
		for k := range r {
			r[k] = m + sigma*rng.NormFloat64()
		}
		out[c] = r
	}
	return out
}

// randomBounds splits bars into s non-empty contiguous blocks at random
// edges.
func randomBounds(rng *rand.Rand, bars, s int) []int {
	for {
		cut := map[int]bool{}
		for len(cut) < s-1 {
			cut[1+rng.IntN(bars-1)] = true
		}
		out := []int{0}
		for k := 1; k < bars; k++ {
			if cut[k] {
				out = append(out, k)
			}
		}
		out = append(out, bars)
		if len(out) == s+1 {
			return out
		}
	}
}

// relErr is |a-b|/|b| (|a-b| when b = 0; 0 when both are the same
// infinity).
func relErr(a, b float64) float64 {
	if a == b {
		return 0
	}
	d := math.Abs(a - b)
	if b == 0 {
		return d
	}
	return d / math.Abs(b)
}
