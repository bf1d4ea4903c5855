// f64.metal — IEEE 754 binary64 in software, for the block statistics
// (blocks.metal). Apple GPUs have no double, and engine.BlockStats' sums
// are float64 sums in bar order that the CPU reference (Go's float64) and
// CUDA (__dadd_rn, __dmul_rn) compute with the same bits; this file gives
// the Metal kernel the same operations out of 32- and 64-bit integers.
//
// A value is its 64 bits (ulong: Go's math.Float64bits). sbd_add and
// sbd_mul are correctly rounded to nearest, ties to even, over the whole
// range: subnormals (no flush to zero), signed zeros, overflow to
// infinity. Every non-NaN result has hardware double's bits; a NaN result
// is a NaN (an operand's, quieted, the first one's when both are; the
// default 0x7ff8... for inf - inf and 0 * inf), whose payload is not
// compared anywhere. metal/msl_host_test.go checks them against Go's
// float64 on the host (TestF64OnHost): random bits, every class of
// operand, ties, cancellations, underflow and overflow.
//
// No thread indexing and no Metal library function: only integer
// arithmetic, so the host compilation runs this exact text.

#define SBD_SIGN ((ulong)1 << 63)
#define SBD_HIDDEN ((ulong)1 << 52)
#define SBD_FRAC (SBD_HIDDEN - 1)
#define SBD_INF ((ulong)0x7ff << 52)
#define SBD_QUIET ((ulong)1 << 51)
#define SBD_NAN (SBD_INF | SBD_QUIET)
#define SBD_ONE ((ulong)0x3ff << 52) // 1.0

// sbd_clz counts the leading zero bits of x != 0.
static inline int sbd_clz(ulong x) {
    int n = 0;
    if ((x >> 32) == 0) { n += 32; x <<= 32; }
    if ((x >> 48) == 0) { n += 16; x <<= 16; }
    if ((x >> 56) == 0) { n += 8; x <<= 8; }
    if ((x >> 60) == 0) { n += 4; x <<= 4; }
    if ((x >> 62) == 0) { n += 2; x <<= 2; }
    if ((x >> 63) == 0) { n += 1; }
    return n;
}

// sbd_round_pack rounds m * 2^q (1 <= m < 2^63) to the nearest binary64,
// ties to even, with the given sign bit. m may carry a sticky bit: its
// lowest bit set when nonzero bits below it were dropped; callers keep it
// at least two bits below the rounding position after normalisation
// (m >= 2^60 whenever it is set), so that the rounding sees what the exact
// value would give.
static inline ulong sbd_round_pack(ulong sign, int q, ulong m) {
    const int z = sbd_clz(m) - 1;
    m <<= z; // m in [2^62, 2^63)
    q -= z;
    // Normal: the significand is m >> 10, its hidden bit at 52, the value
    // (m >> 10) * 2^(q + 10), so the biased exponent is q + 10 + 1075.
    int e = q + 1085;
    int s = 10;
    if (e < 1) {
        // Subnormal: the significand counts units of 2^-1074.
        s = 11 - e;
        e = 0;
        if (s > 63) return sign; // below half the smallest subnormal
    }
    ulong r = m >> s;
    const ulong rem = m & (((ulong)1 << s) - 1);
    const ulong half = (ulong)1 << (s - 1);
    if (rem > half || (rem == half && (r & 1) != 0)) r += 1;
    // A subnormal that rounds up to 2^52 is the smallest normal: the
    // carry lands in the exponent field, as packing r gives.
    if (e == 0) return sign | r;
    if ((r >> 53) != 0) {
        r >>= 1;
        e += 1;
    }
    if (e >= 0x7ff) return sign | SBD_INF;
    return sign | ((ulong)e << 52) | (r & SBD_FRAC);
}

// sbd_from_float is (double)x, exact.
static inline ulong sbd_from_float(float x) {
    const uint u = as_type<uint>(x);
    const ulong sign = (ulong)(u >> 31) << 63;
    const uint e = (u >> 23) & 0xffu;
    const uint f = u & 0x7fffffu;
    if (e == 0xffu) return sign | SBD_INF | ((ulong)f << 29) | (f != 0u ? SBD_QUIET : (ulong)0);
    if (e == 0u) {
        if (f == 0u) return sign;
        // A float subnormal f * 2^-149 is a double normal: its top bit
        // becomes the hidden bit.
        const int z = sbd_clz((ulong)f) - 40; // f << z in [2^23, 2^24)
        return sign | ((ulong)(897 - z) << 52) | ((ulong)((f << z) & 0x7fffffu) << 29);
    }
    return sign | ((ulong)(e + 896u) << 52) | ((ulong)f << 29);
}

// sbd_nan2 is the NaN of an operation with a NaN operand: a's, quieted,
// when a is a NaN, else b's.
static inline ulong sbd_nan2(ulong a, ulong b) {
    return ((a & ~SBD_SIGN) > SBD_INF ? a : b) | SBD_QUIET;
}

// sbd_add is a + b.
static inline ulong sbd_add(ulong a, ulong b) {
    const ulong sa = a & SBD_SIGN, sb = b & SBD_SIGN;
    const int ea = (int)((a >> 52) & 0x7ff), eb = (int)((b >> 52) & 0x7ff);
    if (ea == 0x7ff || eb == 0x7ff) {
        if ((a & ~SBD_SIGN) > SBD_INF || (b & ~SBD_SIGN) > SBD_INF) return sbd_nan2(a, b);
        if (ea == 0x7ff && eb == 0x7ff && sa != sb) return SBD_NAN; // inf - inf
        return ea == 0x7ff ? a : b;
    }
    ulong ma = a & SBD_FRAC, mb = b & SBD_FRAC;
    if (ea != 0) ma |= SBD_HIDDEN;
    if (eb != 0) mb |= SBD_HIDDEN;
    if (mb == 0) return ma == 0 ? (sa & sb) : a; // -0 only for -0 + -0
    if (ma == 0) return b;
    // value = m * 2^(max(e,1) - 1075); 9 spare bits below, 1 above for
    // the carry: m < 2^62.
    int qa = max(ea, 1) - 1084, qb = max(eb, 1) - 1084;
    ma <<= 9;
    mb <<= 9;
    // x: the operand of the larger exponent.
    ulong mx = ma, my = mb, sx = sa, sy = sb;
    int qx = qa, d = qa - qb;
    if (d < 0) {
        mx = mb; my = ma; sx = sb; sy = sa;
        qx = qb;
        d = -d;
    }
    // Align y to x, its dropped bits kept as a sticky bit. Bits are dropped
    // only when d > 9: then mx >= 2^61 and my < 2^53, so the sum or the
    // difference is >= 2^60 (the sticky bit stays far below the rounding).
    if (d >= 63) {
        my = (ulong)1; // nonzero, below everything mx holds
    } else if (d > 0) {
        my = (my >> d) | (ulong)((my << (64 - d)) != 0);
    }
    if (sx == sy) return sbd_round_pack(sx, qx, mx + my);
    if (mx == my) return (ulong)0; // x - x = +0
    if (mx > my) return sbd_round_pack(sx, qx, mx - my);
    return sbd_round_pack(sy, qx, my - mx);
}

// sbd_mul is a * b.
static inline ulong sbd_mul(ulong a, ulong b) {
    const ulong sign = (a ^ b) & SBD_SIGN;
    const int ea = (int)((a >> 52) & 0x7ff), eb = (int)((b >> 52) & 0x7ff);
    ulong ma = a & SBD_FRAC, mb = b & SBD_FRAC;
    if (ea == 0x7ff || eb == 0x7ff) {
        if ((a & ~SBD_SIGN) > SBD_INF || (b & ~SBD_SIGN) > SBD_INF) return sbd_nan2(a, b);
        if ((a & ~SBD_SIGN) == 0 || (b & ~SBD_SIGN) == 0) return SBD_NAN; // inf * 0
        return sign | SBD_INF;
    }
    if ((ea == 0 && ma == 0) || (eb == 0 && mb == 0)) return sign;
    // Significands in [2^52, 2^53), value m * 2^q (subnormals normalised).
    int qa, qb;
    if (ea == 0) {
        const int z = sbd_clz(ma) - 11;
        ma <<= z;
        qa = -1074 - z;
    } else {
        ma |= SBD_HIDDEN;
        qa = ea - 1075;
    }
    if (eb == 0) {
        const int z = sbd_clz(mb) - 11;
        mb <<= z;
        qb = -1074 - z;
    } else {
        mb |= SBD_HIDDEN;
        qb = eb - 1075;
    }
    // The 106-bit product from 32-bit halves (a1, b1 < 2^21).
    const ulong a1 = ma >> 32, a0 = ma & 0xffffffffu, b1 = mb >> 32, b0 = mb & 0xffffffffu;
    const ulong p00 = a0 * b0, mid = a0 * b1 + a1 * b0, p11 = a1 * b1; // mid < 2^54
    const ulong lo = p00 + (mid << 32);
    const ulong hi = p11 + (mid >> 32) + (ulong)(lo < p00); // < 2^42
    // The top 63 bits of the product (>= 2^61), the other 43 as a sticky bit.
    const ulong m = (hi << 21) | (lo >> 43) | (ulong)((lo & (((ulong)1 << 43) - 1)) != 0);
    return sbd_round_pack(sign, qa + qb + 43, m);
}

// sbd_frexp splits a normal positive x into m in [0.5, 1) and x = m * 2^e
// (e added to e), as engine.Frexp and CUDA's sb_frexp; zero, negative,
// subnormal and non-finite x are left as they are.
static inline ulong sbd_frexp(ulong x, thread int& e) {
    const int be = (int)((x >> 52) & 0x7ff);
    if ((x & SBD_SIGN) != 0 || be == 0 || be == 0x7ff) return x;
    e += be - 1022;
    return (x & ~((ulong)0x7ff << 52)) | ((ulong)1022 << 52);
}
