// sweep.metal — the fused per-combo backtest in fp32, the Metal twin of
// cuda/kernels/sweep.cu's thread-per-combo kernel (sweep_f32_k1): the
// state machine, fees, trades, wins, equity and drawdown of
// sweep_common.h (sb_step, sb_growth, sb_finish_drawdown) and the exact
// VaR/CVaR 95 through a 32-bin histogram and sb_select.
//
// sweep_f32
//   Grid:   1-D, ceil(count / SB_BLOCK) threadgroups.
//   Group:  SB_BLOCK (64) threads; thread t of group b owns local combo
//           j = b*SB_BLOCK + t, grid combo c = comboFirst + j,
//           (hmaIdx, hma3Idx) = (c / n3, c % n3): neighbouring threads read
//           neighbouring h3 columns of the bar-major series.
//   Thread: runs its combo end to end in reference.Backtest's order:
//           pass 1  sb_step per bar + the histogram of rs over the bins;
//           pass 2  sb_replay replays rs: the two-pass variance, the
//                   values of the VaR bin into the combo's buffer, the
//                   trade metrics, the drawdown run and the downside of
//                   rs - rf (SPEC Part 2 "New metrics");
//           refine  (rare) histogram passes on the float keys of the bin;
//           select  sb_select of the k-th smallest; CVaR sum and count.
//   Threadgroup memory: SB_BINS*SB_BLOCK int32 counters (8 KiB), counter b
//           of thread t at [b*SB_BLOCK + t]; each thread touches only its
//           own column, so no barrier is needed. The 31 bin edges are read
//           from a constant buffer (no shared copy, no barrier).
//   Device: buf, cap floats per combo, written and re-read by its thread.
//   Output: structure of arrays: outF[f*count + j] (SB_NF floats),
//           outI[f*count + j] (SB_NI ints), the fields of cuda's OF_*/OI_*;
//           the host finishes the ratios in float64 as reference.Backtest does.
#include "sweep_common.h"

#define SB_BLOCK 64
#define SB_BINS 32
#define SB_NF 15
#define SB_NI 10

// SweepParams is the constant block of sweep_f32 (metal.sweepParams).
struct SweepParams {
    int n;           // bars
    int nh;          // unique HMA lengths (columns of H)
    int n3;          // unique HMA3 lengths (columns of H3)
    int count;       // combos in this dispatch
    long comboFirst; // grid index of local combo 0
    float keep;      // 1-f
    float keep2;     // (1-f)^2
    int longOnly;
    int kth;         // floor(0.05*(n-2)): the VaR rank
    uint k0;         // bins (cuda.binSpec): first uniform key
    uint shift;      // log2 of the uniform bins' width in keys
    int cap;         // buffer values per combo
    float rf;        // risk-free rate per bar (Sortino's downside)
};

// Order-preserving key of a float: a < b <=> key(a) < key(b) (non-NaN).
static inline uint sb_key(float v) {
    uint u = as_type<uint>(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
static inline float sb_val(uint k) {
    uint u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    return as_type<float>(u);
}

// Bin of v: bins 1..29 uniform in the key from k0 (width 1<<shift), 30 the
// zeros, 31 the positives, 0 below k0 (cuda/kernels/sweep.cu sb_bin).
static inline int sb_bin(float v, uint k0, uint shift) {
    const uint kh = sb_key(v);
    int b = kh < k0 ? 0 : (int)min(((kh - k0) >> shift) + 1u, 29u);
    b = v >= 0.0f ? (v > 0.0f ? 31 : 30) : b;
    return b;
}

SB_KERNEL void sweep_f32(const device float* H [[buffer(0)]], const device float* H3 [[buffer(1)]],
                         const device float* R [[buffer(2)]], const device int* warmH [[buffer(3)]],
                         const device int* warm3 [[buffer(4)]], constant float* thr [[buffer(5)]],
                         constant SweepParams& P [[buffer(6)]], device float* buf [[buffer(7)]],
                         device float* outF [[buffer(8)]], device int* outI [[buffer(9)]], SB_THREAD_INDEX) {
    threadgroup int hist[SB_BINS * SB_BLOCK];
    const int tid = (int)threadIdx.x;
    const int j = (int)(blockIdx.x * SB_BLOCK + threadIdx.x);
    if (j >= P.count) return;
    const int n = P.n, nh = P.nh, n3 = P.n3, cap = P.cap, kth = P.kth, longOnly = P.longOnly;
    const float keep = P.keep, keep2 = P.keep2;
    const uint k0 = P.k0, shift = P.shift;

    const long c = P.comboFirst + j;
    const int hi = (int)(c / n3), ti = (int)(c % n3);
    int first = max(warmH[hi], warm3[ti]);
    first = min(max(first, 0), n - 1);
    const device float* hcol = H + hi;
    const device float* h3col = H3 + ti;
    threadgroup int* myHist = hist + tid;
    device float* mybuf = buf + (long)j * cap;

    // Bars before first are flat with rs = 0 (reference.Backtest's warm-up).
    for (int b = 0; b < SB_BINS; ++b) myHist[b * SB_BLOCK] = 0;
    myHist[sb_bin(0.0f, k0, shift) * SB_BLOCK] = first;

    // Pass 1: the state machine and the histogram.
    SbState<float> s;
    sb_init<float>(s, first);
    for (int i = first; i < n - 1; ++i) {
        float v = sb_step<float>(s, h3col[(long)i * n3], hcol[(long)i * nh], R[i + 1], i == n - 2, keep, keep2,
                                 longOnly);
        myHist[sb_bin(v, k0, shift) * SB_BLOCK] += 1;
    }
    sb_finish_drawdown<float>(s);
    const float mean = s.sum / (float)(n - 1);

    // The bin that holds the k-th smallest rs.
    int below = 0, b = 0;
    for (; b < SB_BINS - 1; ++b) {
        int h = myHist[b * SB_BLOCK];
        if (below + h > kth) break;
        below += h;
    }
    int inBin = myHist[b * SB_BLOCK];
    float lo = b == 0 ? -INFINITY : thr[b - 1];
    float up = b == SB_BINS - 1 ? INFINITY : thr[b];

    // Pass 2: rs again (bars 0..first-1 are zeros): the variance around the
    // mean in the reference's order, the VaR bin's values to the buffer.
    float ssd = 0.0f, sumBelow = 0.0f, sumIn = 0.0f;
    int nIn = 0;
    const float d0 = 0.0f - mean;
    const float dd = d0 * d0;
    for (int q = 0; q < first; ++q) ssd = ssd + dd;
    if (!(0.0f < lo) && 0.0f < up) {
        for (int q = 0; q < first; ++q) {
            if (nIn < cap) mybuf[nIn] = 0.0f;
            ++nIn;
        }
    }
    SbReplay<float> t;
    sb_replay_init<float>(t, first, P.rf);
    for (int i = first; i < n - 1; ++i) {
        const int pos = sb_position<float>(h3col[(long)i * n3], hcol[(long)i * nh], t.prev, longOnly);
        float v = sb_replay<float>(t, pos, R[i + 1], i == n - 2, keep, keep2, P.rf, i);
        float d = v - mean;
        float d2 = d * d;
        ssd = ssd + d2;
        const bool isBelow = v < lo;
        const bool isIn = !isBelow && v < up;
        sumBelow = sumBelow + (isBelow ? v : 0.0f);
        sumIn = sumIn + (isIn ? v : 0.0f);
        if (isIn) {
            if (nIn < cap) mybuf[nIn] = v;
            ++nIn;
        }
    }

    // Refinement (only when the bin overflowed the buffer): 32 sub-bins of
    // the bin's key range, replayed with sb_growth, until it fits.
    int refine = 0;
    while (inBin > cap) {
        uint klo = sb_key(lo), kup = sb_key(up);
        if (kup - klo <= 1u) break;
        uint w = (kup - klo + 31u) / 32u;
        for (int q = 0; q < 32; ++q) myHist[q * SB_BLOCK] = 0;
        if (!(0.0f < lo) && 0.0f < up) {
            uint kv = sb_key(0.0f);
            int q = kv < klo ? 0 : min((int)((kv - klo) / w), 31);
            myHist[q * SB_BLOCK] += first;
        }
        int pv = 0;
        for (int i = first; i < n - 1; ++i) {
            float g = sb_growth<float>(pv, h3col[(long)i * n3], hcol[(long)i * nh], R[i + 1], i == n - 2, keep,
                                       keep2, longOnly);
            float v = g - 1.0f;
            if (!(v < lo) && v < up) {
                uint kv = sb_key(v);
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
        uint nlo = klo + (uint)q * w;
        uint nup = q == 31 ? kup : nlo + w;
        if (nup > kup) nup = kup;
        lo = sb_val(nlo);
        up = sb_val(nup);
        ++refine;
    }
    if (refine > 0) {
        sumBelow = 0.0f;
        sumIn = 0.0f;
        nIn = 0;
        if (!(0.0f < lo) && 0.0f < up) {
            for (int q = 0; q < first; ++q) {
                if (nIn < cap) mybuf[nIn] = 0.0f;
                ++nIn;
            }
        }
        int pv = 0;
        for (int i = first; i < n - 1; ++i) {
            float g = sb_growth<float>(pv, h3col[(long)i * n3], hcol[(long)i * nh], R[i + 1], i == n - 2, keep,
                                       keep2, longOnly);
            float v = g - 1.0f;
            if (v < lo) {
                sumBelow = sumBelow + v;
            } else if (v < up) {
                if (nIn < cap) mybuf[nIn] = v;
                sumIn = sumIn + v;
                ++nIn;
            }
        }
    }
    float var, cvarSum;
    int cvarCnt, status = 0;
    if (nIn <= cap) {
        var = sb_select<float>(mybuf, nIn, kth - below);
        cvarSum = sumBelow;
        cvarCnt = below;
        for (int q = 0; q < nIn; ++q) {
            float v = mybuf[q];
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

    const int cnt = P.count;
    outF[0 * cnt + j] = s.E;
    outF[1 * cnt + j] = s.minRatio;
    outF[2 * cnt + j] = s.sum;
    outF[3 * cnt + j] = ssd;
    outF[4 * cnt + j] = t.neg2;
    outF[5 * cnt + j] = s.gains;
    outF[6 * cnt + j] = s.losses;
    outF[7 * cnt + j] = var;
    outF[8 * cnt + j] = cvarSum;
    outI[0 * cnt + j] = s.trades;
    outI[1 * cnt + j] = s.wins;
    outI[2 * cnt + j] = s.nlong;
    outI[3 * cnt + j] = s.nshort;
    outI[4 * cnt + j] = (n - 1) - s.nlong - s.nshort;
    outI[5 * cnt + j] = cvarCnt;
    outI[6 * cnt + j] = refine;
    outI[7 * cnt + j] = status;
    outF[9 * cnt + j] = t.winSum;
    outF[10 * cnt + j] = t.lossSum;
    outF[11 * cnt + j] = t.best;
    outF[12 * cnt + j] = t.worst;
    outF[13 * cnt + j] = t.tmean;
    outF[14 * cnt + j] = t.tm2;
    outI[8 * cnt + j] = t.losers;
    outI[9 * cnt + j] = sb_replay_ddbars<float>(t, n);
}
