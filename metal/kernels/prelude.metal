// prelude.metal — what Metal needs before reference/kernels/sweep_common.h.
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

// MSL has no double: sweep_common.h forms p(p+1)/2 in float under
// __METAL_VERSION__ (SB_WIDE, exact for p < 5792) and leaves out its fp64
// specialisations, so no stand-in is needed here.

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
