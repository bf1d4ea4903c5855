// prelude.metal — what Metal needs before cuda/kernels/sweep_common.h.
//
// metal.Source() compiles one string: this prelude, the shared header's
// text (newLibraryWithSource has no include path) and the .metal kernels
// with their #include lines removed. The header picks its address-space
// macros itself under __METAL_VERSION__ (SB_GLOBAL = device, SB_THREAD =
// thread); this file supplies the rest:
//   - the Metal standard library and its namespace (min, max, as_type);
//   - no FMA contraction where the compiler understands the pragma (MSL
//     3.2+); the library is also compiled with fast math off (mathMode
//     safe), docs/SPEC.md "Indicators";
//   - sb_f64, a stand-in for the header's two uses of double, which MSL
//     does not have (see below);
//   - thread-index macros, so kernel bodies read as the CUDA ones do.
#include <metal_stdlib>
using namespace metal;

#if defined(__METAL_VERSION__) && __METAL_VERSION__ >= 320
#pragma METAL fp math_mode(safe)
#pragma METAL fp contract(off)
#endif

// MSL has no double. sweep_common.h uses it twice:
//   sb_wma_den<F>: (F)((double)p * (double)(p + 1) / 2.0), and
//   the sb_dd_thr<double> specialisation (only ever called for fp64).
// sb_f64 keeps both compiling: a float in a distinct type, so the double
// specialisation stays a separate (never called) function. For
// sb_wma_den<float> it gives the same bits as the double evaluation:
// p and p+1 are exact in float (p < 2^24), fl(p*(p+1)) halved is
// fl(p*(p+1)/2) (halving is exact and commutes with rounding), and the
// double path rounds the exact p(p+1)/2 to float once: the same number.
// When the header gains an #if !defined(__METAL_VERSION__) around its
// double code, this block and the #define go (see metal/source.go).
#ifndef SB_HEADER_METAL_READY
struct sb_f64 {
    float v;
    sb_f64(int x) : v((float)x) {}
    sb_f64(float x) : v(x) {}
    explicit operator float() const { return v; }
};
inline sb_f64 operator*(sb_f64 a, sb_f64 b) { return sb_f64(a.v * b.v); }
inline sb_f64 operator/(sb_f64 a, sb_f64 b) { return sb_f64(a.v / b.v); }
inline bool operator<(sb_f64 a, sb_f64 b) { return a.v < b.v; }
#define double sb_f64
#endif

// Thread indexing: each kernel declares SB_THREAD_INDEX in its parameter
// list; blockIdx/threadIdx/blockDim then mean what they mean in CUDA.
#define SB_THREAD_INDEX                                        \
    uint3 sb_block_idx [[threadgroup_position_in_grid]],      \
    uint3 sb_thread_idx [[thread_position_in_threadgroup]],   \
    uint3 sb_block_dim [[threads_per_threadgroup]]
#define blockIdx sb_block_idx
#define threadIdx sb_thread_idx
#define blockDim sb_block_dim
#define SB_KERNEL kernel
