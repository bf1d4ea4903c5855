package metal

import (
	"math"

	"sweepbench/engine"
)

// binSpec is the sweep kernel's VaR histogram (sweep.metal sb_bin), the
// fp32 form of cuda's binSpec: 32 bins of the strategy returns, bin(v) =
// the number of edges <= v. Bins 1..28 are uniform in the order-preserving
// key of v from k0 (width 1<<shift), bin 29 the rest of the negatives,
// bin 30 the zeros (flat bars), bin 31 the positives. Only speed depends
// on k0 and shift (a bin that overflows the buffer is refined on the
// device), never the result.
type binSpec struct {
	edges []float32 // 31 sorted lower edges of bins 1..31
	k0    uint32
	shift uint32
}

// keyOf is sb_key: a < b <=> keyOf(a) < keyOf(b) for non-NaN floats.
func keyOf(v float32) uint32 {
	u := math.Float32bits(v)
	if u&0x80000000 != 0 {
		return ^u
	}
	return u | 0x80000000
}

// valOf is sb_val, the inverse of keyOf.
func valOf(k uint32) float32 {
	if k&0x80000000 != 0 {
		return math.Float32frombits(k & 0x7fffffff)
	}
	return math.Float32frombits(^k)
}

// thresholdsBars builds the bins from the closes: the uniform range spans
// the 2% to 10% quantiles of the candidate strategy returns (1+r)-1 and
// (1-r)-1 in float32 over a sample of at most 4096 bars, around the 5%
// where a combo's VaR sits (as cuda.thresholdsBars).
func thresholdsBars(close []float64) binSpec {
	n := len(close)
	stride := max(1, (n-1)/4096)
	var v []float32
	for i := 1; i < n; i += stride {
		r := float32(close[i])/float32(close[i-1]) - 1
		v = append(v, (1+r)-1, (1-r)-1)
	}
	return binsFromSample(v)
}

func binsFromSample(v []float32) binSpec {
	const negTop = 0x7fffffff // key of the largest negative (-0)
	k0, k1 := uint32(negTop-28), uint32(negTop)
	if len(v) > 0 {
		k0 = keyOf(engine.Select(v, int(0.02*float64(len(v)-1))))
		k1 = keyOf(engine.Select(v, int(0.10*float64(len(v)-1))))
	}
	k0 = min(k0, negTop-28)
	k1 = min(max(k1, k0+28), negTop)
	shift := uint32(0)
	for (k1-k0)>>shift >= 28 {
		shift++
	}
	// The uniform bins must end at or below the key of +0 (0x80000000).
	for shift > 0 && uint64(k0)+uint64(28)<<shift > 0x80000000 {
		shift--
	}
	edges := make([]float32, 0, sweepBins-1)
	for j := uint32(0); j <= 28; j++ {
		edges = append(edges, valOf(k0+j<<shift))
	}
	edges = append(edges, 0, math.Float32frombits(1))
	return binSpec{edges: edges, k0: k0, shift: shift}
}

// bin is sb_bin: the number of edges <= v.
func (b *binSpec) bin(v float32) int {
	if v >= 0 {
		if v > 0 {
			return 31
		}
		return 30
	}
	k := keyOf(v)
	if k < b.k0 {
		return 0
	}
	return int(min((k-b.k0)>>b.shift+1, 29))
}
