// parity.cu — the parity pass of docs/SPEC.md "Parity" on the device: the
// flips (bars where the fp64 reference's and the run under test's held
// positions differ), their margins and the per-series indicator errors,
// from the indicator series of both precisions, bar for bar as
// engine.Compare finds them on the CPU. Only per-combo counts, a margin
// histogram and the worst flips go back to the host.
//
// parity_flips_{f32,f64} (the suffix is the precision under test)
//   Grid:   1-D, ceil(count / PB_BLOCK) blocks; Block: PB_BLOCK threads.
//   Thread: one combo c = comboFirst + j, (hmaIdx, hma3Idx) = (c / n3,
//           c % n3), as the sweep kernel numbers them: neighbouring threads
//           take neighbouring HMA3 lengths, so the bar-major reads
//           h3[i*n3 + hma3Idx] coalesce and h[i*nh + hmaIdx] broadcast. It
//           runs SPEC's state machine (sb_position) over both precisions'
//           series from its warp's smallest warm-up bar (before a combo's
//           own warm-up one of its series is NaN in both precisions, so
//           both positions are 0 there: no flip) to bar n-2 (pos[n-1] is
//           never held). At a flip: margin m = |h3 - h| / close in fp64
//           (engine.Compare's expression, IEEE: the same bits).
//   pass 1  per combo: flips, non-borderline flips (!(m < tol)), the max
//           margin (NaN propagates as math.Max does); every flip's margin
//           counted in a histogram over its float64 bits >> PB_SHIFT
//           (monotone in m >= 0: the host finds from it the smallest bin
//           edge above which at least MaxFlipsListed flips lie).
//   pass 2  only combos whose max margin reaches the edge (whole warps
//           without one return at once): every flip with margin bits >=
//           the edge is appended (atomic slot) to the flip list, whose
//           capacity the histogram gives exactly.
//   Shared: none. Global: outputs only, per combo of the launch.
//
// series_err_{f32,f64}
//   Grid:   (ceil(ns / SE_BLOCK), chunks); Block: SE_BLOCK threads along
//           the series (coalesced bar-major reads).
//   Thread: series j, bars [chunk*len, min(n, (chunk+1)*len)): the largest
//           relative error |t - r| / |r| over the bars where the fp64
//           value r is defined, and the first bar where it occurs, by the
//           rule of engine.seriesError; the host joins the chunks in order.
#include "sweep_common.h"

#define PB_BLOCK 128
#define PB_SHIFT 49 // 14-bit bins: sign 0, 11 exponent bits, 3 mantissa bits
#define SE_BLOCK 128

template <typename F>
__device__ void flips_body(const double* H64, const double* H364, const F* HT, const F* H3T, const double* close,
                           int n, int nh, int n3, const int* warmH, const int* warm3, long long comboFirst, int count,
                           int longOnly, double tol, int pass, const double* maxIn, unsigned long long edge,
                           int* outFlips, int* outNB, double* outMax, unsigned long long* hist,
                           long long* fCombo, int* fBar, double* fMargin, int* fPos, unsigned long long* fCount,
                           unsigned long long fCap) {
    const int j = blockIdx.x * PB_BLOCK + threadIdx.x;
    bool active = j < count;
    if (active && pass == 2) {
        active = (unsigned long long)__double_as_longlong(maxIn[j]) >= edge;
    }
    if (__ballot_sync(0xffffffffu, active) == 0) return; // warp-uniform
    const long long c = comboFirst + (active ? j : 0);
    const int hi = (int)(c / n3);
    const int k = (int)(c % n3);
    const int own = active ? max(warmH[hi], warm3[k]) : 0x7fffffff;
    const int start = __reduce_min_sync(0xffffffffu, (unsigned)own);
    int p64 = 0, pT = 0, flips = 0, nb = 0;
    double mx = 0.0;
    for (int b = start; b < n - 1; ++b) {
        const double a = H64[(long)b * nh + hi];
        const double a3 = H364[(long)b * n3 + k];
        const F t = HT[(long)b * nh + hi];
        const F t3 = H3T[(long)b * n3 + k];
        p64 = sb_position<double>(a3, a, p64, longOnly);
        pT = sb_position<F>(t3, t, pT, longOnly);
        if (active && p64 != pT) {
            const double m = fabs(a3 - a) / close[b];
            const unsigned long long bits = (unsigned long long)__double_as_longlong(m);
            if (pass == 1) {
                ++flips;
                nb += (m < tol) ? 0 : 1;
                if (m != m || mx != mx) {
                    mx = m != m ? m : mx;
                } else if (m > mx) {
                    mx = m;
                }
                atomicAdd(hist + (bits >> PB_SHIFT), 1ull);
            } else if (bits >= edge) {
                const unsigned long long s = atomicAdd(fCount, 1ull);
                if (s < fCap) {
                    fCombo[s] = c;
                    fBar[s] = b;
                    fMargin[s] = m;
                    fPos[s] = (p64 + 1) | ((pT + 1) << 2);
                }
            }
        }
    }
    if (active && pass == 1) {
        outFlips[j] = flips;
        outNB[j] = nb;
        outMax[j] = mx;
    }
}

template <typename F>
__device__ void series_err_body(const double* ref, const F* test, int n, int ns, int len, double* outRel, int* outBar) {
    const int j = blockIdx.x * SE_BLOCK + threadIdx.x;
    if (j >= ns) return;
    const int lo = blockIdx.y * len;
    const int hi = min(n, lo + len);
    double best = 0.0;
    int bar = -1;
    for (int i = lo; i < hi; ++i) {
        const double r = ref[(long)i * ns + j];
        if (r != r) continue;
        const double t = (double)test[(long)i * ns + j];
        double rel;
        if (t != t || isinf(t)) {
            rel = __longlong_as_double(0x7ff0000000000000ll);
        } else if (r == 0.0) {
            rel = t != 0.0 ? __longlong_as_double(0x7ff0000000000000ll) : 0.0;
        } else {
            rel = fabs(t - r) / fabs(r);
        }
        if (bar < 0 || rel > best) {
            best = rel;
            bar = i;
        }
    }
    outRel[(long)blockIdx.y * ns + j] = best;
    outBar[(long)blockIdx.y * ns + j] = bar;
}

#define PB_PARITY(SUFFIX, F)                                                                                     \
    extern "C" __global__ void __launch_bounds__(PB_BLOCK) parity_flips_##SUFFIX(                                \
        const double* H64, const double* H364, const F* HT, const F* H3T, const double* close, int n, int nh,    \
        int n3, const int* warmH, const int* warm3, long long comboFirst, int count, int longOnly, double tol,   \
        int pass, const double* maxIn, unsigned long long edge, int* outFlips, int* outNB, double* outMax,      \
        unsigned long long* hist, long long* fCombo, int* fBar, double* fMargin, int* fPos,                     \
        unsigned long long* fCount, unsigned long long fCap) {                                                  \
        flips_body<F>(H64, H364, HT, H3T, close, n, nh, n3, warmH, warm3, comboFirst, count, longOnly, tol, pass, \
                      maxIn, edge, outFlips, outNB, outMax, hist, fCombo, fBar, fMargin, fPos, fCount, fCap);    \
    }                                                                                                            \
    extern "C" __global__ void __launch_bounds__(SE_BLOCK) series_err_##SUFFIX(                                  \
        const double* ref, const F* test, int n, int ns, int len, double* outRel, int* outBar) {                \
        series_err_body<F>(ref, test, n, ns, len, outRel, outBar);                                               \
    }

PB_PARITY(f32, float)
PB_PARITY(f64, double)

// ---------------------------------------------------------------------------
// parity_mem_{f32,f64}: the parity counts of SPEC Part 2 "Parity for
// families with memory" for a grid the sweep ran from engine.Pairs
// (zscore, rsi: the band machine; breakout: the channel machine), bar for
// bar as strategy's Compare and Divergences find them on the CPU.
//   Grid:   1-D, ceil(count / PB_BLOCK) blocks; Block: PB_BLOCK threads.
//   Thread: one combo c = comboFirst + j, (a, b) = (c / n3, c % n3). Both
//           machines (sb_band in fp64 over the fp64 series and levels, in
//           the test precision F over its own) from the combo's first bar
//           to bar n-2 (the held bars); positions after the mode. A
//           divergence is a maximal run of bars whose positions differ;
//           its root's margin is the fp64 machine's at that bar, from its
//           state before the bar (the families' margin rules, below, in
//           float64 with each operation rounded: the reference's bits).
//   Output: per combo of the launch: bars apart, divergences whose root
//           margin is not < tol, the largest root margin (NaN skipped),
//           roots whose margin is NaN.
//   Series (bar-major, as the sweep reads them; channel negated):
//           fam 0 zscore  V64/VT: z per a (-0: reset), L64/LT: the four
//                         levels of b, K64: (entry, exit) of b, D64/S64:
//                         x - mean and sd per a (fp64);
//           fam 1 rsi     V64/VT: RSI per a, L64/LT;
//           fam 2 breakout C64/CT: -close; A64/AT, A264/A2T (per a: -up_in,
//                         -dn_in), B64/BT, B264/B2T (per b: -dn_out, -up_out);
//           fam 3 cross   A64/AT: -fast per a, B64/BT: -slow per b (sb_position
//                         over them, as the sweep's SbHullSig); memoryless:
//                         every flip bar is a root, margin |fast - slow| /
//                         close ((-a) - (-b) is -(a - b) exactly).
//   close: the fp64 closes (zscore's margin is a fraction of close).
__device__ __forceinline__ double pm_min(double a, double b) { return b < a ? b : a; }

template <typename F>
__device__ void mem_body(int fam, const double* V64, const F* VT, const double* L64, const F* LT, const double* K64,
                         const double* D64, const double* S64, const double* C64, const F* CT, const double* A64,
                         const F* AT, const double* A264, const F* A2T, const double* B64, const F* BT,
                         const double* B264, const F* B2T, const double* close, int n, int nh, int n3,
                         const int* warmH, const int* warm3, long long comboFirst, int count, int longOnly, double tol,
                         int* outBars, int* outNB, double* outMax, int* outNaN) {
    const int j = blockIdx.x * PB_BLOCK + threadIdx.x;
    if (j >= count) return;
    const long long c = comboFirst + j;
    const int a = (int)(c / n3), b = (int)(c % n3);
    int first = max(warmH[a], warm3[b]);
    first = max(first, 0);
    const int held = n - 1;
    double l64[4];
    F lt[4];
    if (fam <= 1) { // zscore and rsi read the levels of b
        for (int q = 0; q < 4; ++q) {
            l64[q] = L64[4 * b + q];
            lt[q] = LT[4 * b + q];
        }
    }
    double kin = 0, kout = 0;
    if (fam == 0) {
        kin = K64[2 * b];
        kout = K64[2 * b + 1];
    }
    int st64 = 0, stT = 0, bars = 0, nb = 0, nans = 0;
    double mx = 0;
    bool in = false;
    for (int i = first; i < held; ++i) {
        const long ia = (long)i * nh + a, ib = (long)i * n3 + b;
        int s64, sT;
        if (fam == 3) {
            // cross, memoryless: Part 1's position (the state is the
            // position), each flip bar its own root.
            s64 = sb_position<double>(B64[ib], A64[ia], st64, longOnly);
            sT = sb_position<F>(BT[ib], AT[ia], stT, longOnly);
            if (s64 != sT) {
                ++bars;
                const double m = fabs(A64[ia] - B64[ib]) / close[i];
                if (!(m < tol)) ++nb;
                if (m != m) {
                    ++nans;
                } else if (m > mx) {
                    mx = m;
                }
            }
            st64 = s64;
            stT = sT;
            continue;
        }
        if (fam == 2) {
            s64 = sb_band<double>(st64, C64[i], A64[ia], A264[ia], B64[ib], B264[ib]);
            sT = sb_band<F>(stT, CT[i], AT[ia], A2T[ia], BT[ib], B2T[ib]);
        } else {
            const double v = V64[ia];
            const F vt = VT[ia];
            s64 = sb_is_reset(v) ? 0 : sb_band<double>(st64, v, l64[0], l64[1], l64[2], l64[3]);
            sT = sb_is_reset(vt) ? 0 : sb_band<F>(stT, vt, lt[0], lt[1], lt[2], lt[3]);
        }
        const int p64 = sb_band_pos(s64, longOnly), pT = sb_band_pos(sT, longOnly);
        if (p64 != pT) {
            ++bars;
            if (!in) {
                // The root: the fp64 machine's margin at bar i from st64.
                double m;
                if (fam == 0) {
                    const double sd = S64[ia], d = D64[ia];
                    if (sd != sd) {
                        m = sd;
                    } else if (sd == 0.0) {
                        m = fabs(d) / close[i];
                    } else {
                        const double z = d / sd;
                        double mg;
#define PM_DIST(t) fabs(d - __dmul_rn((t), sd))
                        if (st64 == 0) {
                            mg = pm_min(PM_DIST(-kin), PM_DIST(kin));
                        } else if (st64 == 1) {
                            mg = PM_DIST(-kout);
                            if (z >= -kout) mg = pm_min(mg, PM_DIST(kin));
                        } else {
                            mg = PM_DIST(kout);
                            if (z <= kout) mg = pm_min(mg, PM_DIST(-kin));
                        }
#undef PM_DIST
                        m = mg / close[i];
                    }
                } else if (fam == 1) {
                    const double r = V64[ia];
                    if (r != r) {
                        m = 0.0;
                    } else {
                        const double dl = fabs(r - l64[0]) / 100.0, du = fabs(r - l64[1]) / 100.0;
                        m = st64 == 0 ? pm_min(dl, du) : (st64 == 1 ? du : dl);
                    }
                } else {
                    const double cl = -C64[i];
#define PM_DIST(L) fabs(cl - (-(L)))
                    double mg;
                    if (st64 == 0) {
                        mg = pm_min(PM_DIST(A64[ia]), PM_DIST(A264[ia]));
                    } else if (st64 == 1) {
                        mg = PM_DIST(B64[ib]);
                        if (s64 != 1) mg = pm_min(mg, PM_DIST(A264[ia]));
                    } else {
                        mg = PM_DIST(B264[ib]);
                        if (s64 != -1) mg = pm_min(mg, PM_DIST(A64[ia]));
                    }
#undef PM_DIST
                    m = mg / cl;
                }
                if (!(m < tol)) ++nb;
                if (m != m) {
                    ++nans;
                } else if (m > mx) {
                    mx = m;
                }
            }
            in = true;
        } else {
            in = false;
        }
        st64 = s64;
        stT = sT;
    }
    outBars[j] = bars;
    outNB[j] = nb;
    outMax[j] = mx;
    outNaN[j] = nans;
}

#define PB_MEM(SUFFIX, F)                                                                                        \
    extern "C" __global__ void __launch_bounds__(PB_BLOCK) parity_mem_##SUFFIX(                                  \
        int fam, const double* V64, const F* VT, const double* L64, const F* LT, const double* K64,              \
        const double* D64, const double* S64, const double* C64, const F* CT, const double* A64, const F* AT,     \
        const double* A264, const F* A2T, const double* B64, const F* BT, const double* B264, const F* B2T,      \
        const double* close, int n, int nh, int n3, const int* warmH, const int* warm3, long long comboFirst,    \
        int count, int longOnly, double tol, int* outBars, int* outNB, double* outMax, int* outNaN) {           \
        mem_body<F>(fam, V64, VT, L64, LT, K64, D64, S64, C64, CT, A64, AT, A264, A2T, B64, BT, B264, B2T, close, \
                    n, nh, n3, warmH, warm3, comboFirst, count, longOnly, tol, outBars, outNB, outMax, outNaN);  \
    }

PB_MEM(f32, float)
PB_MEM(f64, double)
