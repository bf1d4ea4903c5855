// sweep.cu — the fused per-combo backtest: positions, fees, trades, wins,
// equity, drawdown, the moments for Sharpe/Sortino/omega and the exact
// VaR/CVaR 95 of docs/SPEC.md, for a contiguous range of combos.
//
// sweep_f32 / sweep_f64
//   Grid:   1-D, ceil(count / SB_BLOCK) blocks.
//   Block:  SB_BLOCK (128) threads, one combo per thread: combo
//           c = comboFirst + blockIdx.x*SB_BLOCK + threadIdx.x, with
//           (hmaIdx, hma3Idx) = (c / n3, c % n3). Consecutive threads take
//           consecutive HMA3 lengths, so the bar-major indicator reads
//           h3[i*n3 + hma3Idx] coalesce across a warp and h[i*nh + hmaIdx]
//           and r[i+1] are broadcasts.
//   Thread: owns its combo end to end, sequentially over the bars, in the
//           exact order of engine.Backtest (so fp64 results equal the CPU
//           reference's bits except for the CVaR sum order):
//           pass 1  the state machine + a 64-bin histogram of rs over the
//                   job's thresholds (quantiles of the candidate returns);
//           pass 2  replays the positions to get rs again: the two-pass
//                   variance, and the values of the bin that holds the k-th
//                   smallest are copied to the thread's buffer (cap values);
//           refine  only if that bin holds more than cap values: histogram
//                   passes over the float bits of the bin's range (radix
//                   select on the order-preserving key) until it fits;
//           select  Hoare select of the k-th smallest in the buffer; CVaR is
//                   the sum below the bin plus the buffer values <= VaR.
//   Shared: SB_BINS*SB_BLOCK int32 counters (32 KiB; counter b of thread t
//           at [b*SB_BLOCK + t], so a warp's increments hit 32 distinct
//           banks) plus SB_BINS-1 thresholds (504 B as double). 32.5 KiB
//           static, under the 48 KiB default.
//   Output: structure of arrays, one entry per combo of the launch:
//           outF[f*count + j] (SB_NF fields of F), outI[f*count + j]
//           (SB_NI int32 fields). The host finishes the ratios
//           (sqrt, pow) in float64 exactly as engine.Backtest does.
#include "sweep_common.h"

#define SB_BLOCK 128
#define SB_BINS 64
#define SB_NF 9
#define SB_NI 8

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

template <typename F> __device__ __forceinline__ F sb_inf();
template <> __device__ __forceinline__ float sb_inf<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double sb_inf<double>() { return __longlong_as_double(0x7ff0000000000000ll); }

// Bin of v among the 63 sorted thresholds: the number of thresholds <= v.
template <typename F>
__device__ __forceinline__ int sb_bin(const F* thr, F v) {
    int b = 0;
#pragma unroll
    for (int step = 32; step > 0; step >>= 1) {
        if (thr[b + step - 1] <= v) b += step;
    }
    return b;
}

template <typename F>
__device__ void sweep_body(const F* __restrict__ H, const F* __restrict__ H3, const F* __restrict__ R,
                           int n, int nh, int n3, const int* __restrict__ warmH, const int* __restrict__ warm3,
                           long long comboFirst, int count, F keep, F keep2, int longOnly, int kth,
                           const F* __restrict__ thrIn, F* __restrict__ buf, int cap,
                           F* __restrict__ outF, int* __restrict__ outI) {
    __shared__ int hist[SB_BINS * SB_BLOCK];
    __shared__ F thr[SB_BINS - 1];
    const int tid = threadIdx.x;
    for (int b = tid; b < SB_BINS - 1; b += SB_BLOCK) thr[b] = thrIn[b];
    __syncthreads();
    const int j = blockIdx.x * SB_BLOCK + tid;
    if (j >= count) return;
    const long long c = comboFirst + j;
    const int hi = (int)(c / n3), ti = (int)(c % n3);
    int first = max(warmH[hi], warm3[ti]);
    first = min(max(first, 0), n - 1);
    const F* hcol = H + hi;
    const F* h3col = H3 + ti;
    int* myHist = hist + tid;
#pragma unroll 8
    for (int b = 0; b < SB_BINS; ++b) myHist[b * SB_BLOCK] = 0;

    // Pass 1: the state machine; rs[0..first) are zeros.
    SbState<F> s;
    sb_init<F>(s, first);
    myHist[sb_bin<F>(thr, (F)0) * SB_BLOCK] += first;
    for (int i = first; i < n - 1; ++i) {
        F a3 = h3col[(long)i * n3];
        F a = hcol[(long)i * nh];
        F rr = R[i + 1];
        F v = sb_step<F>(s, a3, a, rr, i == n - 2, keep, keep2, longOnly);
        myHist[sb_bin<F>(thr, v) * SB_BLOCK] += 1;
    }
    sb_finish_drawdown<F>(s);
    const F mean = s.sum / (F)(n - 1);

    // The bin that holds the k-th smallest.
    int below = 0, b = 0;
    for (; b < SB_BINS - 1; ++b) {
        int h = myHist[b * SB_BLOCK];
        if (below + h > kth) break;
        below += h;
    }
    int inBin = myHist[b * SB_BLOCK];
    F lo = b == 0 ? -sb_inf<F>() : thr[b - 1];
    F up = b == SB_BINS - 1 ? sb_inf<F>() : thr[b];

    // Pass 2: variance around the mean (engine's two-pass order), the
    // bin's values to the buffer, the sum below the bin.
    F* mybuf = buf + (long)j * cap;
    F ssd = (F)0, sumBelow = (F)0, sumIn = (F)0;
    int nIn = 0;
    {
        F d0 = (F)0 - mean;
        F dd = d0 * d0;
        for (int i = 0; i < first; ++i) ssd = ssd + dd;
        if (!((F)0 < lo) && (F)0 < up) {
            for (int i = 0; i < first; ++i) {
                if (nIn < cap) mybuf[nIn] = (F)0;
                ++nIn;
            }
        }
    }
    int prev = 0;
    for (int i = first; i < n - 1; ++i) {
        F a3 = h3col[(long)i * n3];
        F a = hcol[(long)i * nh];
        F rr = R[i + 1];
        F g = sb_growth<F>(prev, a3, a, rr, i == n - 2, keep, keep2, longOnly);
        F v = g - (F)1;
        F d = v - mean;
        F d2 = d * d;
        ssd = ssd + d2;
        if (v < lo) {
            sumBelow = sumBelow + v;
        } else if (v < up) {
            if (nIn < cap) mybuf[nIn] = v;
            sumIn = sumIn + v;
            ++nIn;
        }
    }

    // Refinement (rare): the bin overflowed the buffer. Split its key range
    // into 32 sub-bins per pass until the k-th smallest's sub-bin fits or is
    // one key wide (then every value in it equals lo).
    typedef typename SbKey<F>::U U;
    int refine = 0;
    while (inBin > cap) {
        U klo = SbKey<F>::key(lo), kup = SbKey<F>::key(up);
        if (kup - klo <= (U)1) break;
        U w = (kup - klo + (U)31) / (U)32;
        for (int q = 0; q < 32; ++q) myHist[q * SB_BLOCK] = 0;
        prev = 0;
        for (int i = 0; i < first; ++i) {
            F v = (F)0;
            if (!(v < lo) && v < up) {
                U kv = SbKey<F>::key(v);
                int q = kv < klo ? 0 : min((int)((kv - klo) / w), 31);
                myHist[q * SB_BLOCK] += 1;
            }
        }
        for (int i = first; i < n - 1; ++i) {
            F g = sb_growth<F>(prev, h3col[(long)i * n3], hcol[(long)i * nh], R[i + 1], i == n - 2, keep, keep2, longOnly);
            F v = g - (F)1;
            if (!(v < lo) && v < up) {
                U kv = SbKey<F>::key(v);
                int q = kv < klo ? 0 : min((int)((kv - klo) / w), 31);
                myHist[q * SB_BLOCK] += 1;
            }
        }
        int q = 0;
        for (; q < 31; ++q) {
            int h = myHist[q * SB_BLOCK];
            if (below + h > kth) break;
            below += h;
        }
        inBin = myHist[q * SB_BLOCK];
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
        prev = 0;
        for (int i = 0; i < first; ++i) {
            F v = (F)0;
            if (v < lo) {
                sumBelow = sumBelow + v;
            } else if (v < up) {
                if (nIn < cap) mybuf[nIn] = v;
                sumIn = sumIn + v;
                ++nIn;
            }
        }
        for (int i = first; i < n - 1; ++i) {
            F g = sb_growth<F>(prev, h3col[(long)i * n3], hcol[(long)i * nh], R[i + 1], i == n - 2, keep, keep2, longOnly);
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

    F var, cvarSum;
    int cvarCnt;
    int status = 0;
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

    outF[OF_E * count + j] = s.E;
    outF[OF_MINRATIO * count + j] = s.minRatio;
    outF[OF_SUM * count + j] = s.sum;
    outF[OF_SSD * count + j] = ssd;
    outF[OF_NEG2 * count + j] = s.neg2;
    outF[OF_GAINS * count + j] = s.gains;
    outF[OF_LOSSES * count + j] = s.losses;
    outF[OF_VAR * count + j] = var;
    outF[OF_CVARSUM * count + j] = cvarSum;
    outI[OI_TRADES * count + j] = s.trades;
    outI[OI_WINS * count + j] = s.wins;
    outI[OI_LONG * count + j] = s.nlong;
    outI[OI_SHORT * count + j] = s.nshort;
    outI[OI_FLAT * count + j] = s.nflat;
    outI[OI_CVARCNT * count + j] = cvarCnt;
    outI[OI_REFINE * count + j] = refine;
    outI[OI_STATUS * count + j] = status;
}

#define SB_SWEEP(NAME, F)                                                                              \
    extern "C" __global__ void __launch_bounds__(SB_BLOCK) NAME(                                       \
        const F* H, const F* H3, const F* R, int n, int nh, int n3, const int* warmH, const int* warm3, \
        long long comboFirst, int count, F keep, F keep2, int longOnly, int kth, const F* thr, F* buf,   \
        int cap, F* outF, int* outI) {                                                                 \
        sweep_body<F>(H, H3, R, n, nh, n3, warmH, warm3, comboFirst, count, keep, keep2, longOnly, kth, \
                      thr, buf, cap, outF, outI);                                                      \
    }

SB_SWEEP(sweep_f32, float)
SB_SWEEP(sweep_f64, double)
