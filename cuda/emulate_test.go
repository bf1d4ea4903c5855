package cuda

import (
	"context"
	"math"
	"testing"
	"unsafe"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// emulateCombo is a CPU transcription of one thread of sweep.cu
// (sweep_body with sweep_common.h): the same passes, histogram, bracket,
// refinement and selection, statement for statement. Tests run it where no
// GPU is, against reference.Backtest, so the kernel's algorithm (the drawdown
// without a division per bar, the bin search, the refinement on the float
// keys) is checked before any device time is spent; the GPU tests then
// check the kernel against the same reference.
//
// start is the bar the kernel's thread starts at: its warp's smallest
// first bar (<= first; sweep_body's __reduce_min_sync). Pass 1 stores the
// positions 2 bits per bar in 32-bit words (the first bar in the top
// bits), pass 2 decodes them, as sweep_body does through posbuf.
func emulateCombo[F engine.Float](h, h3, r []F, first, start int, keep, keep2 F, longOnly bool, kth int, spec kernels.Bins[F], capacity int) kernels.Raw[F] {
	thr := spec.Edges
	n := len(r)
	first = min(max(first, 0), n-1)
	if start > first {
		panic("start after the combo's first bar")
	}
	first = start // from here on, the kernel's f0
	lo1 := int32(0)
	if longOnly {
		lo1 = 1
	}
	var hist [kernels.NumBins]int
	bin := spec.Bin
	var s emuState[F]
	s.init(first)
	hist[bin(0)] += first
	// Pass 1 with the positions stored: word w holds bars first+16w..,
	// 2 bits each (pos & 3), the first in the top bits; the tail word is
	// shifted up the same way.
	words := make([]uint32, 0, (n-1-first+posPerWord-1)/posPerWord)
	var pw uint32
	nb := 0
	for i := first; i < n-1; i++ {
		v := s.step(h3[i], h[i], r[i+1], i == n-2, keep, keep2, lo1)
		hist[bin(v)]++
		pw = pw<<2 | uint32(s.prev)&3
		if nb++; nb == posPerWord {
			words = append(words, pw)
			pw, nb = 0, 0
		}
	}
	if nb > 0 {
		words = append(words, pw<<(2*(posPerWord-nb)))
	}
	if q := s.segMin / s.peak; q < s.minRatio {
		s.minRatio = q
	}
	mean := s.sum / F(n-1)

	below, b := 0, 0
	for ; b < kernels.NumBins-1; b++ {
		if below+hist[b] > kth {
			break
		}
		below += hist[b]
	}
	inBin := hist[b]
	lo, up := F(math.Inf(-1)), F(math.Inf(1))
	if b > 0 {
		lo = thr[b-1]
	}
	if b < kernels.NumBins-1 {
		up = thr[b]
	}
	buf := make([]F, capacity)
	var ssd, sumBelow, sumIn F
	nIn := 0
	d0 := F(0) - mean
	dd := d0 * d0
	for i := 0; i < first; i++ {
		ssd += dd
	}
	if !(F(0) < lo) && F(0) < up {
		for i := 0; i < first; i++ {
			if nIn < capacity {
				buf[nIn] = 0
			}
			nIn++
		}
	}
	collect := func(v F) {
		if v < lo {
			sumBelow += v
		} else if v < up {
			if nIn < capacity {
				buf[nIn] = v
			}
			sumIn += v
			nIn++
		}
	}
	prev := int32(0)
	for i := first; i < n-1; i++ {
		// Pass 2 decodes the stored position: the top 2 bits, sign-extended.
		w := &words[(i-first)/posPerWord]
		pos := int32(*w) >> 30
		*w <<= 2
		g := emuRegrowth(&prev, pos, r[i+1], i == n-2, keep, keep2)
		v := g - 1
		d := v - mean
		d2 := d * d
		ssd += d2
		collect(v)
	}
	refine := 0
	for inBin > capacity {
		klo, kup := kernels.Key(lo), kernels.Key(up)
		if kup-klo <= 1 {
			break
		}
		w := (kup - klo + 31) / 32
		var sub [32]int
		count := func(v F) {
			if !(v < lo) && v < up {
				kv := kernels.Key(v)
				q := 0
				if kv >= klo {
					q = int(min((kv-klo)/w, 31))
				}
				sub[q]++
			}
		}
		for i := 0; i < first; i++ {
			count(0)
		}
		prev = 0
		for i := first; i < n-1; i++ {
			count(emuGrowth(&prev, h3[i], h[i], r[i+1], i == n-2, keep, keep2, lo1) - 1)
		}
		q := 0
		for ; q < 31; q++ {
			if below+sub[q] > kth {
				break
			}
			below += sub[q]
		}
		inBin = sub[q]
		nlo := klo + uint64(q)*w
		nup := nlo + w
		if q == 31 {
			nup = kup
		}
		nup = min(nup, kup)
		lo, up = kernels.Val[F](nlo), kernels.Val[F](nup)
		refine++
	}
	if refine > 0 {
		sumBelow, sumIn, nIn = 0, 0, 0
		for i := 0; i < first; i++ {
			collect(0)
		}
		prev = 0
		for i := first; i < n-1; i++ {
			collect(emuGrowth(&prev, h3[i], h[i], r[i+1], i == n-2, keep, keep2, lo1) - 1)
		}
	}
	raw := kernels.Raw[F]{
		E: s.E, MinRatio: s.minRatio, Sum: s.sum, SSD: ssd, Neg2: s.neg2, Gains: s.gains, Losses: s.losses,
		Trades: int32(s.trades), Wins: int32(s.wins), Long: int32(s.nlong), Short: int32(s.nshort), Flat: int32(n - 1 - s.nlong - s.nshort),
		Refine: int32(refine), NoTrades: true, // the trade accumulators: TestMSLOnHost (the shared C) and the GPU tests
	}
	if nIn <= capacity {
		raw.VaR = kernels.Select(buf[:nIn], kth-below)
		raw.CVaRSum = sumBelow
		raw.CVaRCount = int32(below)
		for _, v := range buf[:nIn] {
			if v <= raw.VaR {
				raw.CVaRSum += v
				raw.CVaRCount++
			}
		}
	} else {
		raw.VaR = lo
		raw.CVaRSum = sumBelow + sumIn
		raw.CVaRCount = int32(below + nIn)
		raw.Status = 1
	}
	return raw
}

type emuState[F engine.Float] struct {
	E, peak, segMin, minRatio, ddThr, sum, neg2, gains, losses, tp F
	prev                                                           int32
	trades, wins, nlong, nshort, nflat                             int
}

func (s *emuState[F]) init(first int) {
	*s = emuState[F]{E: 1, peak: 1, segMin: 1, minRatio: 1, ddThr: 1, nflat: first}
}

func emuPosition[F engine.Float](a3, a F, prev, longOnly int32) int32 {
	pos := prev
	if a3 > a {
		pos = 1
	} else if a3 < a {
		pos = -1
		if longOnly != 0 {
			pos = 0
		}
	}
	return pos
}

func emuGrowth[F engine.Float](prev *int32, a3, a, rr F, last bool, keep, keep2 F, longOnly int32) F {
	return emuRegrowth(prev, emuPosition(a3, a, *prev, longOnly), rr, last, keep, keep2)
}

// emuRegrowth is sb_regrowth: the growth factor for a known position.
func emuRegrowth[F engine.Float](prev *int32, pos int32, rr F, last bool, keep, keep2 F) F {
	g := F(1)
	if pos != *prev {
		if d := pos - *prev; d == 2 || d == -2 {
			g = keep2
		} else {
			g = keep
		}
	}
	switch pos {
	case 1:
		f := F(1) + rr
		g = g * f
	case -1:
		f := F(1) - rr
		g = g * f
	}
	if last && pos != 0 {
		g = g * keep
	}
	*prev = pos
	return g
}

func (s *emuState[F]) step(a3, a, rr F, last bool, keep, keep2 F, longOnly int32) F {
	prev := s.prev
	pos := emuPosition(a3, a, prev, longOnly)
	g := F(1)
	if pos != prev {
		if d := pos - prev; d == 2 || d == -2 {
			g = keep2
		} else {
			g = keep
		}
		if prev != 0 {
			// sb_step: t > 1, the same as t-1 > 0 in floating point.
			t := s.tp * keep
			if t > 1 {
				s.wins++
			}
		}
		if pos != 0 {
			s.trades++
			s.tp = keep
		}
	}
	switch pos {
	case 1:
		f := F(1) + rr
		g = g * f
		s.tp = s.tp * f
		s.nlong++
	case -1:
		f := F(1) - rr
		g = g * f
		s.tp = s.tp * f
		s.nshort++
	default:
		s.nflat++
	}
	if last && pos != 0 {
		g = g * keep
		t := s.tp * keep
		if t > 1 {
			s.wins++
		}
	}
	s.prev = pos
	E := s.E * g
	s.E = E
	// sb_step's drawdown filter: divide only when segMin < peak*ddThr.
	if E > s.peak {
		if lim := s.peak * s.ddThr; s.segMin < lim {
			if q := s.segMin / s.peak; q < s.minRatio {
				s.minRatio = q
				s.ddThr = emuDDThr(q)
			}
		}
		s.peak = E
		s.segMin = E
	} else if E < s.segMin {
		s.segMin = E
	}
	v := g - 1
	s.sum += v
	if v > 0 {
		s.gains += v
	} else if v < 0 {
		s.losses -= v
		v2 := v * v
		s.neg2 += v2
	}
	return v
}

// emuDDThr is sb_dd_thr: q*(1 + 16 ulp), or a huge factor below 2^-100.
func emuDDThr[F engine.Float](q F) F {
	var z F
	if unsafe.Sizeof(z) == 4 {
		if q < F(math.Ldexp(1, -100)) {
			return F(float32(3.0e38))
		}
		return q * F(float32(1.0000019073486328))
	}
	if q < F(math.Ldexp(1, -100)) {
		big := 1.0e308
		return F(big)
	}
	return q * F(1.0000000000000036)
}

// emulated is the thread-per-combo sweep kernel as emulateCombo transcribes
// it, behind engine.Backend: the reference's indicator series, the kernel's
// per-bar pass, bins, refinement and selection on the CPU, finished by
// kernels.Raw.Finish like a real launch. It lets the conformance suite run
// on the kernel's algorithm where no GPU is. Each Compute is one "launch":
// warps are 32 combos from its first, so the start bar of a combo depends
// on the chunking, which must change no bit.
type emulated struct{}

func (emulated) Name() string     { return "cuda-emulated" }
func (emulated) Available() error { return nil }
func (emulated) Devices() ([]engine.Device, error) {
	return []engine.Device{{Name: "sweep.cu on the CPU"}}, nil
}
func (emulated) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	if job.Precision == engine.FP32 {
		return prepareEmulated[float32](ctx, job)
	}
	return prepareEmulated[float64](ctx, job)
}

type emulatedKernel[F engine.Float] struct {
	job  *engine.Job
	ind  *engine.Indicators[F]
	bins kernels.Bins[F]
}

func prepareEmulated[F engine.Float](ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	ind, err := reference.BuildIndicators[F](ctx, job.Bars, job.Grid, job.Params.Source, job.WMA)
	if err != nil {
		return nil, err
	}
	return &emulatedKernel[F]{job: job, ind: ind, bins: kernels.BinsFromCloses[F](job.Bars.Close)}, nil
}

func (k *emulatedKernel[F]) Lanes() int     { return 1 }
func (k *emulatedKernel[F]) ChunkSize() int { return 7 }
func (k *emulatedKernel[F]) Device() string { return "sweep.cu on the CPU" }
func (k *emulatedKernel[F]) Close() error   { return nil }

func (k *emulatedKernel[F]) Compute(ctx context.Context, _, first int, out []engine.Metrics) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n, g, p := k.job.Bars.Len(), k.job.Grid, k.job.Params
	keep := engine.Keep[F](p)
	warm := func(j int) int { return min(engine.ComboWarmup(g.At(first+j)), n-1) }
	for j := range out {
		start := warm(j)
		for w := j / 32 * 32; w < min(j/32*32+32, len(out)); w++ {
			start = min(start, warm(w))
		}
		c := g.At(first + j)
		raw := emulateCombo(k.ind.H[c.HMA], k.ind.H3[c.HMA3], k.ind.R, warm(j), start, keep, keep*keep,
			p.Mode == engine.LongOnly, kernels.KthIndex(n-1), k.bins, kernels.SelectCap(n))
		out[j] = raw.Finish(n, p)
	}
	return nil
}

// TestEmulatedConformance: the kernel's algorithm passes the backend suite:
// every metric but cvar_95 bit for bit (its sum runs in the buffer's order).
func TestEmulatedConformance(t *testing.T) {
	conformance.TestBackend(t, emulated{}, conformance.Options{
		FP64: conformance.Tolerance{CVaR: 1e-12},
		FP32: conformance.Tolerance{CVaR: 1e-5},
	})
}
