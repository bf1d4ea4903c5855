package metal

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/data/datatest"
	"sweepbench/engine/robust"
	"sweepbench/reference"
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
// (bar-major, H[i*nh+j]) and each launch's raw outputs, with job.Blocks
// block_stats_f32's too.
type hostRun struct {
	H, H3  []float32
	out    []kernels.Outputs[float32]
	blocks []blockOutputs
}

// runHost runs job's indicator pipeline and the given launches (capacity
// values of VaR buffer per combo; 0: kernels.SelectCap) in the host binary,
// and block_stats_f32 after each launch when job.Blocks is set.
func runHost(bin string, job *engine.Job, launches []launch, capacity int) (*hostRun, error) {
	bars, g, p := job.Bars, job.Grid, job.Params
	hma, hma3 := g.HMA.Values(), g.HMA3.Values()
	n, nh, n3 := bars.Len(), len(hma), len(hma3)
	if capacity == 0 {
		capacity = kernels.SelectCap(n)
	}
	bins := kernels.BinsFromCloses[float32](bars.Close)
	keep := engine.Keep[float32](p)
	var in bytes.Buffer
	w := func(v any) { _ = binary.Write(&in, binary.LittleEndian, v) } // a bytes.Buffer never fails
	pre, longOnly := int32(0), int32(0)
	if job.WMA == engine.Prefix {
		pre = 1
	}
	if p.Mode == engine.LongOnly {
		longOnly = 1
	}
	S := max(len(job.Blocks)-1, 0)
	w([]int32{int32(n), int32(nh), int32(n3), pre, int32(len(launches)), int32(S)})
	w(kernels.SourceSeries[float32](bars, p.Source))
	w(kernels.SourceSeries[float32](bars, engine.SourceClose))
	w(kernels.BarReturns[float32](bars))
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
	sp := make([]sweepParams, len(launches))
	for i, l := range launches {
		sp[i] = sweepParams{N: int32(n), NH: int32(nh), N3: int32(n3), Count: int32(l.count), ComboFirst: int64(l.first),
			Keep: keep, Keep2: keep * keep, LongOnly: longOnly, Kth: int32(kernels.KthIndex(n - 1)),
			K0: bins.K0, Shift: bins.Shift, Cap: int32(capacity), RF: float32(p.RiskFreePerBar())}
		in.Write(sp[i].bytes())
	}
	if S > 0 {
		w(toInt32(job.Blocks))
		for _, p := range sp {
			in.Write(blockParamsFor(p, S).bytes())
		}
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
		if S == 0 {
			continue
		}
		per := l.count * S
		bo := blockOutputs{sum: make([]float64, per), sq: make([]float64, per), down: make([]float64, per), mant: make([]float64, per),
			ex: make([]int32, per), trades: make([]int32, per), wins: make([]int32, per), s3: make([]float64, l.count), s4: make([]float64, l.count)}
		for _, v := range []any{bo.sum, bo.sq, bo.down, bo.mant, bo.ex, bo.trades, bo.wins, bo.s3, bo.s4} {
			read(v)
		}
		r.blocks = append(r.blocks, bo)
	}
	if err == nil && rd.Len() != 0 {
		err = fmt.Errorf("host run: %d bytes of output left unread", rd.Len())
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
// small that the refinement passes run; block_stats_f32's statistics,
// finished as the backend finishes them (blockOutputs.finish), must equal
// reference.BacktestBlocks' in float32 bit for bit: counts, sums, cubes,
// fourth powers and log growth, over blocks longer than the 64 returns
// between renormalisations and blocks wholly in a combo's warm-up.
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
		blocks int // 0: no block_stats_f32
	}{
		{"direct close long-short", 3000, "10:40:10", "12:60:12", engine.SourceClose, engine.LongShort, engine.Direct, 0, 1, 5},
		{"direct hl2 long-only two dispatches", 2500, "8:50:7", "6:40:17", engine.SourceHL2, engine.LongOnly, engine.Direct, 0, 2, 7},
		{"prefix ohlc4, blocks of 31 returns", 2000, "5:35:15", "20:50:30", engine.SourceOHLC4, engine.LongShort, engine.Prefix, 0, 1, 64},
		{"refinement: tiny VaR buffer", 4000, "10:50:20", "12:36:24", engine.SourceClose, engine.LongShort, engine.Direct, 8, 3, 16},
		{"no blocks", 1500, "10:30:10", "12:36:12", engine.SourceClose, engine.LongShort, engine.Direct, 0, 1, 0},
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
			if tc.blocks > 0 {
				var err error
				if job.Blocks, err = engine.BlockBounds(bars.Len(), tc.blocks); err != nil {
					t.Fatal(err)
				}
			}
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
			if len(run.blocks) != min(tc.blocks, 1)*len(launches) {
				t.Fatalf("%d launches of block_stats_f32 for %d blocks and %d launches", len(run.blocks), tc.blocks, len(launches))
			}
			if tc.blocks == 0 {
				return
			}
			gotB := engine.NewBlockStats(total, job.Blocks)
			for i, bo := range run.blocks {
				if err := bo.finish(gotB, launches[i].first, launches[i].first); err != nil {
					t.Fatal(err)
				}
			}
			wantB := engine.NewBlockStats(total, job.Blocks)
			if _, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{Blocks: wantB}); err != nil {
				t.Fatal(err)
			}
			conformance.SameBlocks(t, "metal host", gotB, wantB, 0)
			if warm := job.Blocks[1] <= engine.ComboWarmup(g.At(total-1)); tc.blocks == 64 && !warm {
				t.Errorf("64 blocks: no block lies wholly in a warm-up; the case does not exercise it")
			}
		})
	}
}

// hostTolerance is the Metal kernels' (and the host run's) distance from the
// reference's float32: every metric bit for bit but cvar_95, whose sum runs
// in another order (to a few float32 ulps).
var hostTolerance = conformance.Tolerance{CVaR: 1e-5}

// hostBackend is the Metal backend with its kernels run on the host: an
// engine.Backend (fp32 only, as Metal) and an engine.IndicatorDevice, whose
// kernels emit per-block statistics (engine.BlockKernel) as the darwin
// build's do, so the conformance suite checks the kernels without a Mac.
// Each Compute is one dispatch of the host binary from its first combo.
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
	ind := &engine.Indicators[float32]{H: map[int][]float32{}, H3: map[int][]float32{}, R: kernels.BarReturns[float32](job.Bars), Form: job.WMA}
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

var _ engine.BlockKernel = (*hostKernel)(nil)

func (k *hostKernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	return k.ComputeBlocks(ctx, lane, first, out, nil)
}

// ComputeBlocks runs sweep_f32 and, when bs is not nil, block_stats_f32,
// whose outputs are finished as the darwin build finishes them.
func (k *hostKernel) ComputeBlocks(ctx context.Context, _, first int, out []engine.Metrics, bs *engine.BlockStats) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	job := k.job
	if bs == nil && job.Blocks != nil {
		j := *job
		j.Blocks = nil
		job = &j
	}
	run, err := runHost(k.bin, job, []launch{{first, len(out)}}, 0)
	if err != nil {
		return err
	}
	if _, err := run.out[0].Finish(k.job.Bars.Len(), k.job.Params, out, 1); err != nil {
		return err
	}
	if bs == nil {
		return nil
	}
	return run.blocks[0].finish(bs, 0, first)
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

// TestStudyBlocksOnHost: a study with blocks on the Metal kernels takes its
// statistics from its reference lane (engine.RunStudy): with fp64 the
// fallback's (the CPU reference, Metal having no fp64), fp32-only the
// Metal kernels' fp32 lane, whose statistics, and so the robustness
// section (PBO, DSR, plateau, walk-forward), are the CPU reference's fp32
// study's, bit for bit.
func TestStudyBlocksOnHost(t *testing.T) {
	b := hostBackend{buildHost(t)}
	rng := datatest.Rand(t)
	bars := datatest.Flatten(datatest.RandomWalk(rng, 4000, 30, 0.002), 500, 40)
	ds := &data.Dataset{Bars: *bars, Info: data.Info{Name: "host", Bars: bars.Len(), MedianSpacing: datatest.Spacing}}
	g := engine.Grid{HMA: mustRange(t, "--hma", "10:50:10"), HMA3: mustRange(t, "--hma3", "12:20:1")} // HMA3 twins
	study := func(be engine.Backend, precs ...engine.Precision) *engine.Report {
		t.Helper()
		s := &engine.Study{Dataset: ds, Grid: g, Params: engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600},
			Precisions: precs, WMA: engine.Direct, Backend: be, Fallback: reference.New(), Blocks: 8}
		rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	both := study(b, engine.FP64, engine.FP32)
	if both.BlocksOf != engine.FP64 || both.Run(engine.FP64).Backend != "reference" || both.Run(engine.FP32).Backend != b.Name() {
		t.Errorf("fp64 and fp32: blocks of %s, lanes on %s and %s; want fp64 on the fallback, fp32 on %s",
			both.BlocksOf, both.Run(engine.FP64).Backend, both.Run(engine.FP32).Backend, b.Name())
	}
	got, want := study(b, engine.FP32), study(reference.New(), engine.FP32)
	if got.BlocksOf != engine.FP32 || got.Blocks == nil || got.Run(engine.FP32).Backend != b.Name() {
		t.Fatalf("fp32 only: blocks of %s (nil: %v) from %s; want the fp32 lane's, on %s", got.BlocksOf, got.Blocks == nil, got.Run(engine.FP32).Backend, b.Name())
	}
	conformance.SameBlocks(t, "fp32 study", got.Blocks, want.Blocks, 0)
	opt := robust.Options{WF: &robust.WFSpec{Mode: robust.Rolling, InSample: 4}}
	rg, err := robust.Analyse(context.Background(), got, opt)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := robust.Analyse(context.Background(), want, opt)
	if err != nil {
		t.Fatal(err)
	}
	if sm := rg.Summary(); sm.PBO == nil || sm.DSR == nil || sm.WF == nil || len(sm.WF.Folds) != 4 {
		t.Errorf("robustness without PBO, DSR or 4 walk-forward folds: the case proves little: %+v", sm)
	}
	if !reflect.DeepEqual(rg.Summary(), rw.Summary()) {
		t.Errorf("robustness on the Metal kernels:\n%+v\nwant the reference's:\n%+v", rg.Summary(), rw.Summary())
	}
}
