package reference

import (
	"math"

	"sweepbench/engine"
)

// Float is engine.Float: float64 for the reference, float32 for the path a
// GPU without fp64 takes. One generic function serves both, so the fp32 path
// is the fp64 path with another type, never a copy.
type Float = engine.Float

func nan[F Float]() F { return F(math.NaN()) }

// WMA writes the weighted moving average of x with length p into out
// (SPEC "Indicators"):
//
//	WMA(x, p)[i] = sum_{k=1..p} k*x[i-p+k] / (p(p+1)/2)
//
// x[s:] must be defined (finite); out[i] is NaN for i < s+p-1. out must have
// len(x) elements and may not alias x. p >= 1.
//
// Evaluation order is fixed so every backend gets the same bits: the window
// is summed oldest bar first, each product k*x rounded to F before it is
// added (no fused multiply-add; the explicit conversion forbids Go from
// fusing), then divided by p(p+1)/2. Windows are accumulated side by side
// (AVX2 blocks of 32 or 64 outputs on amd64, then eight at a time) for
// instruction-level parallelism; each keeps its own sequential order, so
// the bits do not depend on the path.
func WMA[F Float](x []F, p, s int, out []F) {
	n := len(x)
	start := s + p - 1
	for i := 0; i < min(start, n); i++ {
		out[i] = nan[F]()
	}
	den := F(float64(p) * float64(p+1) / 2)
	i := start
	if i < n {
		i += wmaSIMD(x, p, i, out, den)
	}
	for ; i+8 <= n; i += 8 {
		w := x[i-p+1 : i+8 : i+8] // len p+7: the windows of outputs i..i+7
		_ = w[p+6]
		var s0, s1, s2, s3, s4, s5, s6, s7 F
		for k := 1; k <= p; k++ {
			kk := F(k)
			v := w[k-1 : k+7 : k+7]
			s0 += F(kk * v[0])
			s1 += F(kk * v[1])
			s2 += F(kk * v[2])
			s3 += F(kk * v[3])
			s4 += F(kk * v[4])
			s5 += F(kk * v[5])
			s6 += F(kk * v[6])
			s7 += F(kk * v[7])
		}
		o := out[i : i+8 : i+8]
		o[0], o[1], o[2], o[3] = s0/den, s1/den, s2/den, s3/den
		o[4], o[5], o[6], o[7] = s4/den, s5/den, s6/den, s7/den
	}
	for ; i < n; i++ {
		w := x[i-p+1 : i+1]
		var acc F
		for k := 1; k <= p; k++ {
			acc += F(F(k) * w[k-1])
		}
		out[i] = acc / den
	}
}

// WMAPrefix computes the same WMA through two running prefix sums
// (SPEC "WMA formulations", the research switch):
//
//	S1[t] = sum_{j<=t} x[j],  S2[t] = sum_{j<=t} t_j*x[j]   (t counted from s, 1-based)
//	WMA[i] = ((S2[t]-S2[t-p]) - (t-p)*(S1[t]-S1[t-p])) / (p(p+1)/2)
//
// O(n) instead of O(n*p), exact in exact arithmetic, but S2 grows like
// n^2*price/2: at 150k bars and price ~30,000 it reaches ~1e14 and in fp32
// every digit of the window is lost. Kept so the trap can be shown. scratch
// needs 2*(len(x)-s+1) elements (nil allocates). Same edges as WMA.
func WMAPrefix[F Float](x []F, p, s int, out []F, scratch []F) {
	n := len(x)
	start := s + p - 1
	for i := 0; i < min(start, n); i++ {
		out[i] = nan[F]()
	}
	if start >= n {
		return
	}
	m := n - s + 1
	if len(scratch) < 2*m {
		scratch = make([]F, 2*m)
	}
	s1, s2 := scratch[:m], scratch[m:2*m]
	s1[0], s2[0] = 0, 0
	for t := 1; t < m; t++ {
		v := x[s+t-1]
		s1[t] = s1[t-1] + v
		s2[t] = s2[t-1] + F(F(t)*v)
	}
	den := F(float64(p) * float64(p+1) / 2)
	for i := start; i < n; i++ {
		t := i - s + 1
		a := s2[t] - s2[t-p]
		b := s1[t] - s1[t-p]
		out[i] = (a - F(F(t-p)*b)) / den
	}
}

// wmaForm dispatches on the formulation.
func wmaForm[F Float](f engine.Formulation, x []F, p, s int, out, scratch []F) {
	if f == engine.Prefix {
		WMAPrefix(x, p, s, out, scratch)
		return
	}
	WMA(x, p, s, out)
}
