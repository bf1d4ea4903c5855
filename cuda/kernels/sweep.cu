// sweep.cu — the fused per-combo backtest: positions, fees, trades, wins,
// equity, drawdown, the moments for Sharpe/Sortino/omega and the exact
// VaR/CVaR 95 of docs/SPEC.md, for a contiguous range of combos.
//
// sweep_{f32,f64}_k1
//   Grid:   1-D, ceil(count / (SB_BLOCK*K)) blocks.
//   Block:  SB_BLOCK (64) threads; thread t of block b owns K consecutive
//           combos. The backend launches K = 1; K = 2 (twice the
//           independent work per thread, half the threads) measured 1.8x
//           slower on the H200: it is measured in cuda/dev/sweep_k2.cu,
//           which instantiates this body with K = 2. Local combo
//           j = (b*SB_BLOCK + t)*K + k is grid combo c = comboFirst + j,
//           (hmaIdx, hma3Idx) = (c / n3, c % n3): neighbouring threads take
//           neighbouring HMA3 lengths, so the bar-major reads
//           h3[i*n3 + hma3Idx] coalesce across a warp and h[i*nh + hmaIdx]
//           and r[i+1] are (near-)broadcasts. Bars are loaded SB_U (4) at a
//           time before they are used, to keep several loads in flight.
//   Thread: runs its combos end to end, sequentially over the bars, in the
//           exact order of engine.Backtest (so fp64 results equal the CPU
//           reference's bits except for the order of the CVaR sum), from
//           its warp's smallest first bar (warm-up bars are flat, rs = 0,
//           as in engine.Backtest; a warp-uniform start makes the h3 loads
//           coalesce and the h and r loads broadcasts):
//           pass 1  the state machine + a 32-bin histogram of rs over the
//                   job's thresholds (quantiles of the candidate returns);
//                   the positions go to posbuf, 2 bits per bar;
//           pass 2  rs again from the stored positions and r: the two-pass
//                   variance, and the values of the bin that holds the k-th
//                   smallest are copied to the combo's buffer (cap values);
//           refine  only if that bin holds more than cap values: histogram
//                   passes over the float bits of the bin's range (radix
//                   select on the order-preserving key) until it fits;
//           select  Hoare select of the k-th smallest in the buffer; CVaR is
//                   the sum below the bin plus the buffer values <= VaR.
//   Shared: K*SB_BINS*SB_BLOCK int32 counters (8 KiB per combo slot: 8 KiB
//           for K=1, 16 KiB for K=2; counter b of combo k of thread t at
//           [(k*SB_BINS + b)*SB_BLOCK + t], so a warp's increments hit 32
//           distinct banks) plus SB_BINS-1 thresholds (248 B as double).
//   Global: buf, cap values per combo (combo-major), written and re-read
//           by its own thread only; posbuf, ceil((n-1)/SB_PW) words per
//           combo, word w of launch combo j at [w*count + j] (coalesced),
//           likewise private to its thread.
//   Output: structure of arrays, one entry per combo of the launch:
//           outF[f*count + j] (SB_NF fields of F), outI[f*count + j]
//           (SB_NI int32 fields). The host finishes the ratios
//           (sqrt, pow) in float64 exactly as engine.Backtest does.
#include "sweep_common.h"

#define SB_BLOCK 64
#define SB_BINS 32
#define SB_U 4
#define SB_PW 16 // bars per stored position word (2 bits each)
#define SB_NF 15 // the thread-per-combo kernel; sweep_seg writes the first 9
#define SB_NI 10 // and the first 8 (kernels.NFBase, NIBase)

// Float fields of outF.
#define OF_E 0
#define OF_MINRATIO 1
#define OF_SUM 2
#define OF_SSD 3
#define OF_NEG2 4
#define OF_GAINS 5
#define OF_LOSSES 6
#define OF_VAR 7
#define OF_CVARSUM 8
// Int fields of outI.
#define OI_TRADES 0
#define OI_WINS 1
#define OI_LONG 2
#define OI_SHORT 3
#define OI_FLAT 4
#define OI_CVARCNT 5
#define OI_REFINE 6
#define OI_STATUS 7
// The trade accumulators of pass 2 (SPEC Part 2 "New metrics"; SbReplay).
#define OF_WINSUM 9
#define OF_LOSSSUM 10
#define OF_BEST 11
#define OF_WORST 12
#define OF_TMEAN 13
#define OF_TM2 14
#define OI_LOSERS 8
#define OI_DDBARS 9

// Order-preserving integer key of a float: a < b  <=>  key(a) < key(b)
// for non-NaN values (-0 sorts just below +0).
template <typename F> struct SbKey;
template <> struct SbKey<float> {
    typedef unsigned int U;
    static __device__ __forceinline__ U key(float v) {
        U u = __float_as_uint(v);
        return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    }
    static __device__ __forceinline__ float val(U k) {
        U u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
        return __uint_as_float(u);
    }
};
template <> struct SbKey<double> {
    typedef unsigned long long U;
    static __device__ __forceinline__ U key(double v) {
        U u = (U)__double_as_longlong(v);
        return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
    }
    static __device__ __forceinline__ double val(U k) {
        U u = (k & 0x8000000000000000ull) ? (k & 0x7fffffffffffffffull) : ~k;
        return __longlong_as_double((long long)u);
    }
};

template <typename F> __device__ __forceinline__ F sb_nan_seg();
template <> __device__ __forceinline__ float sb_nan_seg<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ double sb_nan_seg<double>() { return __longlong_as_double(0x7ff8000000000000ll); }

template <typename F> __device__ __forceinline__ F sb_inf();
template <> __device__ __forceinline__ float sb_inf<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double sb_inf<double>() { return __longlong_as_double(0x7ff0000000000000ll); }

// The high 32 bits of v's order-preserving key (SbKey), for the bins.
__device__ __forceinline__ unsigned sb_khi(float v) {
    unsigned u = __float_as_uint(v);
    return u ^ ((unsigned)((int)u >> 31) | 0x80000000u);
}
__device__ __forceinline__ unsigned sb_khi(double v) {
    unsigned u = (unsigned)__double2hiint(v);
    return u ^ ((unsigned)((int)u >> 31) | 0x80000000u);
}

// Bin of v (cuda.binSpec): the number of the 31 edges <= v, computed
// without a search: bins 1..29 uniform in sb_khi from k0 (width 1<<shift,
// bin 29 up to the zeros), 30 the zeros, 31 the positives.
template <typename F>
__device__ __forceinline__ int sb_bin(F v, unsigned k0, unsigned shift) {
    // Branch-free: for a negative v, kh and k0 (binSpec keeps it below
    // 2^31 - 28) are both below 2^31, so kh - k0 fits an int and the
    // arithmetic shift floors it: kh < k0 gives a negative t, bin 0.
    const unsigned kh = sb_khi(v);
    const int t = (int)(kh - k0) >> shift;
    int b = min(max(t + 1, 0), 29);
    b = v >= (F)0 ? (v > (F)0 ? 31 : 30) : b;
    return b;
}

// ---- replaying a combo's growth factors (sb_var's refinement) -----------

// SbPosReplay replays launch combo j from the positions pass 1 stored
// (posbuf: word w at pb[w*count + j], SB_PW bars a word from bar f0, the
// first in the top bits): growth(i, ...) for i = f0, f0+1, ... in order.
template <typename F>
struct SbPosReplay {
    const unsigned* pb;
    long long count;
    int j, f0, prev;
    unsigned w;
    __device__ __forceinline__ F growth(int i, F rr, bool last, F keep, F keep2) {
        const int q = i - f0;
        if ((q & (SB_PW - 1)) == 0) w = pb[(long long)(q / SB_PW) * count + j];
        const int pos = (int)w >> 30;
        w <<= 2;
        return sb_regrowth<F>(prev, pos, rr, last, keep, keep2);
    }
};

// SbSigReplay replays a combo from Part 1's indicators (the bar-parallel
// kernel, which stores no positions): h3[i*s3] against h[i*sh].
template <typename F>
struct SbSigReplay {
    const F* h3;
    const F* h;
    long long s3, sh;
    int longOnly, prev;
    __device__ __forceinline__ F growth(int i, F rr, bool last, F keep, F keep2) {
        return sb_growth<F>(prev, h3[(long long)i * s3], h[(long long)i * sh], rr, last, keep, keep2, longOnly);
    }
};

// ---- signals: what a combo's thread reads per bar, and its position ------
//
// A signal is one combo's view of the kernel's series (SbArgs): init for
// grid combo (a, b) = (c / n3, c % n3) and its first valid bar; load(i),
// bar i's values (Val: loaded a group ahead, see sweep_body); next(v,
// prev, i), the position at bar i from them (prev: the position at bar
// i-1). kPrefetch: sweep_body software-pipelines the loads (fp32, one
// combo a thread, Val small enough for the register budget).

// SbArgs are the series a signal reads, bar-major (bar i of column a at
// [i*nh + a], of column b at [i*n3 + b]):
//   hull, cross   H (nh columns) and H3 (n3): long while H3 > H;
//   bands         H: the value v per a (zscore's z, rsi's RSI); T4: the
//                 levels (tLE, tSE, tLX, tSX) of each b, at [4b..4b+3];
//   channel       V: v per bar (breakout's -close); H, H2 (per a): tLE,
//                 tSE; H3, H4 (per b): tLX, tSX.
template <typename F>
struct SbArgs {
    const F* H;
    const F* H3;
    const F* H2;
    const F* H4;
    const F* V;
    const F* T4;
    int nh, n3;
};

// SbHullSig: Part 1's crossover (hull, and cross through negated legs);
// warm-up bars are flat because their indicators are NaN.
template <typename F>
struct SbHullSig {
    struct Val {
        F a3, a;
    };
    static constexpr bool kPrefetch = sizeof(F) == 4;
    const F* hcol;
    const F* h3col;
    int nh, n3;
    int longOnly;
    __device__ __forceinline__ void init(const SbArgs<F>& A, int a, int b, int first, int lo) {
        hcol = A.H + a;
        h3col = A.H3 + b;
        nh = A.nh;
        n3 = A.n3;
        longOnly = lo;
    }
    __device__ __forceinline__ Val load(int i) const { return Val{h3col[(long)i * n3], hcol[(long)i * nh]}; }
    __device__ __forceinline__ int next(Val v, int prev, int i) { return sb_position<F>(v.a3, v.a, prev, longOnly); }
};

// SbBandSig: zscore and rsi (sb_band over v = H[a] and the constant levels
// of b); the machine's state st is its own (long-only maps it after), 0
// before the combo's first bar and at a reset (-0).
template <typename F>
struct SbBandSig {
    typedef F Val;
    static constexpr bool kPrefetch = sizeof(F) == 4;
    const F* vcol;
    int nh;
    F tLE, tSE, tLX, tSX;
    int st, first, longOnly;
    __device__ __forceinline__ void init(const SbArgs<F>& A, int a, int b, int f, int lo) {
        vcol = A.H + a;
        nh = A.nh;
        tLE = A.T4[4 * b];
        tSE = A.T4[4 * b + 1];
        tLX = A.T4[4 * b + 2];
        tSX = A.T4[4 * b + 3];
        st = 0;
        first = f;
        longOnly = lo;
    }
    __device__ __forceinline__ Val load(int i) const { return vcol[(long)i * nh]; }
    __device__ __forceinline__ int next(Val v, int prev, int i) {
        int s2 = sb_band<F>(st, v, tLE, tSE, tLX, tSX);
        s2 = (sb_is_reset(v) || i < first) ? 0 : s2;
        st = s2;
        return sb_band_pos(s2, longOnly);
    }
};

// SbChanSig: breakout (sb_band over v = V[i] and the levels H, H2 of a and
// H3, H4 of b); the state is 0 before the combo's first bar, max(entry,
// exit), where one channel may already be defined.
template <typename F>
struct SbChanSig {
    struct Val {
        F v, le, se, lx, sx;
    };
    static constexpr bool kPrefetch = false;
    const F* V;
    const F* le;
    const F* se;
    const F* lx;
    const F* sx;
    int nh, n3;
    int st, first, longOnly;
    __device__ __forceinline__ void init(const SbArgs<F>& A, int a, int b, int f, int lo) {
        V = A.V;
        le = A.H + a;
        se = A.H2 + a;
        lx = A.H3 + b;
        sx = A.H4 + b;
        nh = A.nh;
        n3 = A.n3;
        st = 0;
        first = f;
        longOnly = lo;
    }
    __device__ __forceinline__ Val load(int i) const {
        const long ia = (long)i * nh, ib = (long)i * n3;
        return Val{V[i], le[ia], se[ia], lx[ib], sx[ib]};
    }
    __device__ __forceinline__ int next(Val v, int prev, int i) {
        int s2 = sb_band<F>(st, v.v, v.le, v.se, v.lx, v.sx);
        s2 = i < first ? 0 : s2;
        st = s2;
        return sb_band_pos(s2, longOnly);
    }
};

// One combo's VaR selection after pass 1 (hist, the bracket) and pass 2
// (the buffer): refinement if the bin overflowed, then the k-th smallest
// and the CVaR sum. Rarely-taken paths replay the combo's growth factors
// from bar f0 through rep (a copy of it per replay: SbPosReplay from the
// stored positions, SbSigReplay from Part 1's indicators), sequentially in
// the calling thread. myHist: 32 counters at stride hs.
template <typename F, typename Rep>
__device__ __forceinline__ void sb_var(const Rep rep, const F* R, int n, int f0,
                                       F keep, F keep2, int kth, int* myHist, int hs, int below, int inBin,
                                       F lo, F up, F sumBelow, F sumIn, int nIn, F* mybuf, int cap, F& var,
                                       F& cvarSum, int& cvarCnt, int& refine, int& status) {
    typedef typename SbKey<F>::U U;
    refine = 0;
    while (inBin > cap) {
        U klo = SbKey<F>::key(lo), kup = SbKey<F>::key(up);
        if (kup - klo <= (U)1) break;
        U w = (kup - klo + (U)31) / (U)32;
        for (int q = 0; q < 32; ++q) myHist[q * hs] = 0;
        if (!((F)0 < lo) && (F)0 < up) {
            U kv = SbKey<F>::key((F)0);
            int q = kv < klo ? 0 : min((int)((kv - klo) / w), 31);
            myHist[q * hs] += f0;
        }
        Rep r = rep;
        for (int i = f0; i < n - 1; ++i) {
            F g = r.growth(i, R[i + 1], i == n - 2, keep, keep2);
            F v = g - (F)1;
            if (!(v < lo) && v < up) {
                U kv = SbKey<F>::key(v);
                int q = kv < klo ? 0 : min((int)((kv - klo) / w), 31);
                myHist[q * hs] += 1;
            }
        }
        int q = 0;
        for (; q < 31; ++q) {
            int h = myHist[q * hs];
            if (below + h > kth) break;
            below += h;
        }
        inBin = myHist[q * hs];
        U nlo = klo + (U)q * w;
        U nup = q == 31 ? kup : nlo + w;
        if (nup > kup) nup = kup;
        lo = SbKey<F>::val(nlo);
        up = SbKey<F>::val(nup);
        ++refine;
    }
    if (refine > 0) {
        // Collect the final bin (or just sum it when it is one key wide).
        sumBelow = (F)0;
        sumIn = (F)0;
        nIn = 0;
        if (!((F)0 < lo) && (F)0 < up) {
            for (int i = 0; i < f0; ++i) {
                if (nIn < cap) mybuf[nIn] = (F)0;
                ++nIn;
            }
        }
        Rep r = rep;
        for (int i = f0; i < n - 1; ++i) {
            F g = r.growth(i, R[i + 1], i == n - 2, keep, keep2);
            F v = g - (F)1;
            if (v < lo) {
                sumBelow = sumBelow + v;
            } else if (v < up) {
                if (nIn < cap) mybuf[nIn] = v;
                sumIn = sumIn + v;
                ++nIn;
            }
        }
    }
    status = 0;
    if (nIn <= cap) {
        var = sb_select<F>(mybuf, nIn, kth - below);
        cvarSum = sumBelow;
        cvarCnt = below;
        for (int q = 0; q < nIn; ++q) {
            F v = mybuf[q];
            if (v <= var) {
                cvarSum = cvarSum + v;
                ++cvarCnt;
            }
        }
    } else {
        // One key wide: every value of the bin equals lo.
        var = lo;
        cvarSum = sumBelow + sumIn;
        cvarCnt = below + nIn;
        status = 1;
    }
}

// K combos per thread, bars prefetched SB_U at a time: the K state
// machines and the SB_U loads in flight are independent work for the
// scheduler while one waits on memory.
//
// Every thread of a warp starts at the warp's smallest first bar s0 (bars
// before a combo's own first bar hold flat with rs = 0, exactly as
// engine.Backtest's warm-up, so the bits are the same): the warp then
// reads one row of h3 (coalesced) and one h and r value (broadcasts) per
// bar, instead of up to 32 rows.
//
// Pass 1 stores each combo's positions, 2 bits per bar (pos & 3: 0 flat,
// 1 long, 3 short), SB_PW bars per 32-bit word, the first bar in the top
// bits; word w of launch combo j at posbuf[w*count + j] (coalesced).
// Pass 2 reads them back with r instead of replaying h, h3 and the signal.
// The last bar (n-2, the exit fee) is peeled off both loops.
template <typename F, int K, typename Sig>
__device__ void sweep_body(const SbArgs<F> A, const F* __restrict__ R,
                           int n, const int* __restrict__ warmH, const int* __restrict__ warm3,
                           long long comboFirst, int count, F keep, F keep2, F rf, int longOnly, int kth,
                           const F* __restrict__ thrIn, unsigned k0, unsigned shift, F* __restrict__ buf,
                           unsigned* __restrict__ posbuf, int cap, F* __restrict__ outF, int* __restrict__ outI) {
    typedef typename Sig::Val Val;
    const int n3 = A.n3;
    __shared__ int hist[K * SB_BINS * SB_BLOCK];
    __shared__ F thr[SB_BINS - 1];
    const int tid = threadIdx.x;
    for (int b = tid; b < SB_BINS - 1; b += SB_BLOCK) thr[b] = thrIn[b];
    __syncthreads();
    const int j0 = (blockIdx.x * SB_BLOCK + tid) * K;

    Sig sig[K];
    int jc[K];
    int f0 = n - 1;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        // A thread past the end repeats the launch's last combo and writes nothing.
        jc[k] = min(j0 + k, count - 1);
        const long long c = comboFirst + jc[k];
        const int hi = (int)(c / n3), ti = (int)(c % n3);
        int first = max(warmH[hi], warm3[ti]);
        first = min(max(first, 0), n - 1);
        f0 = min(f0, first);
        sig[k].init(A, hi, ti, first, longOnly);
    }
    // The warp's smallest first bar (SB_BLOCK is a multiple of 32 and no
    // thread has returned yet, so the whole warp takes part).
    f0 = __reduce_min_sync(0xffffffffu, f0);
    if (j0 >= count) return;

    const int z0 = sb_bin<F>((F)0, k0, shift);
#pragma unroll
    for (int k = 0; k < K; ++k) {
        for (int b = 0; b < SB_BINS; ++b) hist[(k * SB_BINS + b) * SB_BLOCK + tid] = 0;
        hist[(k * SB_BINS + z0) * SB_BLOCK + tid] = f0;
    }

    // Pass 1: the state machines, the histograms, the positions.
    SbState<F> s[K];
#pragma unroll
    for (int k = 0; k < K; ++k) sb_init<F>(s[k], f0);
    const int iend = n - 2; // bars [f0, iend) are regular; bar iend is the last
    int i = f0;
    long long wofs = 0;
    // PF: the loads run one group of SB_U bars ahead of the arithmetic
    // (software pipelining; Nsight Compute on the H200 put long-scoreboard
    // waits on these loads first among the stalls at 3 warps per
    // scheduler). fp32 with one combo per thread only: the 12 registers fit
    // under the 72 that 13 blocks of 64 threads allow; fp64 already spills.
    constexpr bool PF = Sig::kPrefetch && K == 1;
    F nr[SB_U];
    Val nv[K][SB_U];
    if (PF && i + SB_PW <= iend) {
#pragma unroll
        for (int u = 0; u < SB_U; ++u) {
            nr[u] = R[i + u + 1];
#pragma unroll
            for (int k = 0; k < K; ++k) nv[k][u] = sig[k].load(i + u);
        }
    }
    for (; i + SB_PW <= iend; i += SB_PW) {
        unsigned pw[K];
#pragma unroll
        for (int k = 0; k < K; ++k) pw[k] = 0u;
#pragma unroll 1
        for (int q = 0; q < SB_PW; q += SB_U) {
            const int ib = i + q;
            F rr[SB_U];
            Val va[K][SB_U];
            if constexpr (PF) {
                // The next group: the next word's first group when the loop
                // goes on (never clamped then: i + 2*SB_PW <= iend), else
                // bars in range whose values are not used.
                const int nb = min(ib + SB_U, iend - SB_U + 1);
#pragma unroll
                for (int u = 0; u < SB_U; ++u) {
                    rr[u] = nr[u];
                    nr[u] = R[nb + u + 1];
#pragma unroll
                    for (int k = 0; k < K; ++k) {
                        va[k][u] = nv[k][u];
                        nv[k][u] = sig[k].load(nb + u);
                    }
                }
            } else {
#pragma unroll
                for (int u = 0; u < SB_U; ++u) {
                    rr[u] = R[ib + u + 1];
#pragma unroll
                    for (int k = 0; k < K; ++k) va[k][u] = sig[k].load(ib + u);
                }
            }
#pragma unroll
            for (int u = 0; u < SB_U; ++u) {
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    const int pos = sig[k].next(va[k][u], s[k].prev, ib + u);
                    F v = sb_step_pos<F>(s[k], pos, rr[u], false, keep, keep2);
                    hist[(k * SB_BINS + sb_bin<F>(v, k0, shift)) * SB_BLOCK + tid] += 1;
                    pw[k] = (pw[k] << 2) | ((unsigned)s[k].prev & 3u);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
            if (K == 1 || j0 + k < count) posbuf[wofs + j0 + k] = pw[k];
        }
        wofs += count;
    }
    if (i <= iend) {
        // The tail word: the remaining regular bars, then the last bar.
        const int tb = iend - i + 1; // 1..SB_PW bars
        unsigned pw[K];
#pragma unroll
        for (int k = 0; k < K; ++k) pw[k] = 0u;
        for (; i <= iend; ++i) {
            const bool last = i == iend;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int pos = sig[k].next(sig[k].load(i), s[k].prev, i);
                F v = sb_step_pos<F>(s[k], pos, R[i + 1], last, keep, keep2);
                hist[(k * SB_BINS + sb_bin<F>(v, k0, shift)) * SB_BLOCK + tid] += 1;
                pw[k] = (pw[k] << 2) | ((unsigned)s[k].prev & 3u);
            }
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
            pw[k] = tb == SB_PW ? pw[k] : pw[k] << (2 * (SB_PW - tb));
            if (K == 1 || j0 + k < count) posbuf[wofs + j0 + k] = pw[k];
        }
    }

    // The bin that holds each combo's k-th smallest rs.
    F mean[K], lo[K], up[K], ssd[K], sumBelow[K], sumIn[K];
    int below[K], inBin[K], nIn[K];
    SbReplay<F> t[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        sb_finish_drawdown<F>(s[k]);
        mean[k] = s[k].sum / (F)(n - 1);
        int bl = 0, b = 0;
        for (; b < SB_BINS - 1; ++b) {
            int h = hist[(k * SB_BINS + b) * SB_BLOCK + tid];
            if (bl + h > kth) break;
            bl += h;
        }
        below[k] = bl;
        inBin[k] = hist[(k * SB_BINS + b) * SB_BLOCK + tid];
        lo[k] = b == 0 ? -sb_inf<F>() : thr[b - 1];
        up[k] = b == SB_BINS - 1 ? sb_inf<F>() : thr[b];
        ssd[k] = (F)0;
        sumBelow[k] = (F)0;
        sumIn[k] = (F)0;
        nIn[k] = 0;
        sb_replay_init<F>(t[k], f0, rf);
        // rs = 0 for bars 0..f0-1: the variance terms in engine's order,
        // and the zeros into the buffer when their bin is the VaR bin.
        F d0 = (F)0 - mean[k];
        F dd = d0 * d0;
        for (int q = 0; q < f0; ++q) ssd[k] = ssd[k] + dd;
        if (!((F)0 < lo[k]) && (F)0 < up[k]) {
            F* mybuf = buf + (long)(j0 + k) * cap;
            for (int q = 0; q < f0; ++q) {
                if (nIn[k] < cap && j0 + k < count) mybuf[nIn[k]] = (F)0;
                ++nIn[k];
            }
        }
    }

    // Pass 2: rs again, from the stored positions and r; the variance
    // around the mean (engine's two-pass order), the VaR bin's values to
    // the buffer, the sums below and in the bin.
#define SB_COLLECT(k, v)                                                                  \
    do {                                                                                  \
        F d_ = (v) - mean[k];                                                             \
        F d2_ = d_ * d_;                                                                  \
        ssd[k] = ssd[k] + d2_;                                                            \
        const bool isBelow_ = (v) < lo[k];                                                \
        const bool isIn_ = !isBelow_ && (v) < up[k];                                      \
        sumBelow[k] = sumBelow[k] + (isBelow_ ? (v) : (F)0);                              \
        sumIn[k] = sumIn[k] + (isIn_ ? (v) : (F)0);                                       \
        if (isIn_) {                                                                      \
            if (nIn[k] < cap && j0 + k < count) buf[(long)(j0 + k) * cap + nIn[k]] = (v); \
            ++nIn[k];                                                                     \
        }                                                                                 \
    } while (0)
    // The position words are read one word ahead (pass 1 wrote a word for
    // every full group and one for the tail, so word w+1 exists while the
    // loop runs): the load of 3.84 GB of words that no cache holds is no
    // longer waited on at the top of every group.
    i = f0;
    wofs = 0;
    unsigned npw[K];
#pragma unroll
    for (int k = 0; k < K; ++k) npw[k] = posbuf[jc[k]];
    if (PF && i + SB_PW <= iend) {
#pragma unroll
        for (int u = 0; u < SB_U; ++u) nr[u] = R[i + u + 1];
    }
    for (; i + SB_PW <= iend; i += SB_PW) {
        unsigned pw[K];
        wofs += count;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            pw[k] = npw[k];
            npw[k] = posbuf[wofs + jc[k]];
        }
#pragma unroll 1
        for (int q = 0; q < SB_PW; q += SB_U) {
            F rr[SB_U];
            if constexpr (PF) {
                // r one group ahead too (as in pass 1; nb stays in range).
                const int nb = min(i + q + SB_U, iend - SB_U + 1);
#pragma unroll
                for (int u = 0; u < SB_U; ++u) {
                    rr[u] = nr[u];
                    nr[u] = R[nb + u + 1];
                }
            } else {
#pragma unroll
                for (int u = 0; u < SB_U; ++u) rr[u] = R[i + q + u + 1];
            }
#pragma unroll
            for (int u = 0; u < SB_U; ++u) {
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    const int pos = (int)pw[k] >> 30;
                    pw[k] <<= 2;
                    F v = sb_replay<F>(t[k], pos, rr[u], false, keep, keep2, rf, i + q + u);
                    SB_COLLECT(k, v);
                }
            }
        }
    }
    if (i <= iend) {
        unsigned pw[K];
#pragma unroll
        for (int k = 0; k < K; ++k) pw[k] = npw[k];
        for (; i <= iend; ++i) {
            const F rr = R[i + 1];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int pos = (int)pw[k] >> 30;
                pw[k] <<= 2;
                F v = sb_replay<F>(t[k], pos, rr, i == iend, keep, keep2, rf, i);
                SB_COLLECT(k, v);
            }
        }
    }
#undef SB_COLLECT

#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = j0 + k;
        if (j >= count) break;
        F var, cvarSum;
        int cvarCnt, refine, status;
        const SbPosReplay<F> rep{posbuf, (long long)count, j, f0, 0, 0u};
        sb_var<F>(rep, R, n, f0, keep, keep2, kth,
                  hist + k * SB_BINS * SB_BLOCK + tid, SB_BLOCK, below[k], inBin[k], lo[k], up[k], sumBelow[k], sumIn[k],
                  nIn[k], buf + (long)j * cap, cap, var, cvarSum, cvarCnt, refine, status);
        outF[OF_E * count + j] = s[k].E;
        outF[OF_MINRATIO * count + j] = s[k].minRatio;
        outF[OF_SUM * count + j] = s[k].sum;
        outF[OF_SSD * count + j] = ssd[k];
        outF[OF_NEG2 * count + j] = t[k].neg2; // pass 2's: min(rs - rf, 0)^2
        outF[OF_GAINS * count + j] = s[k].gains;
        outF[OF_LOSSES * count + j] = s[k].losses;
        outF[OF_VAR * count + j] = var;
        outF[OF_CVARSUM * count + j] = cvarSum;
        outI[OI_TRADES * count + j] = s[k].trades;
        outI[OI_WINS * count + j] = s[k].wins;
        outI[OI_LONG * count + j] = s[k].nlong;
        outI[OI_SHORT * count + j] = s[k].nshort;
        outI[OI_FLAT * count + j] = (n - 1) - s[k].nlong - s[k].nshort;
        outI[OI_CVARCNT * count + j] = cvarCnt;
        outI[OI_REFINE * count + j] = refine;
        outI[OI_STATUS * count + j] = status;
        outF[OF_WINSUM * count + j] = t[k].winSum;
        outF[OF_LOSSSUM * count + j] = t[k].lossSum;
        outF[OF_BEST * count + j] = t[k].best;
        outF[OF_WORST * count + j] = t[k].worst;
        outF[OF_TMEAN * count + j] = t[k].tmean;
        outF[OF_TM2 * count + j] = t[k].tm2;
        outI[OI_LOSERS * count + j] = t[k].losers;
        outI[OI_DDBARS * count + j] = sb_replay_ddbars<F>(t[k], n);
    }
}

#define SB_SWEEP(NAME, F, K, MINB)                                                                     \
    extern "C" __global__ void __launch_bounds__(SB_BLOCK, MINB) NAME(                                       \
        const F* H, const F* H3, const F* R, int n, int nh, int n3, const int* warmH, const int* warm3, \
        long long comboFirst, int count, F keep, F keep2, F rf, int longOnly, int kth, const F* thr,     \
        unsigned k0, unsigned shift, F* buf, unsigned* posbuf, int cap, F* outF, int* outI) {          \
        const SbArgs<F> A{H, H3, nullptr, nullptr, nullptr, nullptr, nh, n3};                          \
        sweep_body<F, K, SbHullSig<F>>(A, R, n, warmH, warm3, comboFirst, count, keep, keep2, rf, longOnly, \
                                       kth, thr, k0, shift, buf, posbuf, cap, outF, outI);             \
    }

// The families with memory (SBM: SbBandSig or SbChanSig): the hull
// kernel's parameters, then H2, H4, V and T4 (SbArgs; those a signal does
// not read may be null).
#define SB_SWEEP_M(NAME, F, SIG)                                                                        \
    extern "C" __global__ void __launch_bounds__(SB_BLOCK, 13) NAME(                                      \
        const F* H, const F* H3, const F* R, int n, int nh, int n3, const int* warmH, const int* warm3, \
        long long comboFirst, int count, F keep, F keep2, F rf, int longOnly, int kth, const F* thr,     \
        unsigned k0, unsigned shift, F* buf, unsigned* posbuf, int cap, F* outF, int* outI, const F* H2, \
        const F* H4, const F* V, const F* T4) {                                                        \
        const SbArgs<F> A{H, H3, H2, H4, V, T4, nh, n3};                                               \
        sweep_body<F, 1, SIG<F>>(A, R, n, warmH, warm3, comboFirst, count, keep, keep2, rf, longOnly,   \
                                 kth, thr, k0, shift, buf, posbuf, cap, outF, outI);                   \
    }

// MINB: resident blocks per multiprocessor the register budget must allow.
// 13 blocks of 64 threads = 832 per SM: a 102,400-combo launch of one
// combo per thread then fits one wave on a 132-SM H200.
SB_SWEEP(sweep_f32_k1, float, 1, 13)
SB_SWEEP(sweep_f64_k1, double, 1, 13)
SB_SWEEP_M(sweep_band_f32, float, SbBandSig)
SB_SWEEP_M(sweep_band_f64, double, SbBandSig)
SB_SWEEP_M(sweep_chan_f32, float, SbChanSig)
SB_SWEEP_M(sweep_chan_f64, double, SbChanSig)

// ---------------------------------------------------------------------------
// sweep_seg_{f32,f64}: the bar-parallel sweep for small grids.
//   Grid:   one block per combo of the launch (combo comboFirst + blockIdx.x).
//   Block:  SEG_T (256) threads. The combo's bars [first, n-1) are split into
//           SEG_T contiguous segments; thread t owns segment t. Indicator
//           series are series-major here (h[hmaIdx*n + i]) so each thread
//           walks contiguous memory.
//   Steps:  A  each thread finds its segment's exit position if the segment
//              holds a decisive signal (h3 != h), else "pass through";
//              thread 0 scans the segments in order: entry position of each.
//           B  each thread runs the state machine over its segment from its
//              entry position with local equity 1: segment product T, local
//              peak M, min prefix product m, internal min ratio D, sums, counts,
//              histogram (shared atomics). The open incoming trade's product
//              is unknown here (NaN: no win is counted for it).
//           C  thread 0 combines the segments in order: equity, max drawdown
//              min(D_j, E_in*m_j/peak_in) (exact in exact arithmetic: the
//              ratio at a bar is min(P/M, E_in*P/peak_in)), sums; and the
//              product of the trade open at each segment's start, replaying
//              sequentially through segments that hold no change, so every
//              trade's product has engine.Backtest's bits.
//           D  each thread replays its head (bars before its first change)
//              from that product: the incoming trade's win, exactly.
//           E  pass 2: variance around the mean, the VaR bin's values to the
//              combo's buffer in bar order (a count, an in-order scan of the
//              counts, a second walk that writes); thread 0 then selects
//              (sb_var: refinement, if needed, runs in thread 0 serially).
//   Shared: per segment 10 values of F and 4 ints (24 KiB for fp64, 14 KiB
//           for fp32), 32 histogram counters, 31 thresholds.
//   Sums run in another order than engine's (segment by segment), so
//   equity, sums and ratios agree to rounding; positions, trades, wins,
//   counts and VaR are exact.
#define SEG_T 256

template <typename F>
__device__ void sweep_seg_body(const F* __restrict__ H, const F* __restrict__ H3, const F* __restrict__ R,
                               int n, const int* __restrict__ warmH, const int* __restrict__ warm3, int n3,
                               long long comboFirst, int count, F keep, F keep2, int longOnly, int kth,
                               const F* __restrict__ thrIn, unsigned k0, unsigned shift, F* __restrict__ buf, int cap,
                               F* __restrict__ outF, int* __restrict__ outI) {
    __shared__ F thr[SB_BINS - 1];
    __shared__ int hist[SB_BINS]; // the combo's histogram, then sb_var's refinement counters
    __shared__ int sExit[SEG_T], sEntry[SEG_T], sChange[SEG_T], sOff[SEG_T];
    __shared__ F sT[SEG_T], sM[SEG_T], sm[SEG_T], sD[SEG_T], sSum[SEG_T], sNeg2[SEG_T], sGain[SEG_T],
        sLoss[SEG_T], sTail[SEG_T], sTpIn[SEG_T];
    __shared__ int cTrades, cWins, cLong, cShort, cFlat, cIn;
    __shared__ F shMean, shLo, shUp;
    __shared__ int shBelow, shInBin;

    const int tid = threadIdx.x;
    const int j = blockIdx.x;
    for (int b = tid; b < SB_BINS - 1; b += SEG_T) thr[b] = thrIn[b];
    for (int b = tid; b < SB_BINS; b += SEG_T) hist[b] = 0;
    if (tid == 0) {
        cTrades = 0; cWins = 0; cLong = 0; cShort = 0; cFlat = 0; cIn = 0;
    }
    const long long c = comboFirst + j;
    const int hi = (int)(c / n3), ti = (int)(c % n3);
    int first = max(warmH[hi], warm3[ti]);
    first = min(max(first, 0), n - 1);
    const F* h = H + (long)hi * n;
    const F* h3 = H3 + (long)ti * n;
    const int L = n - 1 - first;
    const int seg = (L + SEG_T - 1) / SEG_T;
    const int b0 = first + min(tid * seg, L);
    const int e0 = first + min((tid + 1) * seg, L);
    __syncthreads();

    // A: exit position of the segment (2: no decisive bar, passes through).
    int ex = 2;
    for (int i = b0; i < e0; ++i) {
        F a3 = h3[i], a = h[i];
        ex = a3 > a ? 1 : (a3 < a ? (longOnly ? 0 : -1) : ex);
    }
    sExit[tid] = ex;
    __syncthreads();
    if (tid == 0) {
        int p = 0;
        for (int t = 0; t < SEG_T; ++t) {
            sEntry[t] = p;
            if (sExit[t] != 2) p = sExit[t];
        }
    }
    __syncthreads();

    // B: the segment's state machine from its entry position, local equity 1.
    const int entry = sEntry[tid];
    SbState<F> s;
    sb_init<F>(s, 0);
    s.prev = entry;
    s.tp = entry != 0 ? sb_nan_seg<F>() : (F)0;
    F mMin = sb_inf<F>();
    int headEnd = e0;
    for (int i = b0; i < e0; ++i) {
        int before = s.prev;
        F v = sb_step<F>(s, h3[i], h[i], R[i + 1], i == n - 2, keep, keep2, longOnly);
        headEnd = (headEnd == e0 && s.prev != before) ? i : headEnd;
        mMin = s.E < mMin ? s.E : mMin;
        atomicAdd(&hist[sb_bin<F>(v, k0, shift)], 1);
    }
    sb_finish_drawdown<F>(s);
    sT[tid] = s.E; sM[tid] = s.peak; sm[tid] = mMin; sD[tid] = s.minRatio;
    sSum[tid] = s.sum; sNeg2[tid] = s.neg2; sGain[tid] = s.gains; sLoss[tid] = s.losses;
    sTail[tid] = s.tp;
    sChange[tid] = headEnd < e0;
    atomicAdd(&cTrades, s.trades);
    atomicAdd(&cWins, s.wins);
    atomicAdd(&cLong, s.nlong);
    atomicAdd(&cShort, s.nshort);
    __syncthreads();

    // C: combine in order (thread 0).
    if (tid == 0) {
        F Eg = (F)1, peakG = (F)1, minR = (F)1, sum = (F)0, neg2 = (F)0, gains = (F)0, losses = (F)0;
        F carry = sb_nan_seg<F>();
        for (int t = 0; t < SEG_T; ++t) {
            const int bt = first + min(t * seg, L), et = first + min((t + 1) * seg, L);
            sTpIn[t] = carry;
            if (bt < et) {
                F q = Eg * sm[t];
                q = q / peakG;
                minR = sD[t] < minR ? sD[t] : minR;
                minR = q < minR ? q : minR;
                F pk = Eg * sM[t];
                peakG = pk > peakG ? pk : peakG;
                Eg = Eg * sT[t];
                sum = sum + sSum[t];
                neg2 = neg2 + sNeg2[t];
                gains = gains + sGain[t];
                losses = losses + sLoss[t];
            }
            if (sChange[t]) {
                carry = sTail[t];
            } else if (sEntry[t] != 0) {
                // One trade spans the whole segment: continue its product in order.
                F tp = carry;
                for (int i = bt; i < et; ++i) {
                    F f = sEntry[t] == 1 ? (F)1 + R[i + 1] : (F)1 - R[i + 1];
                    tp = tp * f;
                }
                carry = tp;
            }
        }
        outF[OF_E * count + j] = Eg;
        outF[OF_MINRATIO * count + j] = minR;
        outF[OF_SUM * count + j] = sum;
        outF[OF_NEG2 * count + j] = neg2;
        outF[OF_GAINS * count + j] = gains;
        outF[OF_LOSSES * count + j] = losses;
        shMean = sum / (F)(n - 1);
        // rs = 0 for bars 0..first-1 join the histogram, then the VaR bin.
        hist[sb_bin<F>((F)0, k0, shift)] += first;
        int bl = 0, b = 0;
        for (; b < SB_BINS - 1; ++b) {
            if (bl + hist[b] > kth) break;
            bl += hist[b];
        }
        shBelow = bl;
        shInBin = hist[b];
        shLo = b == 0 ? -sb_inf<F>() : thr[b - 1];
        shUp = b == SB_BINS - 1 ? sb_inf<F>() : thr[b];
    }
    __syncthreads();

    // D: the incoming trade's win, from its exact product.
    if (entry != 0 && b0 < e0) {
        F tp = sTpIn[tid];
        int w = 0;
        for (int i = b0; i < headEnd; ++i) {
            F f = entry == 1 ? (F)1 + R[i + 1] : (F)1 - R[i + 1];
            tp = tp * f;
            if (i == n - 2) {
                F t = tp * keep;
                w += t - (F)1 > (F)0 ? 1 : 0;
            }
        }
        if (headEnd < e0) {
            F t = tp * keep;
            w += t - (F)1 > (F)0 ? 1 : 0;
        }
        if (w) atomicAdd(&cWins, w);
    }

    // E: pass 2 over the segment.
    const F mean = shMean, lo = shLo, up = shUp;
    F* mybuf = buf + (long)j * cap;
    F ssd = (F)0, sumBelow = (F)0, sumIn = (F)0;
    int prev = entry;
    int myIn = 0;
    for (int i = b0; i < e0; ++i) {
        F g = sb_growth<F>(prev, h3[i], h[i], R[i + 1], i == n - 2, keep, keep2, longOnly);
        F v = g - (F)1;
        F d = v - mean;
        F d2 = d * d;
        ssd = ssd + d2;
        const bool isBelow = v < lo;
        const bool isIn = !isBelow && v < up;
        sumBelow = sumBelow + (isBelow ? v : (F)0);
        sumIn = sumIn + (isIn ? v : (F)0);
        myIn += isIn ? 1 : 0;
    }
    // The bin's values go to the buffer in bar order (offsets from an
    // in-order scan of the segments' counts), so the selection and the CVaR
    // sum see the same sequence on every run and every GPU count.
    sOff[tid] = myIn;
    __syncthreads();
    if (tid == 0) {
        int acc = 0;
        for (int t = 0; t < SEG_T; ++t) {
            int cnt = sOff[t];
            sOff[t] = acc;
            acc += cnt;
        }
        cIn = acc;
    }
    __syncthreads();
    if (myIn > 0) {
        int q = sOff[tid];
        prev = entry;
        for (int i = b0; i < e0; ++i) {
            F g = sb_growth<F>(prev, h3[i], h[i], R[i + 1], i == n - 2, keep, keep2, longOnly);
            F v = g - (F)1;
            if (!(v < lo) && v < up) {
                if (q < cap) mybuf[q] = v;
                ++q;
            }
        }
    }
    __syncthreads();
    sSum[tid] = ssd;
    sGain[tid] = sumBelow;
    sLoss[tid] = sumIn;
    __syncthreads();
    if (tid == 0) {
        F ssdT = (F)0, sb = (F)0, si = (F)0;
        F d0 = (F)0 - mean;
        F dd = d0 * d0;
        for (int q = 0; q < first; ++q) ssdT = ssdT + dd;
        int nIn = cIn;
        if (!((F)0 < lo) && (F)0 < up) {
            for (int q = 0; q < first; ++q) {
                if (nIn < cap) mybuf[nIn] = (F)0;
                ++nIn;
            }
        }
        for (int t = 0; t < SEG_T; ++t) {
            ssdT = ssdT + sSum[t];
            sb = sb + sGain[t];
            si = si + sLoss[t];
        }
        F var, cvarSum;
        int cvarCnt, refine, status;
        const SbSigReplay<F> rep{h3, h, 1, 1, longOnly, 0};
        sb_var<F>(rep, R, n, first, keep, keep2, kth, hist, 1, shBelow, shInBin, lo, up, sb, si,
                  nIn, mybuf, cap, var, cvarSum, cvarCnt, refine, status);
        outF[OF_SSD * count + j] = ssdT;
        outF[OF_VAR * count + j] = var;
        outF[OF_CVARSUM * count + j] = cvarSum;
        outI[OI_TRADES * count + j] = cTrades;
        outI[OI_WINS * count + j] = cWins;
        outI[OI_LONG * count + j] = cLong;
        outI[OI_SHORT * count + j] = cShort;
        outI[OI_FLAT * count + j] = (n - 1) - cLong - cShort;
        outI[OI_CVARCNT * count + j] = cvarCnt;
        outI[OI_REFINE * count + j] = refine;
        outI[OI_STATUS * count + j] = status;
    }
}

#define SB_SWEEP_SEG(NAME, F)                                                                            \
    extern "C" __global__ void __launch_bounds__(SEG_T) NAME(                                            \
        const F* H, const F* H3, const F* R, int n, const int* warmH, const int* warm3, int n3,           \
        long long comboFirst, int count, F keep, F keep2, int longOnly, int kth, const F* thr,             \
        unsigned k0, unsigned shift, F* buf, int cap, F* outF, int* outI) {                              \
        sweep_seg_body<F>(H, H3, R, n, warmH, warm3, n3, comboFirst, count, keep, keep2, longOnly, kth,   \
                          thr, k0, shift, buf, cap, outF, outI);                                         \
    }

SB_SWEEP_SEG(sweep_seg_f32, float)
SB_SWEEP_SEG(sweep_seg_f64, double)

// ---------------------------------------------------------------------------
// block_stats_{f32,f64}: the per-block statistics of engine.BlockStats for
// the combos of the last thread-per-combo sweep launch, from the positions
// its pass 1 stored (posbuf) and the bar returns, bar for bar as
// reference.BacktestBlocks computes them.
//   Grid:   ceil(count / SB_BLOCK) blocks; Block: SB_BLOCK threads.
//   Thread: launch combo j = blockIdx.x*SB_BLOCK + tid, as sweep_*_k1 maps
//           it (so its warp's smallest first bar f0, where its stored
//           positions start, is found the same way). It replays the state
//           (sb_regrowth from the stored positions) over bars f0..n-2: rs =
//           g - 1 in F, widened to double and added to its block's sums in
//           bar order (sum, sum of squares, of squared losses, and over all
//           bars rs^3 and rs^4), each product rounded (no FMA); the block's
//           growth as the running product of 1+rs, split every 64 returns
//           from the block's start into a mantissa in [0.5, 1) and a power of
//           two (sb_frexp, Go's math.Frexp), so that the host takes the one
//           log (no transcendental here: libdevice's log uses FMA). A trade
//           is counted in the block of the bar that closes it (won: its
//           product with the exit fee > 1, sb_step's test). Bars before f0
//           return 0: nothing to add but the block's bar count, which the
//           host fills.
//   Output: [j*S + b] per block (sum, sumSq, sumDown, mantissa, exponent,
//           trades, wins), [j] per combo (sum3, sum4). Shared: none.

// sb_frexp splits a normal positive x into m in [0.5, 1) and x = m * 2^e
// (e added to *e), as Go's math.Frexp; zero, negative, subnormal and
// non-finite x are left as they are (their log is what it is either way).
__device__ __forceinline__ double sb_frexp(double x, int* e) {
    long long bits = __double_as_longlong(x);
    const int be = (int)((bits >> 52) & 0x7ff);
    if (x <= 0.0 || be == 0 || be == 0x7ff) return x;
    *e += be - 1022;
    bits = (bits & ~(0x7ffll << 52)) | (1022ll << 52);
    return __longlong_as_double(bits);
}

template <typename F>
__device__ void block_stats_body(const unsigned* __restrict__ posbuf, const F* __restrict__ R, int n, int n3,
                                 const int* __restrict__ warmH, const int* __restrict__ warm3, long long comboFirst,
                                 int count, F keep, F keep2, const int* __restrict__ bounds, int S,
                                 double* __restrict__ oSum, double* __restrict__ oSq, double* __restrict__ oDown,
                                 double* __restrict__ oMant, int* __restrict__ oExp, int* __restrict__ oTrades,
                                 int* __restrict__ oWins, double* __restrict__ oS3, double* __restrict__ oS4) {
    const int tid = threadIdx.x;
    const int j0 = blockIdx.x * SB_BLOCK + tid;
    const int jc = min(j0, count - 1);
    const long long c = comboFirst + jc;
    const int hi = (int)(c / n3), ti = (int)(c % n3);
    int first = max(warmH[hi], warm3[ti]);
    first = min(max(first, 0), n - 1);
    const int f0 = __reduce_min_sync(0xffffffffu, first);
    if (j0 >= count) return;
    const long j = j0;
    const int iend = n - 2;
    double sum = 0.0, sq = 0.0, down = 0.0, prod = 1.0, s3 = 0.0, s4 = 0.0;
    int ex = 0, trades = 0, wins = 0;
    int b = 0;
#define SB_CLOSE_BLOCK()                                      \
    do {                                                      \
        prod = sb_frexp(prod, &ex);                           \
        oSum[j * S + b] = sum;                                \
        oSq[j * S + b] = sq;                                  \
        oDown[j * S + b] = down;                              \
        oMant[j * S + b] = prod;                              \
        oExp[j * S + b] = ex;                                 \
        oTrades[j * S + b] = trades;                          \
        oWins[j * S + b] = wins;                              \
        sum = sq = down = 0.0;                                \
        prod = 1.0;                                           \
        ex = trades = wins = 0;                               \
        ++b;                                                  \
    } while (0)
    while (b < S - 1 && f0 >= bounds[b + 1]) SB_CLOSE_BLOCK();
    int prev = 0;
    F tp = (F)0;
    unsigned pw = 0u;
    long w = 0;
    for (int i = f0; i <= iend; ++i) {
        while (i >= bounds[b + 1]) SB_CLOSE_BLOCK();
        if (((i - f0) & (SB_PW - 1)) == 0) {
            pw = posbuf[w * count + j];
            ++w;
        }
        const int pos = (int)pw >> 30;
        pw <<= 2;
        const F rr = R[i + 1];
        const bool last = i == iend;
        const int d = pos - prev;
        if (d != 0 && prev != 0) {
            F t = tp * keep;
            ++trades;
            wins += t > (F)1 ? 1 : 0;
        }
        if (d != 0 && pos != 0) tp = keep;
        const F f = pos == 1 ? (F)1 + rr : (pos == -1 ? (F)1 - rr : (F)1);
        tp = tp * f;
        if (last && pos != 0) {
            F t2 = tp * keep;
            ++trades;
            wins += t2 > (F)1 ? 1 : 0;
        }
        const F g = sb_regrowth<F>(prev, pos, rr, last, keep, keep2);
        const double v = (double)(g - (F)1);
        const double v2 = __dmul_rn(v, v);
        sum = __dadd_rn(sum, v);
        sq = __dadd_rn(sq, v2);
        if (v < 0.0) down = __dadd_rn(down, v2);
        s3 = __dadd_rn(s3, __dmul_rn(v2, v));
        s4 = __dadd_rn(s4, __dmul_rn(v2, v2));
        prod = __dmul_rn(prod, __dadd_rn(1.0, v));
        if (((i - bounds[b]) & 63) == 63) prod = sb_frexp(prod, &ex);
    }
    while (b < S) SB_CLOSE_BLOCK();
#undef SB_CLOSE_BLOCK
    oS3[j] = s3;
    oS4[j] = s4;
}

#define SB_BLOCKS(SUFFIX, F)                                                                                   \
    extern "C" __global__ void __launch_bounds__(SB_BLOCK) block_stats_##SUFFIX(                              \
        const unsigned* posbuf, const F* R, int n, int n3, const int* warmH, const int* warm3,                 \
        long long comboFirst, int count, F keep, F keep2, const int* bounds, int S, double* oSum, double* oSq,   \
        double* oDown, double* oMant, int* oExp, int* oTrades, int* oWins, double* oS3, double* oS4) {          \
        block_stats_body<F>(posbuf, R, n, n3, warmH, warm3, comboFirst, count, keep, keep2, bounds, S, oSum,    \
                            oSq, oDown, oMant, oExp, oTrades, oWins, oS3, oS4);                                \
    }

SB_BLOCKS(f32, float)
SB_BLOCKS(f64, double)
