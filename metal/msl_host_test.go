package metal

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// TestMSLOnHost compiles Source() as C++ with g++ against a stand-in for
// the Metal standard library (testdata/mslhost/metal_stdlib) and runs
// every kernel on the CPU, thread after thread, with the parameter blocks
// packed by indParams.bytes and sweepParams.bytes. It checks, without a
// Mac: that the prelude makes sweep_common.h and the .metal files one
// valid translation unit, that the
// packed parameters are what the kernels read, that the indicator series
// are bit for bit the reference's float32 HMA and HMA3 (direct and prefix), and
// that the sweep's raw outputs finished by finish equal reference.Backtest
// in float32 (CVaR to rounding: its sum runs in the buffer's order).
//
// What it cannot check: Apple's compiler (its dialect, its treatment of
// double literals, FMA contraction, division rounding) and the GPU. That
// is scripts/metal-check.sh's job, on a Mac.
func TestMSLOnHost(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: the host emulation of the Metal kernels needs GCC")
	}
	if v, err := exec.Command(gxx, "--version").Output(); err != nil || !bytes.Contains(v, []byte("Free Software Foundation")) {
		// -fsingle-precision-constant (MSL's float literals) is a GCC flag;
		// Apple's g++ is clang.
		t.Skip("g++ is not GCC: the host emulation of the Metal kernels needs GCC")
	}
	dir := t.TempDir()
	src, err := Source()
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"assembled.metal": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"metal_stdlib", "main.cpp"} {
		b, err := os.ReadFile(filepath.Join("testdata", "mslhost", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "mslhost")
	cmd := exec.Command(gxx, "-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math", "-fsingle-precision-constant",
		"-Wall", "-Wno-attributes", "-Wno-unknown-pragmas", "-Wno-unused-variable", "-Wno-unused-function",
		"-D__METAL_VERSION__=310", "-I", dir, "-o", bin, filepath.Join(dir, "main.cpp"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("g++ could not compile the assembled Metal source: %v\n%s", err, out)
	} else if len(out) > 0 {
		t.Logf("g++ warnings:\n%s", out)
	}

	cases := []struct {
		name   string
		n      int
		hma    string
		hma3   string
		src    engine.Source
		mode   engine.Mode
		wma    engine.Formulation
		cap    int // 0: kernels.SelectCap(n)
		splits int // dispatches the grid is cut into
	}{
		{"direct close long-short", 3000, "10:40:10", "12:60:12", engine.SourceClose, engine.LongShort, engine.Direct, 0, 1},
		{"direct hl2 long-only two dispatches", 2500, "8:50:7", "6:40:17", engine.SourceHL2, engine.LongOnly, engine.Direct, 0, 2},
		{"prefix ohlc4", 2000, "5:35:15", "20:50:30", engine.SourceOHLC4, engine.LongShort, engine.Prefix, 0, 1},
		{"refinement: tiny VaR buffer", 4000, "10:50:20", "12:36:24", engine.SourceClose, engine.LongShort, engine.Direct, 8, 3},
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(ci + 1)))
			bars := randomBars(rng, tc.n)
			hr, err := engine.ParseRange("hma", tc.hma)
			if err != nil {
				t.Fatal(err)
			}
			h3r, err := engine.ParseRange("hma3", tc.hma3)
			if err != nil {
				t.Fatal(err)
			}
			g := engine.Grid{HMA: hr, HMA3: h3r}
			p := engine.Params{Fee: engine.DefaultFee, Mode: tc.mode, Source: tc.src, BarsPerYear: 525600}
			hma, hma3 := hr.Values(), h3r.Values()
			n, nh, n3 := tc.n, len(hma), len(hma3)
			capacity := tc.cap
			if capacity == 0 {
				capacity = kernels.SelectCap(n)
			}
			bins := kernels.BinsFromCloses[float32](bars.Close)
			keep := float32(1) - float32(p.Fee)

			var in bytes.Buffer
			w := func(v any) {
				if err := binary.Write(&in, binary.LittleEndian, v); err != nil {
					t.Fatal(err)
				}
			}
			pre := int32(0)
			if tc.wma == engine.Prefix {
				pre = 1
			}
			w([]int32{int32(n), int32(nh), int32(n3), pre, int32(tc.splits)})
			w(reference.SourceSeries[float32](bars, tc.src))
			w(reference.SourceSeries[float32](bars, engine.SourceClose))
			w(reference.BarReturns[float32](bars))
			q, sH, p3, s3, wH, w3 := make([]int32, nh), make([]int32, nh), make([]int32, n3), make([]int32, n3), make([]int32, nh), make([]int32, n3)
			for j, L := range hma {
				q[j], sH[j], wH[j] = int32(engine.HMASqrtLen(L)), int32(min(L-1, n)), int32(engine.HMAWarmup(L))
			}
			for j, L := range hma3 {
				p3[j], s3[j], w3[j] = int32(L/2), int32(min(L/2-1, n)), int32(engine.HMA3Warmup(L))
			}
			w(toInt32s(hma))
			w(toInt32s(hma3))
			for _, v := range [][]int32{q, sH, p3, s3, wH, w3} {
				w(v)
			}
			w(bins.Edges)
			for _, ip := range []indParams{
				{N: int32(n), NS: int32(nh), Prefix: pre},
				{N: int32(n), NS: int32(n3), Prefix: pre},
				{N: int32(n), NS: 1},
				{N: int32(n), NS: int32(nh), Prefix: pre, SI: int32(nh), SJ: 1},
				{N: int32(n), NS: int32(n3), Prefix: pre, SI: int32(n3), SJ: 1},
			} {
				in.Write(ip.bytes())
			}
			total := g.Len()
			var launches [][2]int
			per := (total + tc.splits - 1) / tc.splits
			for a := 0; a < total; a += per {
				cnt := min(per, total-a)
				launches = append(launches, [2]int{a, cnt})
				lo := int32(0)
				if tc.mode == engine.LongOnly {
					lo = 1
				}
				in.Write(sweepParams{N: int32(n), NH: int32(nh), N3: int32(n3), Count: int32(cnt), ComboFirst: int64(a),
					Keep: keep, Keep2: keep * keep, LongOnly: lo, Kth: int32(kernels.KthIndex(n - 1)),
					K0: bins.K0, Shift: bins.Shift, Cap: int32(capacity)}.bytes())
			}
			if len(launches) != tc.splits {
				t.Fatalf("test setup: %d launches, want %d", len(launches), tc.splits)
			}
			inPath, outPath := filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")
			if err := os.WriteFile(inPath, in.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bin, inPath, outPath).CombinedOutput(); err != nil {
				t.Fatalf("host run: %v\n%s", err, out)
			}
			raw, err := os.ReadFile(outPath)
			if err != nil {
				t.Fatal(err)
			}
			rd := bytes.NewReader(raw)
			H, H3 := make([]float32, n*nh), make([]float32, n*n3)
			must(t, binary.Read(rd, binary.LittleEndian, H))
			must(t, binary.Read(rd, binary.LittleEndian, H3))

			ind, err := reference.BuildIndicators[float32](context.Background(), bars, g, tc.src, tc.wma)
			if err != nil {
				t.Fatal(err)
			}
			sameSeries := func(what string, got []float32, ns int, lens []int, want map[int][]float32) {
				t.Helper()
				for j, L := range lens {
					for i := 0; i < n; i++ {
						a, b := got[i*ns+j], want[L][i]
						if math.Float32bits(a) != math.Float32bits(b) && !(a != a && b != b) {
							t.Fatalf("%s(%d)[%d] = %v (%08x), engine float32 %v (%08x)", what, L, i, a, math.Float32bits(a), b, math.Float32bits(b))
						}
					}
				}
			}
			sameSeries("HMA", H, nh, hma, ind.H)
			sameSeries("HMA3", H3, n3, hma3, ind.H3)

			refined := 0
			var sc reference.Scratch[float32]
			for _, l := range launches {
				first, cnt := l[0], l[1]
				o := kernels.Outputs[float32]{F: make([]float32, cnt*kernels.NF), I: make([]int32, cnt*kernels.NI),
					Count: cnt, First: first, Kernel: fnSweep}
				must(t, binary.Read(rd, binary.LittleEndian, o.F))
				must(t, binary.Read(rd, binary.LittleEndian, o.I))
				got := make([]engine.Metrics, cnt)
				r, err := o.Finish(n, p, got, 1)
				if err != nil {
					t.Fatal(err)
				}
				refined += r
				for j := 0; j < cnt; j++ {
					c := g.At(first + j)
					start := max(engine.HMAWarmup(c.HMA), engine.HMA3Warmup(c.HMA3))
					want := reference.Backtest(ind.H[c.HMA], ind.H3[c.HMA3], ind.R, start, p, &sc)
					compareMetrics(t, c, got[j], want)
				}
			}
			if tc.cap > 0 && tc.cap < 64 && refined == 0 {
				t.Errorf("cap %d: no combo needed refinement; the case does not exercise it", tc.cap)
			}
		})
	}
}

// compareMetrics wants every metric bit for bit except CVaR, whose sum
// runs in another order than the reference's (to a few float32 ulps).
func compareMetrics(t *testing.T, c engine.Combo, got, want engine.Metrics) {
	t.Helper()
	cv := math.Abs(got.CVaR95 - want.CVaR95)
	if cv > 1e-5*math.Abs(want.CVaR95) {
		t.Errorf("combo %v: CVaR95 %v, engine %v", c, got.CVaR95, want.CVaR95)
	}
	got.CVaR95 = want.CVaR95
	same := func(a, b float64) bool { return a == b || (a != a && b != b) }
	if got.TotalTrades != want.TotalTrades || got.LongBars != want.LongBars || got.ShortBars != want.ShortBars ||
		got.FlatBars != want.FlatBars || !same(got.TotalReturn, want.TotalReturn) || !same(got.CAGR, want.CAGR) ||
		!same(got.Sharpe, want.Sharpe) || !same(got.Sortino, want.Sortino) || !same(got.MaxDrawdown, want.MaxDrawdown) ||
		!same(got.Calmar, want.Calmar) || !same(got.WinRate, want.WinRate) || !same(got.Omega, want.Omega) ||
		!same(got.VaR95, want.VaR95) {
		t.Errorf("combo %v:\n metal host %+v\n engine     %+v", c, got, want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func toInt32s(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

// randomBars is a geometric random walk around 30 with OHLC around each
// close and a few flat stretches (ties between h and h3, zero returns).
func randomBars(rng *rand.Rand, n int) *engine.Bars {
	b := &engine.Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	px := 30.0
	for i := 0; i < n; i++ {
		if i%500 >= 40 { // bars 0..39 of every 500 are flat
			px *= 1 + 0.002*rng.NormFloat64()
		}
		b.Time[i] = int64(i) * 60
		b.Close[i] = px
		b.Open[i] = px * (1 + 0.0005*rng.NormFloat64())
		b.High[i] = max(px, b.Open[i]) * (1 + 0.001*rng.Float64())
		b.Low[i] = min(px, b.Open[i]) * (1 - 0.001*rng.Float64())
		b.Volume[i] = 1
	}
	return b
}
