// indicators.metal — the Hull-family series of a grid in fp32, the Metal
// twin of cuda/kernels/indicators.cu: h = HMA(x, Lh) per unique Lh and
// h3 = HMA3(close, L3) per unique L3 (docs/SPEC.md "Indicators"), in the
// direct or the prefix WMA formulation, bit for bit as reference.HMA and
// reference.HMA3 evaluate them in float32 (the window sum and the prefix
// difference are sweep_common.h's sb_wma_window and sb_wma_prefix).
//
// The source series x, the closes and the bar returns come from the host,
// already rounded to float (reference.SourceSeries, reference.BarReturns): Metal
// has no double to read the bars' float64 columns with.
//
// Pipeline (one command buffer, in order):
//   [prefix only] prefix_scan over x and over close
//   hma_stage1 / hma3_stage1: d_j series-major (d[j*n + i])
//   [prefix only] prefix_scan over every d_j from its start s_j
//   wma_series: out = WMA(d_j, q_j), bar-major (out[i*ns + j]), the layout
//               the thread-per-combo sweep reads coalesced.
//
// Layouts (all but prefix_scan):
//   Grid:   (ceil(n / IND_BLOCK), ns) threadgroups: blockIdx.y picks the series.
//   Group:  IND_BLOCK (256) threads along the bars.
//   Thread: one output value (bar i of series j), its windows summed
//           sequentially, oldest bar first. Threadgroup memory: none.
// prefix_scan:
//   Grid:   ceil(ns / 128) threadgroups of 128 threads, one thread per
//           series runs the sequential sums (their rounding depends on the
//           order). Threadgroup memory: none.
#include "sweep_common.h"

#define IND_BLOCK 256

// IndParams is the constant block of every indicator kernel (metal.indParams).
struct IndParams {
    int n;      // bars
    int ns;     // series in this dispatch
    int prefix; // 1: the prefix formulation
    int si;     // wma_series output strides: out[i*si + j*sj]
    int sj;
};

static inline float ind_nan() { return as_type<float>(0x7fc00000u); }

// WMA(x, p) at bar i of a series defined from 0: direct window or prefix (t = i+1).
static inline float wma_at(const device float* x, const device float* s1, const device float* s2, int i, int p,
                           int prefix) {
    float den = sb_wma_den<float>(p);
    if (prefix) return sb_wma_prefix<float>(s1, s2, i + 1, p, den);
    return sb_wma_window<float>(x + (i - p + 1), 1, p, den);
}

// hma_stage1: d_j = 2*WMA(x, L/2) - WMA(x, L); NaN before L - 1.
SB_KERNEL void hma_stage1_f32(const device float* x [[buffer(0)]], const device float* s1 [[buffer(1)]],
                              const device float* s2 [[buffer(2)]], const device int* lens [[buffer(3)]],
                              constant IndParams& P [[buffer(4)]], device float* d [[buffer(5)]], SB_THREAD_INDEX) {
    const int i = (int)(blockIdx.x * IND_BLOCK + threadIdx.x);
    const int j = (int)blockIdx.y;
    if (i >= P.n || j >= P.ns) return;
    const int L = lens[j];
    float v;
    if (i < L - 1) {
        v = ind_nan();
    } else {
        float a = wma_at(x, s1, s2, i, L / 2, P.prefix);
        float b = wma_at(x, s1, s2, i, L, P.prefix);
        float a2 = 2.0f * a;
        v = a2 - b;
    }
    d[(long)j * P.n + i] = v;
}

// hma3_stage1: d_j = 3*WMA(c, p/3) - WMA(c, p/2) - WMA(c, p), p = L/2; NaN before p - 1.
SB_KERNEL void hma3_stage1_f32(const device float* x [[buffer(0)]], const device float* s1 [[buffer(1)]],
                               const device float* s2 [[buffer(2)]], const device int* lens [[buffer(3)]],
                               constant IndParams& P [[buffer(4)]], device float* d [[buffer(5)]], SB_THREAD_INDEX) {
    const int i = (int)(blockIdx.x * IND_BLOCK + threadIdx.x);
    const int j = (int)blockIdx.y;
    if (i >= P.n || j >= P.ns) return;
    const int p = lens[j] / 2;
    float v;
    if (i < p - 1) {
        v = ind_nan();
    } else {
        float a = wma_at(x, s1, s2, i, p / 3, P.prefix);
        float b = wma_at(x, s1, s2, i, p / 2, P.prefix);
        float c = wma_at(x, s1, s2, i, p, P.prefix);
        float a3 = 3.0f * a;
        float t = a3 - b;
        v = t - c;
    }
    d[(long)j * P.n + i] = v;
}

// prefix_scan: for series j (x + j*n, defined from starts[j]) the prefix
// sums of reference.WMAPrefix at S[j*(n+1) + t], t = 0..n-s_j.
SB_KERNEL void prefix_scan_f32(const device float* x [[buffer(0)]], const device int* starts [[buffer(1)]],
                               constant IndParams& P [[buffer(2)]], device float* S1 [[buffer(3)]],
                               device float* S2 [[buffer(4)]], SB_THREAD_INDEX) {
    const int j = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (j >= P.ns) return;
    const int n = P.n;
    const int s = starts[j];
    const device float* xs = x + (long)j * n;
    device float* o1 = S1 + (long)j * (n + 1);
    device float* o2 = S2 + (long)j * (n + 1);
    const int m = n - s + 1;
    if (m < 1) return;
    float a = 0.0f, b = 0.0f;
    o1[0] = a;
    o2[0] = b;
    for (int t = 1; t < m; ++t) {
        float v = xs[s + t - 1];
        a = a + v;
        float tv = (float)t * v;
        b = b + tv;
        o1[t] = a;
        o2[t] = b;
    }
}

// wma_series: out[i*si + j*sj] = WMA(d_j, q[j]) over d_j defined from starts[j].
SB_KERNEL void wma_series_f32(const device float* d [[buffer(0)]], const device float* S1 [[buffer(1)]],
                              const device float* S2 [[buffer(2)]], const device int* q [[buffer(3)]],
                              const device int* starts [[buffer(4)]], constant IndParams& P [[buffer(5)]],
                              device float* out [[buffer(6)]], SB_THREAD_INDEX) {
    const int i = (int)(blockIdx.x * IND_BLOCK + threadIdx.x);
    const int j = (int)blockIdx.y;
    const int n = P.n;
    if (i >= n || j >= P.ns) return;
    const int p = q[j], s = starts[j];
    float v;
    if (i < s + p - 1) {
        v = ind_nan();
    } else {
        float den = sb_wma_den<float>(p);
        if (P.prefix) {
            v = sb_wma_prefix<float>(S1 + (long)j * (n + 1), S2 + (long)j * (n + 1), i - s + 1, p, den);
        } else {
            v = sb_wma_window<float>(d + (long)j * n + (i - p + 1), 1, p, den);
        }
    }
    out[(long)i * P.si + (long)j * P.sj] = v;
}
