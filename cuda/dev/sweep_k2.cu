// cuda/dev/sweep_k2.cu: a variant of the sweep kernel kept for measurement
// (llm.c's dev/cuda: the variant, its check and its timing in one file).
//
// Variant: sweep_{f32,f64}_k2, the production sweep body of
// cuda/kernels/sweep.cu with K = 2 combos per thread (half the threads,
// twice the independent work per thread). Production launches K = 1
// (sweep_*_k1); on the H200 K = 2 measured slower (docs/PERFORMANCE.md),
// so only K = 1 ships in the embedded PTX.
//
// Check: on fresh random inputs (a random walk of closes, SMA series of nh
// and n3 lengths in fp64 rounded to F, the VaR bins of cuda's
// kernels.BinsFromReturns), every output of the variant equals the
// production kernel's bit for bit, both poisoned (0xff) before each run.
// The production kernel itself is checked against the fp64 reference by
// the Go GPU tests (cuda/gpu_test.go); equality with it is the variant's
// check.
// Timing: CUDA events around each launch, best of 5 after one warm-up.
//
// Build and run on the GPU machine, from the repository root:
//   nvcc -O3 --fmad=false -std=c++17 -Ireference/kernels -o /tmp/sweep_k2 \
//     cuda/dev/sweep_k2.cu && /tmp/sweep_k2 [bars=150000] [nh=320] [n3=320] [seed]
// (scripts/device-dev.sh does). Exit status 1 on any mismatch or CUDA error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../kernels/sweep.cu"

SB_SWEEP(sweep_f32_k2, float, 2, 1)
SB_SWEEP(sweep_f64_k2, double, 2, 1)

#define CK(call)                                                                                 \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

// keyHi and valHi: kernels.KeyHi / kernels.ValHi (the order-preserving key).
static uint32_t keyHi(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
static uint32_t keyHi(double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    u = (u & (1ull << 63)) ? ~u : (u | (1ull << 63));
    return (uint32_t)(u >> 32);
}
template <typename F> static F valHi(uint32_t k);
template <> float valHi<float>(uint32_t k) {
    uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    float v;
    memcpy(&v, &u, 4);
    return v;
}
template <> double valHi<double>(uint32_t k) {
    uint64_t key = (uint64_t)k << 32;
    uint64_t u = (key & (1ull << 63)) ? (key & ~(1ull << 63)) : ~key;
    double v;
    memcpy(&v, &u, 8);
    return v;
}

// Bins is kernels.BinsFromReturns: the 31 edges, k0 and shift.
template <typename F> struct Bins {
    std::vector<F> edges;
    uint32_t k0, shift;
};
template <typename F> static Bins<F> binsFromReturns(const std::vector<F>& r) {
    const int n = (int)r.size();
    const int stride = std::max(1, (n - 1) / 4096);
    std::vector<F> v;
    for (int i = 1; i < n; i += stride) {
        v.push_back((F(1) + r[i]) - 1);
        v.push_back((F(1) - r[i]) - 1);
    }
    const uint32_t negTop = 0x7fffffffu;
    uint32_t k0 = negTop - 28, k1 = negTop;
    if (!v.empty()) {
        std::vector<F> s = v;
        std::sort(s.begin(), s.end());
        k0 = keyHi(s[(size_t)(0.02 * (double)(s.size() - 1))]);
        k1 = keyHi(s[(size_t)(0.10 * (double)(s.size() - 1))]);
    }
    k0 = std::min(k0, negTop - 28);
    k1 = std::min(std::max(k1, k0 + 28), negTop);
    uint32_t shift = 0;
    while (((k1 - k0) >> shift) >= 28) shift++;
    while (shift > 0 && (uint64_t)k0 + ((uint64_t)28 << shift) > 0x80000000ull) shift--;
    Bins<F> b{{}, k0, shift};
    for (uint32_t j = 0; j <= 28; ++j) b.edges.push_back(valHi<F>(k0 + (j << shift)));
    b.edges.push_back(F(0));
    b.edges.push_back(std::numeric_limits<F>::denorm_min());
    return b;
}

// sma fills out[i*stride + col] with the simple moving average of length L
// of x (fp64, rounded to F) and returns its warm-up, L-1.
template <typename F>
static int sma(const std::vector<double>& x, int L, std::vector<F>& out, int stride, int col) {
    double sum = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sum += x[i];
        if ((int)i >= L) sum -= x[i - L];
        out[i * stride + col] = (int)i >= L - 1 ? (F)(sum / L) : (F)NAN;
    }
    return L - 1;
}

struct Result {
    std::vector<unsigned char> f, i;
    float ms;
};

template <typename F, typename Kern>
static Result launch(Kern kern, int K, const F* dH, const F* dH3, const F* dR, int n, int nh, int n3,
                     const int* dwH, const int* dw3, int count, F keep, int kth, const F* dthr, uint32_t k0,
                     uint32_t shift, F* dbuf, unsigned* dpos, int cap, F* doutF, int* doutI) {
    const int per = SB_BLOCK * K;
    const dim3 grid((count + per - 1) / per), block(SB_BLOCK);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    float best = 1e30f;
    for (int rep = 0; rep < 6; ++rep) { // rep 0 is the warm-up
        CK(cudaMemset(doutF, 0xff, sizeof(F) * SB_NF * count));
        CK(cudaMemset(doutI, 0xff, sizeof(int) * SB_NI * count));
        CK(cudaEventRecord(a));
        kern<<<grid, block>>>(dH, dH3, dR, n, nh, n3, dwH, dw3, 0LL, count, keep, keep * keep, (F)0, 0, kth, dthr, k0,
                              shift, dbuf, dpos, cap, doutF, doutI);
        CK(cudaGetLastError());
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (rep > 0) best = std::min(best, ms);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    Result r{std::vector<unsigned char>(sizeof(F) * SB_NF * count), std::vector<unsigned char>(sizeof(int) * SB_NI * count),
             best};
    CK(cudaMemcpy(r.f.data(), doutF, r.f.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.i.data(), doutI, r.i.size(), cudaMemcpyDeviceToHost));
    return r;
}

template <typename F, typename Kern>
static bool run(const char* name, Kern k1, Kern k2, const std::vector<double>& close, int nh, int n3) {
    const int n = (int)close.size(), count = nh * n3;
    std::vector<F> R(n, F(0)), H((size_t)n * nh), H3((size_t)n * n3);
    for (int i = 1; i < n; ++i) R[i] = F(close[i]) / F(close[i - 1]) - 1; // reference.BarReturns
    std::vector<int> wH(nh), w3(n3);
    for (int a = 0; a < nh; ++a) wH[a] = sma<F>(close, 2 + a, H, nh, a);
    for (int t = 0; t < n3; ++t) w3[t] = sma<F>(close, 3 + 2 * t, H3, n3, t);
    const Bins<F> bins = binsFromReturns(R);
    const int kth = (int)std::floor(0.05 * (double)(n - 2)); // kernels.KthIndex(n-1)
    const int cap = std::min(std::max((n - 1) / 64, 1024), 8192); // kernels.SelectCap
    const int words = std::max((n - 1 + SB_PW - 1) / SB_PW, 1);
    const F keep = F(1) - F(0.00045);

    F *dH, *dH3, *dR, *dthr, *dbuf, *doutF;
    int *dwH, *dw3, *doutI;
    unsigned* dpos;
    CK(cudaMalloc(&dH, sizeof(F) * H.size()));
    CK(cudaMalloc(&dH3, sizeof(F) * H3.size()));
    CK(cudaMalloc(&dR, sizeof(F) * n));
    CK(cudaMalloc(&dthr, sizeof(F) * bins.edges.size()));
    CK(cudaMalloc(&dwH, sizeof(int) * nh));
    CK(cudaMalloc(&dw3, sizeof(int) * n3));
    CK(cudaMalloc(&dbuf, sizeof(F) * (size_t)count * cap));
    CK(cudaMalloc(&dpos, sizeof(unsigned) * (size_t)count * words));
    CK(cudaMalloc(&doutF, sizeof(F) * SB_NF * count));
    CK(cudaMalloc(&doutI, sizeof(int) * SB_NI * count));
    CK(cudaMemcpy(dH, H.data(), sizeof(F) * H.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dH3, H3.data(), sizeof(F) * H3.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dR, R.data(), sizeof(F) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dthr, bins.edges.data(), sizeof(F) * bins.edges.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dwH, wH.data(), sizeof(int) * nh, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dw3, w3.data(), sizeof(int) * n3, cudaMemcpyHostToDevice));

    Result a = launch<F>(k1, 1, dH, dH3, dR, n, nh, n3, dwH, dw3, count, keep, kth, dthr, bins.k0, bins.shift, dbuf,
                         dpos, cap, doutF, doutI);
    Result b = launch<F>(k2, 2, dH, dH3, dR, n, nh, n3, dwH, dw3, count, keep, kth, dthr, bins.k0, bins.shift, dbuf,
                         dpos, cap, doutF, doutI);
    // Every combo written (status field set, no poison left) and the same bits.
    long long trades = 0;
    int unwritten = 0;
    for (int j = 0; j < count; ++j) {
        int st, tr;
        memcpy(&st, &a.i[sizeof(int) * ((size_t)OI_STATUS * count + j)], 4);
        memcpy(&tr, &a.i[sizeof(int) * ((size_t)OI_TRADES * count + j)], 4);
        unwritten += st == -1;
        trades += tr;
    }
    const bool same = a.f == b.f && a.i == b.i;
    printf("%-4s  bars %d  combos %d  k1 %.2f ms  k2 %.2f ms  k2/k1 %.2fx  trades %lld  unwritten %d  %s\n", name, n,
           count, a.ms, b.ms, b.ms / a.ms, trades, unwritten, same ? "bit-identical" : "MISMATCH");
    cudaFree(dH), cudaFree(dH3), cudaFree(dR), cudaFree(dthr), cudaFree(dwH), cudaFree(dw3);
    cudaFree(dbuf), cudaFree(dpos), cudaFree(doutF), cudaFree(doutI);
    return same && unwritten == 0 && trades > 0;
}

int main(int argc, char** argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 150000;
    const int nh = argc > 2 ? atoi(argv[2]) : 320, n3 = argc > 3 ? atoi(argv[3]) : 320;
    const unsigned seed = argc > 4 ? (unsigned)strtoul(argv[4], 0, 10)
                                   : (unsigned)std::chrono::steady_clock::now().time_since_epoch().count();
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("sweep_k2: %s, seed %u (fresh random closes: a random walk of 0.1%% steps)\n", p.name, seed);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> z(0, 1);
    std::vector<double> close(n);
    close[0] = 100;
    for (int i = 1; i < n; ++i) close[i] = close[i - 1] * std::exp(0.001 * z(rng));
    bool ok = run<float>("fp32", sweep_f32_k1, sweep_f32_k2, close, nh, n3);
    ok = run<double>("fp64", sweep_f64_k1, sweep_f64_k2, close, nh, n3) && ok;
    return ok ? 0 : 1;
}
