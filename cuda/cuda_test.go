package cuda

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// TestPTXFresh fails when a kernel source changed without the embedded PTX
// being regenerated (scripts/cuda-build.sh on a machine with nvcc, or
// scripts/cuda-device.sh through the device tool, then copy $OUT/ptx/*
// into cuda/ptx/).
func TestPTXFresh(t *testing.T) {
	want, err := SourcesHash(os.DirFS("kernels"), os.DirFS("../reference/kernels"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := embeddedSourcesHash()
	if err != nil {
		t.Fatalf("cuda/ptx/SOURCES.sha256 missing (%v): generate the PTX with scripts/cuda-build.sh", err)
	}
	if got != want {
		t.Fatalf("embedded PTX was built from kernel sources %s, the sources now hash to %s: regenerate with scripts/cuda-build.sh", got, want)
	}
	if os.Getenv(PTXDirEnv) != "" {
		t.Skip("PTX overridden by " + PTXDirEnv)
	}
	for _, m := range moduleNames {
		b, src, err := loadImage(m, 7, 5) // no cubin for sm_75: the PTX
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), ".target sm_80") {
			t.Errorf("%s: want PTX for .target sm_80 (compute_80)", src)
		}
		for _, k := range kernelNames[m] {
			if !strings.Contains(string(b), ".entry "+k+"(") {
				t.Errorf("%s lacks kernel %s", src, k)
			}
		}
		// --fmad=false: no fused multiply-add anywhere (SPEC "Indicators").
		if strings.Contains(string(b), "fma.rn") {
			t.Errorf("%s contains fma.rn: built without --fmad=false?", src)
		}
	}
}

// TestCubinsFresh: every embedded cubin was assembled from the embedded
// PTX as it is now (CUBINS.sha256 records the PTX's SHA-256 per cubin), is
// an ELF image, and is the one a device of its architecture loads; other
// devices get the PTX.
func TestCubinsFresh(t *testing.T) {
	rec, err := ptxFS.ReadFile("ptx/CUBINS.sha256")
	if err != nil {
		t.Fatalf("cuda/ptx/CUBINS.sha256 missing (%v): assemble the cubins with scripts/cuda-build.sh", err)
	}
	recorded := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(rec)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("CUBINS.sha256: bad line %q", line)
		}
		recorded[f[0]] = f[1]
	}
	for _, m := range moduleNames {
		ptx, err := ptxFS.ReadFile("ptx/" + m + ".ptx")
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(ptx)
		for _, a := range cubinArchs {
			name := fmt.Sprintf("%s.sm_%d.cubin", m, a)
			if got := recorded[name]; got != hex.EncodeToString(sum[:]) {
				t.Errorf("%s was assembled from PTX %s, the embedded %s.ptx is %x: assemble again (scripts/cuda-build.sh)", name, got, m, sum)
			}
			b, src, err := loadImage(m, a/10, a%10+1)
			if err != nil || !bytes.HasPrefix(b, []byte("\x7fELF")) || !strings.HasSuffix(src, name) {
				t.Errorf("device sm_%d%d loads %s (%d bytes, %v): want %s, an ELF cubin", a/10, a%10+1, src, len(b), err, name)
			}
		}
	}
	for _, c := range []struct {
		cc   string
		want string
	}{{"9.0", "cubin sm_90"}, {"8.0", "cubin sm_80"}, {"8.9", "cubin sm_80"}, {"7.5", "PTX (JIT)"}, {"10.0", "PTX (JIT)"}, {"9.1", "cubin sm_90"}} {
		if got := KernelImage(c.cc); got != c.want && os.Getenv(PTXDirEnv) == "" {
			t.Errorf("KernelImage(%s) = %s, want %s", c.cc, got, c.want)
		}
	}
}

func TestPackArgs(t *testing.T) {
	ka, err := packArgs(devPtr(0x1234_5678_9abc), int32(-2), int64(-3), float32(1.5), float64(-0.25))
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x1234_5678_9abc, 0xffff_fffe, 0xffff_ffff_ffff_fffd, uint64(math.Float32bits(1.5)), math.Float64bits(-0.25)}
	for i, w := range want {
		if ka.slots[i] != w {
			t.Errorf("slot %d = %#x, want %#x", i, ka.slots[i], w)
		}
		if ka.ptrs[i] != unsafe.Pointer(&ka.slots[i]) {
			t.Errorf("pointer %d does not address its slot", i)
		}
	}
	// The C side reads a 4-byte parameter from the slot's first bytes.
	if got := *(*int32)(ka.ptrs[1]); got != -2 {
		t.Errorf("int32 read back as %d", got)
	}
	if got := *(*float32)(ka.ptrs[3]); got != 1.5 {
		t.Errorf("float32 read back as %v", got)
	}
	if _, err := packArgs(7); err == nil {
		t.Error("a Go int was accepted; its C width is ambiguous")
	}
	if floatArg(float32(2)) != any(float32(2)) || floatArg(2.0) != any(2.0) {
		t.Error("floatArg changed the parameter's width")
	}
}

func TestLaunchSizing(t *testing.T) {
	per := bytesPerCombo(kernels.SelectCap(150_000), 8, 150_000)
	if per != uint64(2343*8+15*8+10*4+4*9375) { // 9375 = ceil(149,999 / 16) position words
		t.Fatalf("bytes per combo = %d", per)
	}
	cases := []struct {
		name string
		free uint64
		want int
		got  int
	}{
		{"fits", 140 << 30, 102_400, 102_400},
		{"capped at maxLaunch", 1 << 50, 5 << 20, maxLaunch},
		{"memory bound", 1 << 30, 102_400, int(uint64(1<<29) / per)},
		{"small grid", 1 << 30, 80, 80},
		{"nothing fits", 1 << 20, 102_400, 0},
		{"empty", 1 << 30, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := launchCombos(c.free, per, c.want); got != c.got {
				t.Errorf("launchCombos(%d, %d, %d) = %d, want %d", c.free, per, c.want, got, c.got)
			}
		})
	}
	for _, c := range []struct{ total, lanes, want int }{
		{80, 1, 80}, {102_400, 1, 102_400}, {102_400, 2, 51_200}, {1 << 22, 1, maxChunk}, {1, 8, 1},
	} {
		if got := chunkSize(c.total, c.lanes); got != c.want {
			t.Errorf("chunkSize(%d, %d) = %d, want %d", c.total, c.lanes, got, c.want)
		}
	}
	if kernels.SelectCap(10) != 1024 || kernels.SelectCap(10_000_000) != 8192 {
		t.Error("selectCap bounds")
	}
	// kthIndex against the SPEC formula by hand: m = 149,999 -> floor(0.05*149998) = 7499.
	if k := kernels.KthIndex(149_999); k != 7499 {
		t.Errorf("kthIndex = %d, want 7499", k)
	}
}

func TestErrorType(t *testing.T) {
	err := fmt.Errorf("sweep: %w", &Error{Call: "cuMemAlloc", Code: codeOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY", String: "out of memory"})
	if !IsOutOfMemory(err) {
		t.Error("IsOutOfMemory misses a wrapped out-of-memory error")
	}
	var e *Error
	if !errors.As(err, &e) || e.Call != "cuMemAlloc" {
		t.Error("errors.As does not reach *cuda.Error")
	}
	if IsOutOfMemory(errors.New("out of memory")) {
		t.Error("a plain error counted as CUDA out of memory")
	}
	if !strings.Contains(err.Error(), "CUDA_ERROR_OUT_OF_MEMORY") {
		t.Errorf("message %q lacks the error name", err)
	}
}

// TestAvailableSaysWhy: on a machine without the driver (CI, this
// workstation) Available returns a plain reason.
func TestAvailableSaysWhy(t *testing.T) {
	b := New()
	if b.Name() != "cuda" {
		t.Errorf("Name = %q", b.Name())
	}
	err := b.Available()
	if err == nil {
		t.Log("CUDA available")
		return
	}
	t.Logf("not available: %v", err)
	if !strings.Contains(err.Error(), "CUDA") && !strings.Contains(err.Error(), "PTX") {
		t.Errorf("reason %q does not say what is missing", err)
	}
	if _, err2 := b.Devices(); err2 == nil {
		t.Error("Devices succeeded although Available failed")
	}
	if n := b.DeviceCount(); n != 0 {
		t.Errorf("DeviceCount = %d without CUDA", n)
	}
	if v := b.WithDevices(1); v.Available() == nil {
		t.Error("WithDevices made an unavailable backend available")
	}
}

// TestInPieces: Compute's launch loop covers every combo once, in order;
// an out-of-memory on more than kernels.MinLaunch combos frees what it can
// and halves the launch, one at kernels.MinLaunch or another error is
// final, and a cancelled context stops it.
func TestInPieces(t *testing.T) {
	oom := &Error{Call: "cuMemAlloc", Code: codeOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY", String: "out of memory"}
	var pieces [][2]int
	shrinks := 0
	most := 10_000
	err := inPieces(context.Background(), 10_000, &most, func(a, cnt int) error {
		if cnt > 2500 {
			return fmt.Errorf("launch: %w", oom)
		}
		pieces = append(pieces, [2]int{a, cnt})
		return nil
	}, func() error { shrinks++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if most != 2500 || shrinks != 2 {
		t.Errorf("most %d after %d shrinks, want 2500 after 2 (10,000 -> 5,000 -> 2,500)", most, shrinks)
	}
	next := 0
	for _, p := range pieces {
		if p[0] != next || p[1] > 2500 {
			t.Fatalf("pieces %v: not consecutive launches of at most 2,500", pieces)
		}
		next += p[1]
	}
	if next != 10_000 || len(pieces) != 4 {
		t.Errorf("pieces %v cover %d combos, want 10,000 in 4", pieces, next)
	}

	most = kernels.MinLaunch
	if err := inPieces(context.Background(), 1000, &most, func(int, int) error { return oom }, func() error { return nil }); !IsOutOfMemory(err) {
		t.Errorf("out of memory at MinLaunch: %v, want it returned", err)
	}
	boom := errors.New("launch failed")
	most = 1000
	if err := inPieces(context.Background(), 1000, &most, func(int, int) error { return boom }, func() error { return nil }); !errors.Is(err, boom) {
		t.Errorf("another error: %v, want it returned", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := inPieces(ctx, 1000, &most, func(int, int) error { return nil }, func() error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestSweepKernel: the kernel a grid takes and the entry point it launches
// (the names TestPTXFresh finds in the PTX).
func TestSweepKernel(t *testing.T) {
	for _, c := range []struct {
		total int
		want  sweepKernel
		entry string
	}{{1, threadPerCombo, "sweep_f32_k1"}, {80, threadPerCombo, "sweep_f32_k1"}, {8191, threadPerCombo, "sweep_f32_k1"}, {102_400, threadPerCombo, "sweep_f32_k1"}} {
		if got := kernelFor(c.total); got != c.want || got.entry("f32") != c.entry {
			t.Errorf("kernelFor(%d) = %v (%s), want %v (%s)", c.total, got, got.entry("f32"), c.want, c.entry)
		}
	}
	for _, sk := range []sweepKernel{barParallel, threadPerCombo} {
		for _, sfx := range []string{"f32", "f64"} {
			if e := sk.entry(sfx); !slices.Contains(kernelNames["sweep"], e) {
				t.Errorf("%v %s: entry %s, not among the loaded kernels", sk, sfx, e)
			}
		}
	}
}

// TestEmulatedKernel checks the sweep kernel's algorithm, transcribed in
// emulateCombo, against reference.Backtest on fresh random walks: every
// accumulator is summed in the reference's order, so everything but
// cvar_95 must be identical, in fp64 and fp32; a tiny buffer forces the
// refinement passes of the VaR selection.
func TestEmulatedKernel(t *testing.T) {
	rng := datatest.Rand(t)
	for _, tc := range []struct {
		name  string
		n     int
		price float64
		tick  float64
		mode  engine.Mode
		cap   int
	}{
		{"long-short", 6000, 4, 0.001, engine.LongShort, 0},
		{"long-only", 6000, 4, 0.001, engine.LongOnly, 0},
		{"refine", 4000, 30000, 0.1, engine.LongShort, 4},
		{"refine long-only", 4000, 4, 0.001, engine.LongOnly, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bars := datatest.TickWalk(rng, tc.n, tc.price, tc.tick)
			grid := engine.Grid{HMA: mustRange(t, "--hma", "4:60:7"), HMA3: mustRange(t, "--hma3", "6:90:12")}
			p := defaultParams()
			p.Mode = tc.mode
			emulateGrid[float64](t, bars, grid, p, tc.cap, 1e-12)
			emulateGrid[float32](t, bars, grid, p, tc.cap, 1e-5)
		})
	}
}

func emulateGrid[F engine.Float](t *testing.T, bars *engine.Bars, grid engine.Grid, p engine.Params, capacity int, cvarTol float64) {
	ind, err := reference.BuildIndicators[F](t.Context(), bars, grid, p.Source, engine.Direct)
	if err != nil {
		t.Fatal(err)
	}
	n := bars.Len()
	if capacity == 0 {
		capacity = kernels.SelectCap(n)
	}
	keep := F(1) - F(p.Fee)
	thr := kernels.BinsFromReturns(ind.R)
	if len(thr.Edges) != kernels.NumBins-1 {
		t.Fatalf("%d thresholds, want %d", len(thr.Edges), kernels.NumBins-1)
	}
	// The kernel's bin arithmetic (sb_bin) counts the edges <= v.
	probe := []F{0, -0.0, F(math.Inf(-1)), F(math.Inf(1)), F(math.SmallestNonzeroFloat32), -F(math.SmallestNonzeroFloat32)}
	probe = append(probe, thr.Edges...)
	for _, e := range thr.Edges {
		probe = append(probe, kernels.Val[F](kernels.Key(e)-1), kernels.Val[F](kernels.Key(e)+1))
	}
	for i := 1; i < n; i += 7 {
		probe = append(probe, ind.R[i], -ind.R[i], ind.R[i]*3, -ind.R[i]/5)
	}
	for _, v := range probe {
		want := 0
		for _, e := range thr.Edges {
			if e <= v {
				want++
			}
		}
		if got := thr.Bin(v); got != want {
			t.Fatalf("bin(%v) = %d, want %d (edges %v)", v, got, want, thr.Edges)
		}
		if got := sbBin(&thr, v); got != want {
			t.Fatalf("sb_bin(%v) = %d, want %d (edges %v)", v, got, want, thr.Edges)
		}
	}
	got := make([]engine.Metrics, grid.Len())
	want := make([]engine.Metrics, grid.Len())
	var sc reference.Scratch[F]
	refined := 0
	// sweep_body starts each thread at its warp's smallest first bar: the
	// minimum over 32 consecutive combos of the grid.
	firsts := make([]int, len(got))
	for i := range got {
		c := grid.At(i)
		firsts[i] = min(max(engine.HMAWarmup(c.HMA), engine.HMA3Warmup(c.HMA3)), n-1)
	}
	for i := range got {
		c := grid.At(i)
		warm := firsts[i]
		w0 := i / 32 * 32
		start := slices.Min(firsts[w0:min(w0+32, len(firsts))])
		lo := p.Mode == engine.LongOnly
		raw := emulateCombo(ind.H[c.HMA], ind.H3[c.HMA3], ind.R, warm, start, keep, keep*keep, lo, kernels.KthIndex(n-1), thr, capacity)
		// Starting earlier (flat bars with rs = 0) changes no bit.
		for _, s := range []int{warm, 0} {
			if other := emulateCombo(ind.H[c.HMA], ind.H3[c.HMA3], ind.R, warm, s, keep, keep*keep, lo, kernels.KthIndex(n-1), thr, capacity); other != raw {
				t.Fatalf("combo %v: start %d gives %+v, start %d gives %+v", c, start, raw, s, other)
			}
		}
		if raw.Refine > 0 {
			refined++
		}
		got[i] = raw.Finish(n, p)
		want[i] = reference.Backtest(ind.H[c.HMA], ind.H3[c.HMA3], ind.R, warm, p, &sc)
	}
	var z F
	label := fmt.Sprintf("emulated fp%d cap %d", 8*unsafe.Sizeof(z), capacity)
	conformance.CompareMetrics(t, label, got, want, grid, conformance.Tolerance{Rel: 0, CVaR: cvarTol})
	t.Logf("%s: %d of %d combos refined their VaR bin", label, refined, len(got))
}

// sbBin transcribes sweep.cu's branch-free sb_bin: the signed difference
// of the high key bits, an arithmetic shift, a clamp to 0..29, then the
// zero and positive bins.
func sbBin[F engine.Float](b *kernels.Bins[F], v F) int {
	t := int32(kernels.KeyHi(v)-b.K0) >> b.Shift
	bin := int(min(max(t+1, 0), 29))
	if v >= 0 {
		bin = 30
		if v > 0 {
			bin = 31
		}
	}
	return bin
}
