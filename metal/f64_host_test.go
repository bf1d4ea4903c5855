package metal

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
)

// TestF64OnHost checks f64.metal's software binary64 (compiled with the
// rest of the Metal source by GCC, buildHost) against Go's float64, which
// the CPU's hardware computes: a+b and a*b correctly rounded to nearest
// even, (double)x of a float, exact, and frexp as engine.Frexp; the same
// bits for every non-NaN result, a NaN where Go gives one. Operands: every
// pair of special values (zeros, subnormals, the normal extremes, ones,
// infinities, NaNs), random bits, random doubles near each other's
// negation (cancellation), in the subnormal range, near overflow,
// significands of 27 bits (products that are ties or exact), strategy
// returns as the block statistics see them, and random floats.
func TestF64OnHost(t *testing.T) {
	bin := buildHost(t)
	rng := datatest.Rand(t)
	var a, b []uint64
	var x []float32
	add := func(p, q uint64) {
		a, b = append(a, p), append(b, q)
		x = append(x, math.Float32frombits(rng.Uint32()))
	}
	specials := []float64{0, math.Copysign(0, -1), 5e-324, 2.2250738585072009e-308, 2.2250738585072014e-308,
		math.MaxFloat64, 1, 0.5, 2, 1 + 0x1p-52, 1 - 0x1p-53, 0x1p-1022 + 5e-324, 3, 1.5, 0x1p1023, 0x1p-1074 * 3,
		math.Inf(1), math.NaN(), 1e308, 1e-308}
	var sp []uint64
	for _, v := range specials {
		sp = append(sp, math.Float64bits(v), math.Float64bits(-v))
	}
	sp = append(sp, 0x7ff0000000000001, 0xfff4000000000000) // signalling NaNs
	for _, p := range sp {
		for _, q := range sp {
			add(p, q)
		}
	}
	randExp := func(lo, hi int) uint64 { // a random double of biased exponent in [lo, hi]
		return uint64(rng.Uint32N(2))<<63 | uint64(lo+rng.IntN(hi-lo+1))<<52 | rng.Uint64()&(1<<52-1)
	}
	for range 40000 {
		add(rng.Uint64(), rng.Uint64())
		// Near each other's negation: the exponents equal or one apart.
		p := randExp(1, 2046)
		q := (p ^ 1<<63) + uint64(rng.IntN(1<<20)) - 1<<19
		if rng.IntN(2) == 0 {
			q ^= rng.Uint64() & (1<<52 - 1) >> rng.IntN(52)
		}
		add(p, q)
		add(randExp(0, 60), randExp(0, 60))       // subnormal range and its edge
		add(randExp(400, 600), randExp(400, 600)) // products that underflow
		add(randExp(2000, 2046), randExp(2000, 2046))
		add(randExp(1, 2046), randExp(1, 2046))
		// Significands of 27 bits: their products fit 54 bits, ties often.
		m := func() uint64 { return rng.Uint64() & (1<<52 - 1) &^ (1<<26 - 1) }
		add(uint64(1000+rng.IntN(40))<<52|m(), uint64(1000+rng.IntN(40))<<52|m())
		// Block statistics' operands: returns of a float, their powers, sums.
		v := float64(float32(rng.NormFloat64() * 0.003))
		add(math.Float64bits(v), math.Float64bits(v*v))
		add(math.Float64bits(1+v), math.Float64bits(rng.Float64()*2))
		add(math.Float64bits(v*v*v), math.Float64bits(rng.Float64()*1e-6))
	}
	for i := 0; i < len(x); i += 5 { // floats of every class: subnormal, near the limits
		x[i] = math.Float32frombits(rng.Uint32() & 0x807fffff)
		if i+1 < len(x) {
			x[i+1] = math.Float32frombits(rng.Uint32()&0x80ffffff | 0x7f000000)
		}
	}

	got := runF64(t, bin, a, b, x)
	bad := 0
	check := func(what string, i int, got, want uint64) {
		if got == want || (isNaN(got) && isNaN(want)) {
			return
		}
		if bad++; bad <= 10 {
			t.Errorf("%s #%d: %#016x and %#016x (%v, %v, float %v) gave %#016x (%v), want %#016x (%v)", what, i, a[i], b[i],
				math.Float64frombits(a[i]), math.Float64frombits(b[i]), x[i], got, math.Float64frombits(got), want, math.Float64frombits(want))
		}
	}
	for i := range a {
		fa, fb := math.Float64frombits(a[i]), math.Float64frombits(b[i])
		check("add", i, got.add[i], math.Float64bits(fa+fb))
		check("mul", i, got.mul[i], math.Float64bits(fa*fb))
		check("widen", i, got.wid[i], math.Float64bits(float64(x[i])))
		m, e := engine.Frexp(fa, 0)
		check("frexp", i, got.mant[i], math.Float64bits(m))
		if got.ex[i] != int32(e) {
			if bad++; bad <= 10 {
				t.Errorf("frexp #%d of %v: exponent %d, want %d", i, fa, got.ex[i], e)
			}
		}
	}
	t.Logf("%d operand pairs, %d differences", len(a), bad)
}

func isNaN(u uint64) bool { return u&^(1<<63) > 0x7ff<<52 }

type f64Results struct {
	add, mul, wid, mant []uint64
	ex                  []int32
}

// runF64 runs the host binary's f64 mode over the operands.
func runF64(t *testing.T, bin string, a, b []uint64, x []float32) f64Results {
	t.Helper()
	var in bytes.Buffer
	for _, v := range []any{int32(len(a)), a, b, x} {
		_ = binary.Write(&in, binary.LittleEndian, v) // a bytes.Buffer never fails
	}
	dir := t.TempDir()
	inPath, outPath := filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")
	if err := os.WriteFile(inPath, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "f64", inPath, outPath).CombinedOutput(); err != nil {
		t.Fatalf("host run: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	n := len(a)
	r := f64Results{add: make([]uint64, n), mul: make([]uint64, n), wid: make([]uint64, n), mant: make([]uint64, n), ex: make([]int32, n)}
	rd := bytes.NewReader(raw)
	for _, v := range []any{r.add, r.mul, r.wid, r.mant, r.ex} {
		if err := binary.Read(rd, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	if rd.Len() != 0 {
		t.Fatalf("%d bytes of output left unread", rd.Len())
	}
	return r
}
