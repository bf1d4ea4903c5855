// main.cpp — runs the assembled Metal kernels on the CPU (see metal_stdlib)
// over one input file written by metal/msl_host_test.go and writes the
// indicator series, the sweep's raw outputs and, when the input asks for
// blocks, block_stats_f32's. Every thread of every dispatch runs to
// completion in order; sweep_f32 and block_stats_f32 need no barrier (each
// thread uses its own threadgroup column, or none), so this is a faithful
// schedule. The sweep's int outputs and block_stats_f32's start as 0xFF
// bytes, as the backend poisons them.
//
// `mslhost f64 IN OUT` instead runs f64.metal's operations over the
// operand pairs of IN (TestF64OnHost).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "assembled.metal"
#undef double

static FILE* in;
template <typename T>
static std::vector<T> rd(size_t n) {
    std::vector<T> v(n ? n : 1);
    if (n && fread(v.data(), sizeof(T), n, in) != n) {
        fprintf(stderr, "short input\n");
        exit(2);
    }
    return v;
}
template <typename T>
static T rd1() { return rd<T>(1)[0]; }

template <typename T>
static T rdStruct() {
    std::vector<unsigned char> b = rd<unsigned char>(sizeof(T));
    T v;
    memcpy(&v, b.data(), sizeof v);
    return v;
}
template <typename T>
static std::vector<T> poisoned(size_t n) {
    std::vector<T> v(n ? n : 1);
    memset(v.data(), 0xFF, v.size() * sizeof(T));
    return v;
}
template <typename T>
static void wr(FILE* out, const std::vector<T>& v, size_t n) {
    fwrite(v.data(), sizeof(T), n, out);
}

template <typename Fn>
static void grid(uint gx, uint gy, uint bx, Fn f) {
    for (uint y = 0; y < gy; ++y)
        for (uint x = 0; x < gx; ++x)
            for (uint t = 0; t < bx; ++t) f(uint3{x, y, 0}, uint3{t, 0, 0}, uint3{bx, 1, 1});
}

// f64: count, then count operands a, b (binary64 bits) and x (float);
// writes a+b, a*b, (double)x, frexp(a)'s mantissa and exponent.
static int f64(const char* outPath) {
    const int count = rd1<int>();
    std::vector<ulong> a = rd<ulong>(count), b = rd<ulong>(count);
    std::vector<float> x = rd<float>(count);
    std::vector<ulong> add(count), mul(count), wid(count), mant(count);
    std::vector<int> ex(count);
    for (int i = 0; i < count; ++i) {
        add[i] = sbd_add(a[i], b[i]);
        mul[i] = sbd_mul(a[i], b[i]);
        wid[i] = sbd_from_float(x[i]);
        int e = 0;
        mant[i] = sbd_frexp(a[i], e);
        ex[i] = e;
    }
    FILE* out = fopen(outPath, "wb");
    if (!out) return 2;
    wr(out, add, count);
    wr(out, mul, count);
    wr(out, wid, count);
    wr(out, mant, count);
    wr(out, ex, count);
    return fclose(out) == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
    if (argc == 4 && strcmp(argv[1], "f64") == 0) {
        in = fopen(argv[2], "rb");
        return in ? f64(argv[3]) : 2;
    }
    if (argc != 3) return 2;
    in = fopen(argv[1], "rb");
    if (!in) return 2;
    const int n = rd1<int>(), nh = rd1<int>(), n3 = rd1<int>(), prefix = rd1<int>(), launches = rd1<int>(), S = rd1<int>();
    std::vector<float> x = rd<float>(n), cl = rd<float>(n), r = rd<float>(n);
    std::vector<int> Lh = rd<int>(nh), L3 = rd<int>(n3), q = rd<int>(nh), sH = rd<int>(nh), p3 = rd<int>(n3),
                     s3 = rd<int>(n3), warmH = rd<int>(nh), warm3 = rd<int>(n3);
    std::vector<float> thr = rd<float>(31);
    IndParams ipH = rdStruct<IndParams>(), ipH3 = rdStruct<IndParams>(), ipScanX = rdStruct<IndParams>(),
                    ipWH = rdStruct<IndParams>(), ipW3 = rdStruct<IndParams>();
    std::vector<SweepParams> sp;
    for (int l = 0; l < launches; ++l) sp.push_back(rdStruct<SweepParams>());
    std::vector<int> bounds;
    std::vector<BlockParams> bp;
    if (S > 0) {
        bounds = rd<int>(S + 1);
        for (int l = 0; l < launches; ++l) bp.push_back(rdStruct<BlockParams>());
    }

    std::vector<float> s1x(n + 1), s2x(n + 1), s1c(n + 1), s2c(n + 1);
    std::vector<float> s1h((size_t)nh * (n + 1)), s2h((size_t)nh * (n + 1)), s13((size_t)n3 * (n + 1)),
        s23((size_t)n3 * (n + 1));
    std::vector<int> zero(1, 0);
    std::vector<float> dH((size_t)nh * n), dH3((size_t)n3 * n), H((size_t)nh * n), H3((size_t)n3 * n);
    const uint gx = (n + IND_BLOCK - 1) / IND_BLOCK;
    if (prefix) {
        grid(1, 1, 128, [&](uint3 bi, uint3 ti, uint3 bd) { prefix_scan_f32(x.data(), zero.data(), ipScanX, s1x.data(), s2x.data(), bi, ti, bd); });
        grid(1, 1, 128, [&](uint3 bi, uint3 ti, uint3 bd) { prefix_scan_f32(cl.data(), zero.data(), ipScanX, s1c.data(), s2c.data(), bi, ti, bd); });
    }
    grid(gx, nh, IND_BLOCK, [&](uint3 bi, uint3 ti, uint3 bd) { hma_stage1_f32(x.data(), s1x.data(), s2x.data(), Lh.data(), ipH, dH.data(), bi, ti, bd); });
    grid(gx, n3, IND_BLOCK, [&](uint3 bi, uint3 ti, uint3 bd) { hma3_stage1_f32(cl.data(), s1c.data(), s2c.data(), L3.data(), ipH3, dH3.data(), bi, ti, bd); });
    if (prefix) {
        IndParams a = ipH, c = ipH3;
        grid((nh + 127) / 128, 1, 128, [&](uint3 bi, uint3 ti, uint3 bd) { prefix_scan_f32(dH.data(), sH.data(), a, s1h.data(), s2h.data(), bi, ti, bd); });
        grid((n3 + 127) / 128, 1, 128, [&](uint3 bi, uint3 ti, uint3 bd) { prefix_scan_f32(dH3.data(), s3.data(), c, s13.data(), s23.data(), bi, ti, bd); });
    }
    grid(gx, nh, IND_BLOCK, [&](uint3 bi, uint3 ti, uint3 bd) { wma_series_f32(dH.data(), s1h.data(), s2h.data(), q.data(), sH.data(), ipWH, H.data(), bi, ti, bd); });
    grid(gx, n3, IND_BLOCK, [&](uint3 bi, uint3 ti, uint3 bd) { wma_series_f32(dH3.data(), s13.data(), s23.data(), p3.data(), s3.data(), ipW3, H3.data(), bi, ti, bd); });

    FILE* out = fopen(argv[2], "wb");
    if (!out) return 2;
    wr(out, H, H.size());
    wr(out, H3, H3.size());
    for (int l = 0; l < launches; ++l) {
        SweepParams P = sp[l];
        std::vector<float> buf((size_t)P.count * P.cap), outF((size_t)P.count * SB_NF);
        std::vector<int> outI = poisoned<int>((size_t)P.count * SB_NI);
        grid((P.count + SB_BLOCK - 1) / SB_BLOCK, 1, SB_BLOCK, [&](uint3 bi, uint3 ti, uint3 bd) {
            sweep_f32(H.data(), H3.data(), r.data(), warmH.data(), warm3.data(), thr.data(), P, buf.data(), outF.data(), outI.data(), bi, ti, bd);
        });
        wr(out, outF, outF.size());
        wr(out, outI, outI.size());
        if (S == 0) continue;
        BlockParams B = bp[l];
        const size_t per = (size_t)B.count * B.S;
        std::vector<ulong> oSum = poisoned<ulong>(per), oSq = poisoned<ulong>(per), oDown = poisoned<ulong>(per),
                           oMant = poisoned<ulong>(per), oS3 = poisoned<ulong>(B.count), oS4 = poisoned<ulong>(B.count);
        std::vector<int> oExp = poisoned<int>(per), oTrades = poisoned<int>(per), oWins = poisoned<int>(per);
        grid((B.count + SB_BLOCK - 1) / SB_BLOCK, 1, SB_BLOCK, [&](uint3 bi, uint3 ti, uint3 bd) {
            block_stats_f32(H.data(), H3.data(), r.data(), warmH.data(), warm3.data(), bounds.data(), B, oSum.data(),
                            oSq.data(), oDown.data(), oMant.data(), oExp.data(), oTrades.data(), oWins.data(), oS3.data(),
                            oS4.data(), bi, ti, bd);
        });
        wr(out, oSum, per);
        wr(out, oSq, per);
        wr(out, oDown, per);
        wr(out, oMant, per);
        wr(out, oExp, per);
        wr(out, oTrades, per);
        wr(out, oWins, per);
        wr(out, oS3, B.count);
        wr(out, oS4, B.count);
    }
    printf("layout sizeof(IndParams)=%zu sizeof(SweepParams)=%zu alignof(SweepParams)=%zu sizeof(BlockParams)=%zu alignof(BlockParams)=%zu\n",
           sizeof(IndParams), sizeof(SweepParams), alignof(SweepParams), sizeof(BlockParams), alignof(BlockParams));
    return fclose(out) == 0 ? 0 : 1;
}
