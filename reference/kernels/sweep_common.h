// sweep_common.h — the arithmetic every GPU backend shares (CUDA now, Metal
// later): the WMA window sum, the per-bar state machine of docs/SPEC.md
// ("Signal, position, fills", "Trades", "Metrics per combo") and the exact
// k-th smallest selection. Plain C-like functions templated on the float
// type F (float or double); no thread indexing, no shared memory, no
// intrinsics: the kernels that include this file own the parallel layout.
//
// Bit-exactness: every operation below is one IEEE operation rounded to F,
// in the order engine/wma.go and engine/backtest.go evaluate it. Compile
// with --fmad=false (CUDA) or with fast math off (Metal): a fused
// multiply-add would change the bits.
#ifndef SWEEPBENCH_SWEEP_COMMON_H
#define SWEEPBENCH_SWEEP_COMMON_H

#if defined(__CUDACC__)
#define SB_FN __device__ __forceinline__
#define SB_GLOBAL            /* generic pointers reach global memory */
#define SB_THREAD            /* thread-private references need no qualifier */
#elif defined(__METAL_VERSION__)
#define SB_FN inline
#define SB_GLOBAL device
#define SB_THREAD thread
#define SB_HEADER_METAL_READY 1 /* the prelude needs no double stand-in */
#else
#define SB_FN inline
#define SB_GLOBAL
#define SB_THREAD
#endif

// ---- WMA (SPEC "Indicators"; engine.WMA) ---------------------------------

// SB_WIDE is the type p(p+1)/2 is formed in: double, as engine.WMA does
// (F(float64(p)*float64(p+1)/2)); float on Metal, which has no double and
// where it is the same number for every p < 5792 (p(p+1) is even and below
// 2^25, so exact in float's 24-bit significand).
#if defined(__METAL_VERSION__)
#define SB_WIDE float
#else
#define SB_WIDE double
#endif

// sb_wma_den is p(p+1)/2 evaluated in SB_WIDE and rounded to F.
template <typename F>
SB_FN F sb_wma_den(int p) {
    return (F)((SB_WIDE)p * (SB_WIDE)(p + 1) / (SB_WIDE)2);
}

// sb_wma_window returns WMA(x, p) at the bar whose window ends at w[(p-1)*stride]:
// sum_{k=1..p} k*w[(k-1)*stride], oldest first, each product rounded, then /den.
// The weight k is carried as a float incremented by 1 (exact below 2^24,
// so the same bits as (F)k) instead of converted every term, and the
// contiguous case has its own loop: the indicator kernels are bound by
// instructions issued, three per term here against six.
template <typename F>
SB_FN F sb_wma_window(const SB_GLOBAL F* w, long stride, int p, F den) {
    F acc = (F)0;
    F kf = (F)0;
    if (stride == 1) {
#pragma unroll 4
        for (int k = 0; k < p; ++k) {
            kf = kf + (F)1;
            F prod = kf * w[k];
            acc = acc + prod;
        }
        return acc / den;
    }
    for (int k = 1; k <= p; ++k) {
        kf = kf + (F)1;
        F prod = kf * w[(long)(k - 1) * stride];
        acc = acc + prod;
    }
    return acc / den;
}

// sb_wma_prefix evaluates engine.WMAPrefix at prefix index t (t >= p):
// ((S2[t]-S2[t-p]) - (t-p)*(S1[t]-S1[t-p])) / den, each operation rounded.
template <typename F>
SB_FN F sb_wma_prefix(const SB_GLOBAL F* s1, const SB_GLOBAL F* s2, int t, int p, F den) {
    F a = s2[t] - s2[t - p];
    F b = s1[t] - s1[t - p];
    F c = (F)(t - p) * b;
    return (a - c) / den;
}

// ---- per-bar state machine (engine.Backtest) ------------------------------

// SbState is one combo's running state over bars first..n-2.
template <typename F>
struct SbState {
    F E;        // equity E[i+1]
    F peak;     // running max of E
    F segMin;   // min of E since peak was set (drawdown without a division per bar)
    F minRatio; // min over closed peak segments of segMin/peak
    F ddThr;    // a closing segment can lower minRatio only if segMin < peak*ddThr
    F sum;      // sum rs
    F neg2;     // sum min(rs,0)^2
    F gains;    // sum max(rs,0)
    F losses;   // sum max(-rs,0)
    F tp;       // running product of the open trade, entry fee included
    int prev;   // pos[i-1]
    int trades, wins, nlong, nshort, nflat;
};

template <typename F>
SB_FN void sb_init(SB_THREAD SbState<F>& s, int first) {
    s.E = (F)1; s.peak = (F)1; s.segMin = (F)1; s.minRatio = (F)1; s.ddThr = (F)1;
    s.sum = (F)0; s.neg2 = (F)0; s.gains = (F)0; s.losses = (F)0; s.tp = (F)0;
    s.prev = 0; s.trades = 0; s.wins = 0; s.nlong = 0; s.nshort = 0; s.nflat = first;
}

// sb_dd_thr is the drawdown filter's factor for a new minimum ratio q:
// q*(1 + 16 ulp), so that segMin >= fl(peak*ddThr) proves segMin/peak > q
// (rounding is monotone; the margin covers the two roundings). Below
// 2^-100 (never on real data) the filter is off: a huge factor, so every
// closing segment is divided.
template <typename F> SB_FN F sb_dd_thr(F q);
template <> SB_FN float sb_dd_thr<float>(float q) {
    return q < 7.8886091e-31f ? 3.0e38f : q * 1.0000019073486328f;
}
#if !defined(__METAL_VERSION__)
template <> SB_FN double sb_dd_thr<double>(double q) {
    return q < 7.8886090522101181e-31 ? 1.0e308 : q * 1.0000000000000036;
}
#endif

// sb_position is pos[i] (SPEC "Signal"): +1 if h3 > h, -1 (0 long-only) if
// h3 < h, else unchanged; NaN compares false, so undefined keeps prev.
template <typename F>
SB_FN int sb_position(F a3, F a, int prev, int longOnly) {
    int pos = prev;
    if (a3 > a) {
        pos = 1;
    } else if (a3 < a) {
        pos = longOnly ? 0 : -1;
    }
    return pos;
}

// The per-bar functions below are written with selects instead of
// branches: neighbouring GPU threads run different combos, so a branch on
// the position would run every side of it for the whole warp. Each select
// keeps engine.Backtest's arithmetic exactly: multiplying by 1 and adding
// +0 leave a finite positive (or +0) accumulator's bits unchanged.

// sb_regrowth is the bar's growth factor g of engine.Backtest for a known
// position pos (fees at a change of position, (1 +- r) while held, the
// exit fee on the last bar). It updates prev only: the light second pass
// replays it from the positions pass 1 stored.
template <typename F>
SB_FN F sb_regrowth(SB_THREAD int& prev, int pos, F rr, bool last, F keep, F keep2) {
    int d = pos - prev;
    F g = d == 0 ? (F)1 : ((d == 2 || d == -2) ? keep2 : keep);
    F up = (F)1 + rr;
    F dn = (F)1 - rr;
    F f = pos == 1 ? up : (pos == -1 ? dn : (F)1);
    g = g * f;
    F e = (last && pos != 0) ? keep : (F)1;
    g = g * e;
    prev = pos;
    return g;
}

// sb_growth is sb_regrowth with the position decided from the indicators
// (the rarely taken refinement replays use it).
template <typename F>
SB_FN F sb_growth(SB_THREAD int& prev, F a3, F a, F rr, bool last, F keep, F keep2, int longOnly) {
    int pos = sb_position<F>(a3, a, prev, longOnly);
    return sb_regrowth<F>(prev, pos, rr, last, keep, keep2);
}

// ---- the families with memory (SPEC Part 2: zscore, rsi, breakout) --------

// sb_band is one bar of the three-state machine that zscore, rsi and
// breakout share (strategy.zscoreStep, rsiStates, breakoutMachine), in
// long-short (the mode maps -1 to 0 after: sb_band_pos), from state st at
// the value v against four levels, each predicate strict:
//   from  0: v < tLE -> +1, else v > tSE -> -1;
//   from +1: v > tLX -> 0, and then v > tSE -> -1 on the same bar;
//   from -1: v < tSX -> 0, and then v < tLE -> +1.
// A NaN (v or a level) compares false: the state is kept. The families
// map onto it exactly (engine.Pairs, Machine Bands and Channel): zscore
// v = z, tLE = -entry, tSE = entry, tLX = the largest F below -exit
// (z >= -exit is z > that), tSX = the smallest F above exit; rsi v = RSI,
// tLE = tSX = lower, tSE = tLX = upper; breakout v = -close and the
// negated channels (-c < -up is c > up: negation is exact).
template <typename F>
SB_FN int sb_band(int st, F v, F tLE, F tSE, F tLX, F tSX) {
    const int fromFlat = v < tLE ? 1 : (v > tSE ? -1 : 0);
    const int fromLong = v > tLX ? (v > tSE ? -1 : 0) : 1;
    const int fromShort = v < tSX ? (v < tLE ? 1 : 0) : -1;
    return st == 0 ? fromFlat : (st == 1 ? fromLong : fromShort);
}

// sb_is_reset reports whether v is -0, the value that sends the band
// machine to 0 (zscore's prefix formulation where the window's variance
// is negative: undefined, SPEC; no family's value is -0 otherwise).
#if defined(__CUDACC__)
SB_FN bool sb_is_reset(float v) { return __float_as_uint(v) == 0x80000000u; }
SB_FN bool sb_is_reset(double v) { return (unsigned long long)__double_as_longlong(v) == 0x8000000000000000ull; }
#elif defined(__METAL_VERSION__)
SB_FN bool sb_is_reset(float v) { return as_type<uint>(v) == 0x80000000u; }
#else
SB_FN bool sb_is_reset(float v) { return v == 0.0f && 1.0f / v < 0.0f; }
SB_FN bool sb_is_reset(double v) { return v == 0.0 && 1.0 / v < 0.0; }
#endif

// sb_band_pos is the position the state st holds: st, or 0 for -1 when
// long-only (SPEC Part 2 "Families": the mode applies after the machine).
SB_FN int sb_band_pos(int st, int longOnly) { return (longOnly && st == -1) ? 0 : st; }

// sb_step_pos is one bar of engine.Backtest's loop for the bar's position
// pos (sb_step's, or a family's machine's): it updates every accumulator
// and returns the strategy return rs = g - 1.
template <typename F>
SB_FN F sb_step_pos(SB_THREAD SbState<F>& s, int pos, F rr, bool last, F keep, F keep2) {
    int prev = s.prev;
    int d = pos - prev;
    bool changed = d != 0;
    F g = !changed ? (F)1 : ((d == 2 || d == -2) ? keep2 : keep);
    // The trade held until now closes: a win if tp*(1-f) - 1 > 0, which
    // is t > 1 (t - 1 rounds to a positive value exactly when t > 1; NaN
    // compares false either way): one operation fewer per bar.
    F t = s.tp * keep;
    s.wins += (changed && prev != 0 && t > (F)1) ? 1 : 0;
    bool enter = changed && pos != 0;
    s.trades += enter ? 1 : 0;
    F tp = enter ? keep : s.tp;
    F up = (F)1 + rr;
    F dn = (F)1 - rr;
    F f = pos == 1 ? up : (pos == -1 ? dn : (F)1);
    g = g * f;
    tp = tp * f;
    s.nlong += pos == 1 ? 1 : 0;
    s.nshort += pos == -1 ? 1 : 0; // flat bars: (n-1) - long - short at the end
    bool exitLast = last && pos != 0;
    F e = exitLast ? keep : (F)1;
    g = g * e;
    F t2 = tp * keep;
    s.wins += (exitLast && t2 > (F)1) ? 1 : 0;
    s.tp = tp;
    s.prev = pos;
    F E = s.E * g;
    s.E = E;
    // Max drawdown: min over bars of E/peak. For a fixed peak a correctly
    // rounded division is monotone in E, so the minimum ratio of a peak
    // segment is segMin/peak, and it matters only when it is below
    // minRatio: the segment closing at a new peak is divided only when
    // segMin < peak*ddThr (rare: a drawdown about as deep as the deepest so
    // far); the result has engine.Backtest's bits (per-bar E/peak).
    const bool newPeak = E > s.peak;
    const F lim = s.peak * s.ddThr;
    if (newPeak && s.segMin < lim) {
        F q = s.segMin / s.peak;
        if (q < s.minRatio) {
            s.minRatio = q;
            s.ddThr = sb_dd_thr<F>(q);
        }
    }
    F sm = E < s.segMin ? E : s.segMin;
    s.segMin = newPeak ? E : sm;
    s.peak = newPeak ? E : s.peak;
    F v = g - (F)1;
    s.sum = s.sum + v;
    F gv = v > (F)0 ? v : (F)0;
    F lv = v < (F)0 ? v : (F)0;
    F v2 = lv * lv;
    s.gains = s.gains + gv;
    s.losses = s.losses - lv;
    s.neg2 = s.neg2 + v2;
    return v;
}

// sb_step is sb_step_pos with Part 1's position (sb_position) from the
// indicators.
template <typename F>
SB_FN F sb_step(SB_THREAD SbState<F>& s, F a3, F a, F rr, bool last, F keep, F keep2, int longOnly) {
    return sb_step_pos<F>(s, sb_position<F>(a3, a, s.prev, longOnly), rr, last, keep, keep2);
}

// ---- pass 2: the trade metrics (SPEC Part 2 "New metrics") ----------------

// SbReplay is what a kernel's second pass over a combo's stored positions
// accumulates beside the variance: the trade accumulators of
// kernels.Accumulators (AddTrade: the trades' returns R in the order they
// close, WinSum/LossSum/Losers, Best/Worst, Welford's TMean/TM2), the
// longest run of bars below an earlier equity peak (DDBars, from the
// equity recomputed bar by bar: the same products as pass 1, so the same
// bits), and Sortino's downside sum of min(rs - rf, 0)^2 (Neg2, rf the
// risk-free rate per bar; with rf = 0 it equals pass 1's neg2 bit for
// bit). The loop it mirrors is reference/backtest.go's backtest and
// finishLoop, statement for statement.
template <typename F>
struct SbReplay {
    F E, peak, tp;
    F winSum, lossSum, best, worst, tmean, tm2, neg2;
    int prev, k, losers, ddBars, top;
};

// sb_replay_init starts pass 2 at bar f0 (a warp's first bar): the f0
// warm-up returns (zeros) are already in neg2, as finishLoop sums every
// return from bar 0.
template <typename F>
SB_FN void sb_replay_init(SB_THREAD SbReplay<F>& t, int f0, F rf) {
    t.E = (F)1; t.peak = (F)1; t.tp = (F)0;
    t.winSum = (F)0; t.lossSum = (F)0; t.best = (F)0; t.worst = (F)0; t.tmean = (F)0; t.tm2 = (F)0;
    t.neg2 = (F)0;
    F d0 = (F)0 - rf;
    d0 = d0 < (F)0 ? d0 : (F)0;
    F n0 = d0 * d0;
    for (int q = 0; q < f0; ++q) t.neg2 = t.neg2 + n0;
    t.prev = 0; t.k = 0; t.losers = 0; t.ddBars = 0; t.top = f0;
}

// sb_add_trade folds one closed trade's return R, the k-th trade closed,
// into t (kernels.Accumulators.AddTrade). R is never NaN or -0 (it is
// x - 1 for a positive x), so the selects equal Go's max and min.
template <typename F>
SB_FN void sb_add_trade(SB_THREAD SbReplay<F>& t, F R) {
    if (R > (F)0) {
        t.winSum = t.winSum + R;
    } else if (R < (F)0) {
        t.lossSum = t.lossSum + R;
        t.losers += 1;
    }
    if (t.k == 1) {
        t.best = R;
        t.worst = R;
    } else {
        t.best = R > t.best ? R : t.best;
        t.worst = R < t.worst ? R : t.worst;
    }
    F d = R - t.tmean;
    F q = d / (F)t.k;
    t.tmean = t.tmean + q;
    F e = R - t.tmean;
    F de = d * e;
    t.tm2 = t.tm2 + de;
}

// sb_replay is bar i of pass 2 for the known position pos (the stored
// one): the growth factor g exactly as sb_regrowth (and pass 1's sb_step)
// forms it, the trade closed and opened at a change of position (rare:
// a branch), the exit at the last bar, the equity and its drawdown run,
// and the downside term. It returns rs = g - 1.
template <typename F>
SB_FN F sb_replay(SB_THREAD SbReplay<F>& t, int pos, F rr, bool last, F keep, F keep2, F rf, int i) {
    const int d = pos - t.prev;
    F g = d == 0 ? (F)1 : ((d == 2 || d == -2) ? keep2 : keep);
    if (d != 0) {
        if (t.prev != 0) {
            F x = t.tp * keep;
            sb_add_trade<F>(t, x - (F)1);
        }
        if (pos != 0) {
            t.k += 1;
            t.tp = keep;
        }
    }
    F up = (F)1 + rr;
    F dn = (F)1 - rr;
    F f = pos == 1 ? up : (pos == -1 ? dn : (F)1);
    g = g * f;
    t.tp = t.tp * f; // flat: tp * 1, the same bits
    if (last && pos != 0) {
        g = g * keep;
        F x = t.tp * keep;
        sb_add_trade<F>(t, x - (F)1);
    }
    t.prev = pos;
    F E = t.E * g;
    t.E = E;
    if (E >= t.peak) {
        t.peak = E;
        int run = i - t.top;
        t.ddBars = run > t.ddBars ? run : t.ddBars;
        t.top = i + 1;
    }
    F v = g - (F)1;
    F dr = v - rf;
    dr = dr < (F)0 ? dr : (F)0;
    F d2 = dr * dr;
    t.neg2 = t.neg2 + d2;
    return v;
}

// sb_replay_ddbars is DDBars with a run still open at the last point (n-1) counted.
template <typename F>
SB_FN int sb_replay_ddbars(SB_THREAD const SbReplay<F>& t, int n) {
    int run = n - 1 - t.top;
    return run > t.ddBars ? run : t.ddBars;
}

// sb_finish_drawdown closes the last peak segment.
template <typename F>
SB_FN void sb_finish_drawdown(SB_THREAD SbState<F>& s) {
    F q = s.segMin / s.peak;
    if (q < s.minRatio) s.minRatio = q;
}

// ---- exact selection (engine.Select) --------------------------------------

// sb_select reorders a[0..len) so that a[k] is the k-th smallest (0-based)
// and returns it: Hoare partition around a median of three, insertion sort
// under 16 elements. a is one thread's buffer (any address space).
template <typename F>
SB_FN F sb_select(SB_GLOBAL F* a, int len, int k) {
    int lo = 0, hi = len - 1;
    while (hi > lo) {
        if (hi - lo < 16) {
            for (int i = lo + 1; i <= hi; ++i) {
                for (int j = i; j > lo && a[j] < a[j - 1]; --j) {
                    F t = a[j]; a[j] = a[j - 1]; a[j - 1] = t;
                }
            }
            return a[k];
        }
        int mid = lo + (hi - lo) / 2;
        F t;
        if (a[mid] < a[lo]) { t = a[mid]; a[mid] = a[lo]; a[lo] = t; }
        if (a[hi] < a[lo]) { t = a[hi]; a[hi] = a[lo]; a[lo] = t; }
        if (a[hi] < a[mid]) { t = a[hi]; a[hi] = a[mid]; a[mid] = t; }
        F pivot = a[mid];
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) ++i;
            while (a[j] > pivot) --j;
            if (i <= j) {
                t = a[i]; a[i] = a[j]; a[j] = t;
                ++i; --j;
            }
        }
        if (k <= j) {
            hi = j;
        } else if (k >= i) {
            lo = i;
        } else {
            return a[k];
        }
    }
    return a[k];
}

#endif // SWEEPBENCH_SWEEP_COMMON_H
