// blocks.metal — the per-block statistics of engine.BlockStats in fp32,
// the Metal twin of cuda/kernels/sweep.cu's block_stats kernel: per combo
// and block of bar returns the sum of rs, of rs^2 and of min(rs,0)^2, the
// product of the growth factors 1+rs as a mantissa and a power of two, the
// trades closed and won; per combo the sums of rs^3 and rs^4. Bar for bar
// as reference.BacktestBlocks and CUDA compute them, so the same bits.
//
// block_stats_f32
//   Grid:   1-D, ceil(count / SB_BLOCK) threadgroups (sweep.metal's SB_BLOCK).
//   Group:  SB_BLOCK (64) threads; thread t of group b owns local combo
//           j = b*SB_BLOCK + t, grid combo c = comboFirst + j, as sweep_f32
//           maps it (the host dispatches both over the same combos).
//   Thread: replays its combo's positions from the indicator series
//           (sb_position, as sweep_f32's second pass does; CUDA reads the
//           positions its sweep stored instead) over bars first..n-2: rs =
//           g - 1 in float (sb_regrowth), widened to double and added to its
//           block's sums in bar order (sum, squares, squared losses, and
//           over all bars rs^3 and rs^4), each product rounded, in software
//           binary64 (f64.metal: Apple GPUs have no double); the block's
//           growth as the running product of 1+rs, split every 64 returns
//           from the block's start into a mantissa in [0.5, 1) and a power
//           of two (sbd_frexp), so that the host takes the one log
//           (engine.LogGrowth). A trade is counted in the block of the bar
//           that closes it (won: its product with the exit fee > 1, as
//           sb_step tests it). Bars before first return 0: nothing to add;
//           the host fills the bar counts.
//   Threadgroup memory: none.
//   Output: [j*S + b] per block (sum, sumSq, sumDown, mantissa: binary64
//           bits; exponent, trades, wins: int), [j] per combo (sum3, sum4:
//           binary64 bits). Unwritten slots keep the host's 0xFF poison.
#include "sweep_common.h"

#if !defined(SB_BLOCK)
#error "blocks.metal follows sweep.metal in metal.Source (SB_BLOCK)"
#endif

// BlockParams is the constant block of block_stats_f32 (metal.blockParams).
struct BlockParams {
    int n;           // bars
    int nh;          // unique HMA lengths (columns of H)
    int n3;          // unique HMA3 lengths (columns of H3)
    int count;       // combos in this dispatch
    long comboFirst; // grid index of local combo 0
    float keep;      // 1-f
    float keep2;     // (1-f)^2
    int longOnly;
    int S;           // blocks; bounds holds S+1 edges
};

// SbBlock is one block's running statistics (binary64 bits, f64.metal).
struct SbBlock {
    ulong sum, sq, down, prod;
    int ex, trades, wins;
};

static inline void sb_block_reset(thread SbBlock& a) {
    a.sum = 0;
    a.sq = 0;
    a.down = 0;
    a.prod = SBD_ONE;
    a.ex = 0;
    a.trades = 0;
    a.wins = 0;
}

// sb_block_close writes block a to slot k and starts the next one.
static inline void sb_block_close(thread SbBlock& a, long k, device ulong* oSum, device ulong* oSq,
                                  device ulong* oDown, device ulong* oMant, device int* oExp, device int* oTrades,
                                  device int* oWins) {
    a.prod = sbd_frexp(a.prod, a.ex);
    oSum[k] = a.sum;
    oSq[k] = a.sq;
    oDown[k] = a.down;
    oMant[k] = a.prod;
    oExp[k] = a.ex;
    oTrades[k] = a.trades;
    oWins[k] = a.wins;
    sb_block_reset(a);
}

SB_KERNEL void block_stats_f32(const device float* H [[buffer(0)]], const device float* H3 [[buffer(1)]],
                               const device float* R [[buffer(2)]], const device int* warmH [[buffer(3)]],
                               const device int* warm3 [[buffer(4)]], const device int* bounds [[buffer(5)]],
                               constant BlockParams& P [[buffer(6)]], device ulong* oSum [[buffer(7)]],
                               device ulong* oSq [[buffer(8)]], device ulong* oDown [[buffer(9)]],
                               device ulong* oMant [[buffer(10)]], device int* oExp [[buffer(11)]],
                               device int* oTrades [[buffer(12)]], device int* oWins [[buffer(13)]],
                               device ulong* oS3 [[buffer(14)]], device ulong* oS4 [[buffer(15)]], SB_THREAD_INDEX) {
    const int j = (int)(blockIdx.x * SB_BLOCK + threadIdx.x);
    if (j >= P.count) return;
    const int n = P.n, nh = P.nh, n3 = P.n3, S = P.S, longOnly = P.longOnly;
    const float keep = P.keep, keep2 = P.keep2;

    const long c = P.comboFirst + j;
    const int hi = (int)(c / n3), ti = (int)(c % n3);
    int first = max(warmH[hi], warm3[ti]);
    first = min(max(first, 0), n - 1);
    const device float* hcol = H + hi;
    const device float* h3col = H3 + ti;
    const long row = (long)j * S;

    SbBlock a;
    sb_block_reset(a);
    ulong s3 = 0, s4 = 0;
    int b = 0;
    // Blocks wholly in the warm-up: rs = 0 throughout.
    while (b < S - 1 && first >= bounds[b + 1]) {
        sb_block_close(a, row + b, oSum, oSq, oDown, oMant, oExp, oTrades, oWins);
        ++b;
    }
    int prev = 0;
    float tp = 0.0f; // the open trade's product, entry fee included
    const int iend = n - 2;
    for (int i = first; i <= iend; ++i) {
        while (i >= bounds[b + 1]) {
            sb_block_close(a, row + b, oSum, oSq, oDown, oMant, oExp, oTrades, oWins);
            ++b;
        }
        const float rr = R[i + 1];
        const bool last = i == iend;
        const int pos = sb_position<float>(h3col[(long)i * n3], hcol[(long)i * nh], prev, longOnly);
        const int d = pos - prev;
        if (d != 0 && prev != 0) {
            const float t = tp * keep;
            ++a.trades;
            a.wins += t > 1.0f ? 1 : 0;
        }
        if (d != 0 && pos != 0) tp = keep;
        const float f = pos == 1 ? 1.0f + rr : (pos == -1 ? 1.0f - rr : 1.0f);
        tp = tp * f;
        if (last && pos != 0) {
            const float t2 = tp * keep;
            ++a.trades;
            a.wins += t2 > 1.0f ? 1 : 0;
        }
        const float g = sb_regrowth<float>(prev, pos, rr, last, keep, keep2);
        const float vf = g - 1.0f;
        const ulong v = sbd_from_float(vf);
        const ulong v2 = sbd_mul(v, v);
        a.sum = sbd_add(a.sum, v);
        a.sq = sbd_add(a.sq, v2);
        if (vf < 0.0f) a.down = sbd_add(a.down, v2); // (double)vf < 0 exactly when vf < 0
        s3 = sbd_add(s3, sbd_mul(v2, v));
        s4 = sbd_add(s4, sbd_mul(v2, v2));
        a.prod = sbd_mul(a.prod, sbd_add(SBD_ONE, v));
        if (((i - bounds[b]) & 63) == 63) a.prod = sbd_frexp(a.prod, a.ex);
    }
    while (b < S) {
        sb_block_close(a, row + b, oSum, oSq, oDown, oMant, oExp, oTrades, oWins);
        ++b;
    }
    oS3[j] = s3;
    oS4[j] = s4;
}
