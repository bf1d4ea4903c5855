// indicators.cu — the Hull-family series every combo of a grid reads:
// h = HMA(x, Lh) for each unique Lh and h3 = HMA3(close, L3) for each unique
// L3 (docs/SPEC.md "Indicators"), in the direct or the prefix WMA
// formulation, bit for bit as engine.HMA / engine.HMA3 evaluate them.
//
// Pipeline for one job (all launches on the device's one stream):
//   [prefix only] prefix_scan over x (and close): S1, S2 of engine.WMAPrefix
//   hma_stage1  / hma3_stage1: d = 2*WMA(x,L/2) - WMA(x,L)            (HMA)
//                              d = 3*WMA(c,p/3) - WMA(c,p/2) - WMA(c,p) (HMA3)
//               series-major d[j*n + i]
//   [prefix only] prefix_scan over every d series (its own start s_j)
//   wma_series: out = WMA(d_j, q_j) from s_j, bar-major (out[i*ns + j], the
//               layout the thread-per-combo sweep reads coalesced) or
//               series-major (out[j*n + i], for the bar-parallel sweep).
//
// Layouts, for every kernel below except prefix_scan:
//   Grid:   (ceil(n / IND_BLOCK), ns): blockIdx.y picks the series (length).
//   Block:  IND_BLOCK (256) threads along the bars.
//   Thread: owns one output value (bar i of series j) and sums its windows
//           sequentially, oldest bar first (the evaluation order of SPEC).
//           Neighbouring threads read neighbouring bars: coalesced.
//   Shared: none.
// prefix_scan:
//   Grid:   ceil(ns / 128) blocks of 128 threads; one thread per series runs
//           the sequential prefix sums (their rounding depends on the order,
//           so they are not parallelised). Shared: none.
#include "sweep_common.h"

#define IND_BLOCK 256

template <typename F> __device__ __forceinline__ F sb_nan();
template <> __device__ __forceinline__ float sb_nan<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ double sb_nan<double>() { return __longlong_as_double(0x7ff8000000000001ll); }

// WMA(x, p) at bar i for a series defined from 0 (s = 0): direct window or
// the prefix form (t = i + 1).
template <typename F>
__device__ __forceinline__ F wma_at(const F* x, const F* s1, const F* s2, int i, int p, int prefix) {
    F den = sb_wma_den<F>(p);
    if (prefix) return sb_wma_prefix<F>(s1, s2, i + 1, p, den);
    return sb_wma_window<F>(x + (i - p + 1), 1, p, den);
}

// wma: out[j*n + i] = WMA(x, p_j)[i], series-major; NaN before p_j - 1.
template <typename F>
__device__ void wma_body(const F* x, const F* s1, const F* s2, int n, const int* lens, int prefix, F* out) {
    int i = blockIdx.x * IND_BLOCK + threadIdx.x;
    int j = blockIdx.y;
    if (i >= n) return;
    int p = lens[j];
    out[(long)j * n + i] = i < p - 1 ? sb_nan<F>() : wma_at<F>(x, s1, s2, i, p, prefix);
}

// hma_stage1: d_j = 2*WMA(x, L/2) - WMA(x, L); NaN before L - 1.
template <typename F>
__device__ void hma_stage1_body(const F* x, const F* s1, const F* s2, int n, const int* lens, int prefix, F* d) {
    int i = blockIdx.x * IND_BLOCK + threadIdx.x;
    int j = blockIdx.y;
    if (i >= n) return;
    int L = lens[j];
    F v;
    if (i < L - 1) {
        v = sb_nan<F>();
    } else {
        F a = wma_at<F>(x, s1, s2, i, L / 2, prefix);
        F b = wma_at<F>(x, s1, s2, i, L, prefix);
        F a2 = (F)2 * a;
        v = a2 - b;
    }
    d[(long)j * n + i] = v;
}

// hma3_stage1: d_j = 3*WMA(c, p/3) - WMA(c, p/2) - WMA(c, p), p = L/2; NaN before p - 1.
template <typename F>
__device__ void hma3_stage1_body(const F* x, const F* s1, const F* s2, int n, const int* lens, int prefix, F* d) {
    int i = blockIdx.x * IND_BLOCK + threadIdx.x;
    int j = blockIdx.y;
    if (i >= n) return;
    int p = lens[j] / 2;
    F v;
    if (i < p - 1) {
        v = sb_nan<F>();
    } else {
        F a = wma_at<F>(x, s1, s2, i, p / 3, prefix);
        F b = wma_at<F>(x, s1, s2, i, p / 2, prefix);
        F c = wma_at<F>(x, s1, s2, i, p, prefix);
        F a3 = (F)3 * a;
        F t = a3 - b;
        v = t - c;
    }
    d[(long)j * n + i] = v;
}

// prefix_scan: for series j (x + j*n, defined from s_j), S1/S2 of
// engine.WMAPrefix at S[j*(n+1) + t], t = 0..n-s_j.
template <typename F>
__device__ void prefix_scan_body(const F* x, int n, const int* starts, int ns, F* S1, F* S2) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= ns) return;
    int s = starts[j];
    const F* xs = x + (long)j * n;
    F* o1 = S1 + (long)j * (n + 1);
    F* o2 = S2 + (long)j * (n + 1);
    int m = n - s + 1;
    if (m < 1) return;
    F a = (F)0, b = (F)0;
    o1[0] = a;
    o2[0] = b;
    for (int t = 1; t < m; ++t) {
        F v = xs[s + t - 1];
        a = a + v;
        F tv = (F)t * v;
        b = b + tv;
        o1[t] = a;
        o2[t] = b;
    }
}

// wma_series: out[i*si + j*sj] = WMA(d_j, q_j) over d_j defined from s_j:
// bar-major (si = ns, sj = 1) for the thread-per-combo sweep, series-major
// (si = 1, sj = n) for the bar-parallel one.
template <typename F>
__device__ void wma_series_body(const F* d, const F* S1, const F* S2, int n, const int* q, const int* starts,
                                int ns, int prefix, F* out, int si, int sj) {
    int i = blockIdx.x * IND_BLOCK + threadIdx.x;
    int j = blockIdx.y;
    if (i >= n) return;
    int p = q[j], s = starts[j];
    F v;
    if (i < s + p - 1) {
        v = sb_nan<F>();
    } else {
        F den = sb_wma_den<F>(p);
        if (prefix) {
            v = sb_wma_prefix<F>(S1 + (long)j * (n + 1), S2 + (long)j * (n + 1), i - s + 1, p, den);
        } else {
            v = sb_wma_window<F>(d + (long)j * n + (i - p + 1), 1, p, den);
        }
    }
    out[(long)i * si + (long)j * sj] = v;
}

// prep_series: the F series engine.SourceSeries and engine.BarReturns build
// on the host, from the bars' float64 columns: cl = F(close), x = the
// source (src 0 close: x is not written, the caller uses cl; 1 hl2, 2 hlc3,
// 3 ohlc4, each operation rounded in F left to right), r[0] = 0 and
// r[i] = F(close[i]) / F(close[i-1]) - 1 (IEEE division, as Go's).
// Grid: ceil(n / IND_BLOCK) blocks of IND_BLOCK threads, one bar each.
template <typename F>
__device__ void prep_series_body(const double* o, const double* hi, const double* lo, const double* c, int n, int src,
                                 F* x, F* cl, F* r) {
    int i = blockIdx.x * IND_BLOCK + threadIdx.x;
    if (i >= n) return;
    F ci = (F)c[i];
    cl[i] = ci;
    if (src == 1) {
        F s = (F)hi[i] + (F)lo[i];
        x[i] = s / (F)2;
    } else if (src == 2) {
        F s = (F)hi[i] + (F)lo[i];
        s = s + ci;
        x[i] = s / (F)3;
    } else if (src == 3) {
        F s = (F)o[i] + (F)hi[i];
        s = s + (F)lo[i];
        s = s + ci;
        x[i] = s / (F)4;
    }
    if (i == 0) {
        r[0] = (F)0;
    } else {
        F q = ci / (F)c[i - 1];
        r[i] = q - (F)1;
    }
}

#define SB_IND(SUFFIX, F)                                                                                   \
    extern "C" __global__ void __launch_bounds__(IND_BLOCK) wma_##SUFFIX(                                  \
        const F* x, const F* s1, const F* s2, int n, const int* lens, int prefix, F* out) {                \
        wma_body<F>(x, s1, s2, n, lens, prefix, out);                                                      \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(IND_BLOCK) hma_stage1_##SUFFIX(                           \
        const F* x, const F* s1, const F* s2, int n, const int* lens, int prefix, F* d) {                  \
        hma_stage1_body<F>(x, s1, s2, n, lens, prefix, d);                                                 \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(IND_BLOCK) hma3_stage1_##SUFFIX(                          \
        const F* x, const F* s1, const F* s2, int n, const int* lens, int prefix, F* d) {                  \
        hma3_stage1_body<F>(x, s1, s2, n, lens, prefix, d);                                                \
    }                                                                                                      \
    extern "C" __global__ void prefix_scan_##SUFFIX(const F* x, int n, const int* starts, int ns, F* S1,   \
                                                    F* S2) {                                               \
        prefix_scan_body<F>(x, n, starts, ns, S1, S2);                                                     \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(IND_BLOCK) wma_series_##SUFFIX(                           \
        const F* d, const F* S1, const F* S2, int n, const int* q, const int* starts, int ns, int prefix,  \
        F* out, int si, int sj) {                                                                          \
        wma_series_body<F>(d, S1, S2, n, q, starts, ns, prefix, out, si, sj);                              \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(IND_BLOCK) prep_series_##SUFFIX(                          \
        const double* o, const double* hi, const double* lo, const double* c, int n, int src, F* x, F* cl,  \
        F* r) {                                                                                            \
        prep_series_body<F>(o, hi, lo, c, n, src, x, cl, r);                                               \
    }

SB_IND(f32, float)
SB_IND(f64, double)
