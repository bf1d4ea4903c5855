package kernels

import (
	"math"
	"unsafe"

	"sweepbench/engine"
)

// NumBins is the sweep kernels' VaR histogram size (SB_BINS in
// sweep_common.h). The host code below is shared by the CUDA and Metal
// backends: both kernels bin the strategy returns with these edges.
const NumBins = 32

// Bins is the sweep kernel's VaR histogram: 32 bins of the strategy
// returns, bin(v) = the number of edges <= v. Bins 1..29 are uniform in
// the high 32 bits of the order-preserving key of v (sb_khi in sweep.cu):
// bin 0 is below key k0, bin b in 1..28 holds keys [k0+(b-1)<<shift,
// k0+b<<shift), bin 29 the rest of the negatives, bin 30 the zeros (flat
// bars) and bin 31 the positives. The kernel computes a bin with a few
// integer operations instead of a search. Only speed depends on k0 and
// shift (a bin that overflows the buffer is refined), never the result.
type Bins[F engine.Float] struct {
	Edges []F // 31 sorted lower edges of bins 1..31
	K0    uint32
	Shift uint32
}

// KeyHi is the high 32 bits of the order-preserving key (Key).
func KeyHi[F engine.Float](v F) uint32 {
	var z F
	if unsafe.Sizeof(z) == 4 {
		return uint32(Key(v))
	}
	return uint32(Key(v) >> 32)
}

// ValHi is the value whose key is khi followed by zero bits.
func ValHi[F engine.Float](khi uint32) F {
	var z F
	if unsafe.Sizeof(z) == 4 {
		return Val[F](uint64(khi))
	}
	return Val[F](uint64(khi) << 32)
}

// BinsFromReturns builds the bins from the bar returns r: the uniform range
// spans the 2% to 10% quantiles of the candidate strategy returns (1+r)-1
// and (1-r)-1 in F (what a held bar returns) over a sample of at most 4096
// bars, around the 5% a combo's VaR sits at.
func BinsFromReturns[F engine.Float](r []F) Bins[F] {
	n := len(r)
	stride := max(1, (n-1)/4096)
	var v []F
	for i := 1; i < n; i += stride {
		v = append(v, (F(1)+r[i])-1, (F(1)-r[i])-1)
	}
	return BinsFromSample(v)
}

// BinsFromCloses is BinsFromReturns from the closes, computing only the sampled
// returns (each as BarReturns rounds it).
func BinsFromCloses[F engine.Float](close []float64) Bins[F] {
	n := len(close)
	stride := max(1, (n-1)/4096)
	var v []F
	for i := 1; i < n; i += stride {
		r := F(close[i])/F(close[i-1]) - 1
		v = append(v, (F(1)+r)-1, (F(1)-r)-1)
	}
	return BinsFromSample(v)
}

func BinsFromSample[F engine.Float](v []F) Bins[F] {
	const negTop = 0x7fffffff // khi of the largest negative keys (-0 and above)
	k0, k1 := uint32(negTop-28), uint32(negTop)
	if len(v) > 0 { // two order statistics: selections, not a sort
		k0 = KeyHi(Select(v, int(0.02*float64(len(v)-1))))
		k1 = KeyHi(Select(v, int(0.10*float64(len(v)-1))))
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
	edges := make([]F, 0, NumBins-1)
	for j := uint32(0); j <= 28; j++ {
		edges = append(edges, ValHi[F](k0+j<<shift))
	}
	var z F
	tiny := F(math.Float64frombits(1))
	if unsafe.Sizeof(z) == 4 {
		tiny = F(math.Float32frombits(1))
	}
	edges = append(edges, 0, tiny)
	return Bins[F]{Edges: edges, K0: k0, Shift: shift}
}

// Bin is the kernel's sb_bin: the number of edges <= v.
func (b *Bins[F]) Bin(v F) int {
	if v >= 0 {
		if v > 0 {
			return 31
		}
		return 30
	}
	k := KeyHi(v)
	if k < b.K0 {
		return 0
	}
	return int(min((k-b.K0)>>b.Shift+1, 29))
}

// Key is SbKey<F>::key: an order-preserving unsigned key of a float.
func Key[F engine.Float](v F) uint64 {
	if unsafe.Sizeof(v) == 4 {
		u := math.Float32bits(float32(v))
		if u&0x80000000 != 0 {
			return uint64(^u)
		}
		return uint64(u | 0x80000000)
	}
	u := math.Float64bits(float64(v))
	if u&(1<<63) != 0 {
		return ^u
	}
	return u | 1<<63
}

// Val is SbKey<F>::val, the inverse of Key.
func Val[F engine.Float](k uint64) F {
	var z F
	if unsafe.Sizeof(z) == 4 {
		k32 := uint32(k)
		var u uint32
		if k32&0x80000000 != 0 {
			u = k32 & 0x7fffffff
		} else {
			u = ^k32
		}
		return F(math.Float32frombits(u))
	}
	var u uint64
	if k&(1<<63) != 0 {
		u = k &^ (1 << 63)
	} else {
		u = ^k
	}
	return F(math.Float64frombits(u))
}
