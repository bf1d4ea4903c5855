package metal

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/conformance"
	"sweepbench/reference/kernels"
)

// The Metal kernels on the host: Source() compiled as C++ by GCC against a
// stand-in for the Metal standard library (testdata/mslhost/metal_stdlib)
// and run on the CPU, thread after thread, by testdata/mslhost/main.cpp,
// with the parameter blocks packed by indParams.bytes and sweepParams.bytes.
// It checks, without a Mac, that the prelude makes sweep_common.h and the
// .metal files one valid translation unit, that the packed parameters are
// what the kernels read, and what the kernels compute: TestMSLOnHost case by
// case, and TestConformanceOnHost through the backend conformance suite.
//
// What it cannot check: Apple's compiler (its dialect, its treatment of
// double literals, FMA contraction, division rounding) and the GPU. That
// is scripts/metal-check.sh's job, on a Mac.

// buildHost compiles the assembled kernels and the host driver into a
// temporary folder and returns the binary; it skips the test without GCC.
func buildHost(t *testing.T) string {
	t.Helper()
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
	if err := os.WriteFile(filepath.Join(dir, "assembled.metal"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
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
	return bin
}

// launch is one dispatch of sweep_f32: count combos from first.
type launch struct{ first, count int }

// hostRun is what one run of the host binary returns: the indicator series
// (bar-major, H[i*nh+j]) and each launch's raw outputs.
type hostRun struct {
	H, H3 []float32
	out   []kernels.Outputs[float32]
}

// runHost runs job's indicator pipeline and the given launches (capacity
// values of VaR buffer per combo; 0: kernels.SelectCap) in the host binary.
func runHost(bin string, job *engine.Job, launches []launch, capacity int) (*hostRun, error) {
	bars, g, p := job.Bars, job.Grid, job.Params
	hma, hma3 := g.HMA.Values(), g.HMA3.Values()
	n, nh, n3 := bars.Len(), len(hma), len(hma3)
	if capacity == 0 {
		capacity = kernels.SelectCap(n)
	}
	bins := kernels.BinsFromCloses[float32](bars.Close)
	keep := float32(1) - float32(p.Fee)
	var in bytes.Buffer
	w := func(v any) { _ = binary.Write(&in, binary.LittleEndian, v) } // a bytes.Buffer never fails
	pre, longOnly := int32(0), int32(0)
	if job.WMA == engine.Prefix {
		pre = 1
	}
	if p.Mode == engine.LongOnly {
		longOnly = 1
	}
	w([]int32{int32(n), int32(nh), int32(n3), pre, int32(len(launches))})
	w(reference.SourceSeries[float32](bars, p.Source))
	w(reference.SourceSeries[float32](bars, engine.SourceClose))
	w(reference.BarReturns[float32](bars))
	q, sH, p3, s3 := make([]int32, nh), make([]int32, nh), make([]int32, n3), make([]int32, n3)
	for j, L := range hma {
		q[j], sH[j] = int32(engine.HMASqrtLen(L)), int32(min(L-1, n))
	}
	for j, L := range hma3 {
		p3[j], s3[j] = int32(L/2), int32(min(L/2-1, n))
	}
	warmH, warm3 := kernels.Warmups(hma, hma3)
	for _, v := range [][]int32{toInt32(hma), toInt32(hma3), q, sH, p3, s3, warmH, warm3} {
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
	for _, l := range launches {
		in.Write(sweepParams{N: int32(n), NH: int32(nh), N3: int32(n3), Count: int32(l.count), ComboFirst: int64(l.first),
			Keep: keep, Keep2: keep * keep, LongOnly: longOnly, Kth: int32(kernels.KthIndex(n - 1)),
			K0: bins.K0, Shift: bins.Shift, Cap: int32(capacity)}.bytes())
	}
	dir, err := os.MkdirTemp(filepath.Dir(bin), "run")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	inPath, outPath := filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")
	if err := os.WriteFile(inPath, in.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.Command(bin, inPath, outPath).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("host run: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(outPath)
	if err != nil {
		return nil, err
	}
	rd := bytes.NewReader(raw)
	r := &hostRun{H: make([]float32, n*nh), H3: make([]float32, n*n3)}
	read := func(v any) {
		if err == nil {
			err = binary.Read(rd, binary.LittleEndian, v)
		}
	}
	read(r.H)
	read(r.H3)
	for _, l := range launches {
		o := kernels.Outputs[float32]{F: make([]float32, l.count*kernels.NF), I: make([]int32, l.count*kernels.NI),
			Count: l.count, First: l.first, Kernel: fnSweep}
		read(o.F)
		read(o.I)
		r.out = append(r.out, o)
	}
	return r, err
}

// column is series j of ns in bar-major H.
func column(H []float32, ns, j int) []float32 {
	out := make([]float32, len(H)/ns)
	for i := range out {
		out[i] = H[i*ns+j]
	}
	return out
}

// TestMSLOnHost runs the host kernels case by case: the indicator series
// must be the reference's float32 HMA and HMA3 bit for bit (direct and
// prefix), and the sweep's raw outputs, finished by kernels.Outputs, must
// equal reference.Backtest in float32 (CVaR to rounding: its sum runs in
// the buffer's order), over several dispatches and with a VaR buffer so
// small that the refinement passes run.
func TestMSLOnHost(t *testing.T) {
	bin := buildHost(t)
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
	rng := datatest.Rand(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A random walk around 30 with flat stretches: ties between h
			// and h3, zero returns.
			bars := datatest.Flatten(datatest.RandomWalk(rng, tc.n, 30, 0.002), 500, 40)
			g := engine.Grid{HMA: mustRange(t, "--hma", tc.hma), HMA3: mustRange(t, "--hma3", tc.hma3)}
			job := &engine.Job{Bars: bars, Grid: g, Precision: engine.FP32, WMA: tc.wma,
				Params: engine.Params{Fee: engine.DefaultFee, Mode: tc.mode, Source: tc.src, BarsPerYear: 525600}}
			total := g.Len()
			var launches []launch
			per := (total + tc.splits - 1) / tc.splits
			for a := 0; a < total; a += per {
				launches = append(launches, launch{a, min(per, total-a)})
			}
			if len(launches) != tc.splits {
				t.Fatalf("test setup: %d launches, want %d", len(launches), tc.splits)
			}
			run, err := runHost(bin, job, launches, tc.cap)
			if err != nil {
				t.Fatal(err)
			}
			h, h3, _ := conformance.Series[float32](t, job)
			for j, L := range g.HMA.Values() {
				if i, ok := conformance.SameSeries(column(run.H, g.HMA.Len(), j), h[L]); !ok {
					t.Fatalf("HMA(%d) bar %d differs from the reference's float32", L, i)
				}
			}
			for j, L := range g.HMA3.Values() {
				if i, ok := conformance.SameSeries(column(run.H3, g.HMA3.Len(), j), h3[L]); !ok {
					t.Fatalf("HMA3(%d) bar %d differs from the reference's float32", L, i)
				}
			}
			got := make([]engine.Metrics, total)
			refined := 0
			for _, o := range run.out {
				r, err := o.Finish(bars.Len(), job.Params, got[o.First:o.First+o.Count], 1)
				if err != nil {
					t.Fatal(err)
				}
				refined += r
			}
			conformance.CompareMetrics(t, "metal host", got, conformance.Reference(t, job), g, hostTolerance)
			if tc.cap > 0 && tc.cap < 64 && refined == 0 {
				t.Errorf("cap %d: no combo needed refinement; the case does not exercise it", tc.cap)
			}
		})
	}
}

// hostTolerance is the Metal kernels' (and the host run's) distance from the
// reference's float32: every metric bit for bit but cvar_95, whose sum runs
// in another order (to a few float32 ulps).
var hostTolerance = conformance.Tolerance{CVaR: 1e-5}

// hostBackend is the Metal backend with its kernels run on the host: an
// engine.Backend (fp32 only, as Metal) and an engine.IndicatorDevice, so the
// conformance suite checks the kernels without a Mac. Each Compute is one
// dispatch of the host binary from its first combo.
type hostBackend struct{ bin string }

var (
	_ engine.Backend          = hostBackend{}
	_ engine.PrecisionSupport = hostBackend{}
	_ engine.IndicatorDevice  = hostBackend{}
)

func (hostBackend) Name() string     { return "metal-host" }
func (hostBackend) Available() error { return nil }
func (hostBackend) Devices() ([]engine.Device, error) {
	return []engine.Device{{Name: "Metal kernels on the host"}}, nil
}
func (hostBackend) Supports(p engine.Precision) error { return New().Supports(p) }
func (b hostBackend) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	if err := checkJob(job); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &hostKernel{bin: b.bin, job: job}, nil
}

// Indicators32 returns the host kernels' series of job's grid.
func (b hostBackend) Indicators32(ctx context.Context, job *engine.Job) (*engine.Indicators[float32], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	run, err := runHost(b.bin, job, nil, 0)
	if err != nil {
		return nil, err
	}
	ind := &engine.Indicators[float32]{H: map[int][]float32{}, H3: map[int][]float32{}, R: reference.BarReturns[float32](job.Bars), Form: job.WMA}
	for j, L := range job.Grid.HMA.Values() {
		ind.H[L] = column(run.H, job.Grid.HMA.Len(), j)
	}
	for j, L := range job.Grid.HMA3.Values() {
		ind.H3[L] = column(run.H3, job.Grid.HMA3.Len(), j)
	}
	return ind, nil
}

type hostKernel struct {
	bin string
	job *engine.Job
}

func (k *hostKernel) Lanes() int     { return 1 }
func (k *hostKernel) ChunkSize() int { return chunkSize(k.job.Grid.Len()) }
func (k *hostKernel) Device() string { return "Metal kernels on the host" }
func (k *hostKernel) Close() error   { return nil }

func (k *hostKernel) Compute(ctx context.Context, _, first int, out []engine.Metrics) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	run, err := runHost(k.bin, k.job, []launch{{first, len(out)}}, 0)
	if err != nil {
		return err
	}
	_, err = run.out[0].Finish(k.job.Bars.Len(), k.job.Params, out, 1)
	return err
}

// TestConformanceOnHost runs the backend conformance suite on the Metal
// kernels, on the host.
func TestConformanceOnHost(t *testing.T) {
	conformance.TestBackend(t, hostBackend{buildHost(t)}, conformance.Options{FP32: hostTolerance})
}

func mustRange(t testing.TB, name, s string) engine.Range {
	t.Helper()
	r, err := engine.ParseRange(name, s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
