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
