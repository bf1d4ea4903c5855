// robust.cu — the two passes of PBO by CSCV (Bailey, Borwein, López de
// Prado, Zhu 2015) for the Sharpe objective, over a study's per-block
// statistics, as engine/robust's CPU passes compute them (pbo_kernel.go):
// the same sums in the same order, the same keys, the same comparisons.
//
// Inputs: sum (sign-adjusted) and sumSq block-major, x[b*N + c]; bars[b]
// the blocks' bar counts (equal for every combo); sets[k] the in-sample
// block sets as 64-bit masks; comp[k] the index of set k's complement.
// A union's sums: the blocks below h = S/2 added in ascending order from
// 0.0, those from h likewise, then the two partial sums (BlockStats.Union).
// The key of a union is sharpeFrac's fraction num/d: d = n*q - s*s, num =
// s*|s|, or 0/1 when d <= 1e-10 * n*q (a zero variance); keys compare by
// cross-multiplication, x = num_a*d_b against y = num_b*d_a.
//
// pbo_best
//   Grid:   one block per set k; Block: PB_T threads.
//   Thread: combos c = tid, tid + PB_T, ...: the best key over set k (ties
//           to the lowest combo); then a shared-memory tree of the same
//           comparison. Output: sel[k].
// pbo_rank
//   Grid:   one block per set k; Block: PB_T threads.
//   Thread 0 takes the key of c* = sel[comp[k]] over set k; every thread
//           counts its combos' keys below and at most it (x < y, x <= y);
//           a shared-memory sum. Output: less[k], equal[k].
#define PB_T 256

__device__ __forceinline__ void pb_union(const double* __restrict__ sum, const double* __restrict__ sq,
                                         const double* __restrict__ bars, int N, int S, unsigned long long m, int c,
                                         double& s, double& q, double& n) {
    const int h = S / 2;
    double s0 = 0.0, q0 = 0.0, n0 = 0.0, s1 = 0.0, q1 = 0.0, n1 = 0.0;
    for (int b = 0; b < h; ++b) {
        if (m & (1ull << b)) {
            s0 = __dadd_rn(s0, sum[(long)b * N + c]);
            q0 = __dadd_rn(q0, sq[(long)b * N + c]);
            n0 = __dadd_rn(n0, bars[b]);
        }
    }
    for (int b = h; b < S; ++b) {
        if (m & (1ull << b)) {
            s1 = __dadd_rn(s1, sum[(long)b * N + c]);
            q1 = __dadd_rn(q1, sq[(long)b * N + c]);
            n1 = __dadd_rn(n1, bars[b]);
        }
    }
    s = __dadd_rn(s0, s1);
    q = __dadd_rn(q0, q1);
    n = __dadd_rn(n0, n1);
}

// pb_frac is sharpeFrac: the key as num/d with d > 0.
__device__ __forceinline__ void pb_frac(double s, double q, double n, double& num, double& d) {
    const double nq = __dmul_rn(n, q);
    d = __dsub_rn(nq, __dmul_rn(s, s));
    if (!(d > __dmul_rn(1e-10, nq))) {
        num = 0.0;
        d = 1.0;
        return;
    }
    num = __dmul_rn(s, fabs(s));
}

// pb_better reports whether key (na/da, combo a) beats (nb/db, combo b):
// a larger cross-multiplied key, or an equal one and a lower combo.
__device__ __forceinline__ bool pb_better(double na, double da, int a, double nb, double db, int b) {
    if (b < 0) return a >= 0;
    if (a < 0) return false;
    const double x = __dmul_rn(na, db), y = __dmul_rn(nb, da);
    return x > y || (x == y && a < b);
}

extern "C" __global__ void __launch_bounds__(PB_T) pbo_best(const double* __restrict__ sum, const double* __restrict__ sq,
                                                            const double* __restrict__ bars, int N, int S,
                                                            const unsigned long long* __restrict__ sets, int* __restrict__ sel) {
    __shared__ double shn[PB_T], shd[PB_T];
    __shared__ int shc[PB_T];
    const int k = blockIdx.x, tid = threadIdx.x;
    const unsigned long long m = sets[k];
    double bn = 0.0, bd = 1.0;
    int bc = -1;
    for (int c = tid; c < N; c += PB_T) {
        double s, q, n, num, d;
        pb_union(sum, sq, bars, N, S, m, c, s, q, n);
        pb_frac(s, q, n, num, d);
        if (pb_better(num, d, c, bn, bd, bc)) {
            bn = num;
            bd = d;
            bc = c;
        }
    }
    shn[tid] = bn;
    shd[tid] = bd;
    shc[tid] = bc;
    __syncthreads();
    for (int w = PB_T / 2; w > 0; w >>= 1) {
        if (tid < w && pb_better(shn[tid + w], shd[tid + w], shc[tid + w], shn[tid], shd[tid], shc[tid])) {
            shn[tid] = shn[tid + w];
            shd[tid] = shd[tid + w];
            shc[tid] = shc[tid + w];
        }
        __syncthreads();
    }
    if (tid == 0) sel[k] = shc[0];
}

extern "C" __global__ void __launch_bounds__(PB_T) pbo_rank(const double* __restrict__ sum, const double* __restrict__ sq,
                                                            const double* __restrict__ bars, int N, int S,
                                                            const unsigned long long* __restrict__ sets,
                                                            const int* __restrict__ comp, const int* __restrict__ sel,
                                                            int* __restrict__ less, int* __restrict__ equal) {
    __shared__ double thr[2];
    __shared__ int shl[PB_T], she[PB_T];
    const int k = blockIdx.x, tid = threadIdx.x;
    const unsigned long long m = sets[k];
    if (tid == 0) {
        double s, q, n;
        pb_union(sum, sq, bars, N, S, m, sel[comp[k]], s, q, n);
        pb_frac(s, q, n, thr[0], thr[1]);
    }
    __syncthreads();
    const double ns = thr[0], ds = thr[1];
    int lt = 0, le = 0;
    for (int c = tid; c < N; c += PB_T) {
        double s, q, n, num, d;
        pb_union(sum, sq, bars, N, S, m, c, s, q, n);
        pb_frac(s, q, n, num, d);
        const double x = __dmul_rn(num, ds), y = __dmul_rn(ns, d);
        lt += x < y ? 1 : 0;
        le += x <= y ? 1 : 0;
    }
    shl[tid] = lt;
    she[tid] = le;
    __syncthreads();
    for (int w = PB_T / 2; w > 0; w >>= 1) {
        if (tid < w) {
            shl[tid] += shl[tid + w];
            she[tid] += she[tid + w];
        }
        __syncthreads();
    }
    if (tid == 0) {
        less[k] = shl[0];
        equal[k] = she[0] - shl[0];
    }
}
