package cuda

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// The GPU tests need the CUDA driver and a GPU; elsewhere they skip. On the
// device machine: scripts/cuda-device.sh runs them with -test.run GPU.

var (
	sharedOnce    sync.Once
	sharedBackend *Backend
)

func gpuBackend(t testing.TB) *Backend {
	t.Helper()
	sharedOnce.Do(func() { sharedBackend = New() })
	if err := sharedBackend.Available(); err != nil {
		if strings.Contains(err.Error(), "CUDA driver not found") || strings.Contains(err.Error(), "no CUDA device") {
			t.Skipf("no CUDA driver: skipping GPU test (%v)", err)
		}
		t.Fatalf("CUDA backend not available: %v", err)
	}
	return sharedBackend
}

// poisoned reports whether v still holds the 0xFF fill (never written).
func poisoned[F engine.Float](v F) bool {
	if unsafe.Sizeof(v) == 4 {
		return math.Float32bits(float32(v)) == 0xFFFFFFFF
	}
	return math.Float64bits(float64(v)) == math.MaxUint64
}

func precName[F engine.Float]() string {
	var z F
	return fmt.Sprintf("fp%d", 8*unsafe.Sizeof(z))
}

// TestGPUConformance runs the backend conformance suite on the GPUs (it
// skips, saying so, where there is no CUDA driver or GPU). Its grids are
// small, so the bar-parallel kernel runs: fp64 within 1e-9 of the
// reference, fp32 within fp32Tol(true) (sums combined segment by segment);
// trade counts and the fp32 indicator series exact.
func TestGPUConformance(t *testing.T) {
	conformance.TestBackend(t, gpuBackend(t), conformance.Options{
		FP64: conformance.Tolerance{Rel: 1e-9, CVaR: 1e-9},
		FP32: conformance.Tolerance{Rel: fp32Tol(true), CVaR: 1e-3, Equity: true},
	})
}

func TestGPUDevices(t *testing.T) {
	b := gpuBackend(t)
	devs, err := b.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range devs {
		t.Logf("GPU %d: %s, %d MiB, compute capability %s, driver %s", i, d.Name, d.Memory>>20, d.ComputeCapability, d.Driver)
		if d.Name == "" || d.Memory <= 0 || d.ComputeCapability == "" {
			t.Errorf("GPU %d: incomplete description %+v", i, d)
		}
	}
	d := b.devs[0]
	d.do(func() error {
		for _, names := range kernelNames {
			for _, k := range names {
				regs, local, shared := d.funcInfo(k)
				t.Logf("kernel %-16s %3d registers, %4d B local (spills), %6d B static shared", k, regs, local, shared)
			}
		}
		for m, src := range d.modSrc {
			t.Logf("module %s from %s", m, src)
		}
		return nil
	})
}

// TestGPUWMA: the batched WMA kernel against reference.WMA and reference.WMAPrefix,
// bit for bit, in both precisions, on a fresh random walk.
func TestGPUWMA(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	bars := datatest.TickWalk(rng, 20_000, 30_000, 0.1)
	lens := []int{1, 2, 3, 5, 17, 64, 200, 333}
	gpuWMA[float64](t, b.devs[0], bars, lens)
	gpuWMA[float32](t, b.devs[0], bars, lens)
}

func gpuWMA[F engine.Float](t *testing.T, d *device, bars *engine.Bars, lens []int) {
	x := kernels.SourceSeries[F](bars, engine.SourceClose)
	n := len(x)
	for _, prefix := range []bool{false, true} {
		var got []F
		err := d.do(func() error {
			var err error
			got, err = wmaBatch(d, x, lens, prefix)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]F, n)
		for j, p := range lens {
			if prefix {
				reference.WMAPrefix(x, p, 0, want, nil)
			} else {
				reference.WMA(x, p, 0, want)
			}
			g := got[j*n : (j+1)*n]
			for i, v := range g {
				if poisoned(v) {
					t.Fatalf("%s prefix=%v p=%d: bar %d never written", precName[F](), prefix, p, i)
				}
			}
			if i, ok := conformance.SameSeries(g, want); !ok {
				t.Errorf("%s prefix=%v WMA p=%d: bar %d = %v, engine %v", precName[F](), prefix, p, i, g[i], want[i])
			}
		}
	}
}

// deviceSeries downloads a prepared kernel's indicator series, bar-major
// whatever the device layout.
func deviceSeries[F engine.Float](t *testing.T, l *lane) (h, h3 []F) {
	n, nh, n3 := l.ind.n, len(l.ind.hma), len(l.ind.hma3)
	h = make([]F, n*nh)
	h3 = make([]F, n*n3)
	if err := l.d.do(func() error {
		if err := download(h, l.ind.H); err != nil {
			return err
		}
		return download(h3, l.ind.H3)
	}); err != nil {
		t.Fatal(err)
	}
	if l.ind.seriesMajor {
		tr := func(a []F, ns int) []F {
			out := make([]F, len(a))
			for j := 0; j < ns; j++ {
				for i := 0; i < n; i++ {
					out[i*ns+j] = a[j*n+i]
				}
			}
			return out
		}
		h, h3 = tr(h, nh), tr(h3, n3)
	}
	return h, h3
}

// forced is the backend with its sweep kernel forced for every grid:
// engine.Sweep prepares through it. The variants the production code never
// picks (two combos per thread, kept in sweep.cu for measurement) are
// reached only this way.
type forced struct {
	*Backend
	sk sweepKernel
}

func (f forced) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	return f.Backend.prepare(ctx, job, f.sk)
}

// fp32Tol is the relative tolerance of fp32 GPU metrics against
// reference.Backtest[float32]. The thread-per-combo kernel sums in the
// reference's order, so only cvar_95 may differ; the bar-parallel kernel
// sums segment by segment, and over 150,000 bars fp32 rounding alone moves
// a sum by ~1e-4 relative (seen: sharpe 1.4e-4 on FIL). Positions, trades,
// wins, bar counts and VaR are exact either way (conformance.CompareMetrics checks
// trade counts separately; they must be identical).
func fp32Tol(seg bool) float64 {
	if seg {
		return 1e-3
	}
	return 1e-6
}

// checkIndicators compares the device series with reference.BuildIndicators
// bit for bit and checks that every element was written.
func checkIndicators[F engine.Float](t *testing.T, l *lane, bars *engine.Bars, grid engine.Grid, src engine.Source, form engine.Formulation) {
	t.Helper()
	h, h3 := deviceSeries[F](t, l)
	ref, err := reference.BuildIndicators[F](t.Context(), bars, grid, src, form)
	if err != nil {
		t.Fatal(err)
	}
	n := bars.Len()
	check := func(kind string, dev []F, lens []int, want map[int][]F) {
		ns := len(lens)
		col := make([]F, n)
		bad := 0
		for j, L := range lens {
			for i := 0; i < n; i++ {
				col[i] = dev[i*ns+j]
				if poisoned(col[i]) {
					t.Fatalf("%s %s(%d) bar %d never written", precName[F](), kind, L, i)
				}
			}
			if i, ok := conformance.SameSeries(col, want[L]); !ok {
				bad++
				if bad <= 5 {
					t.Errorf("%s %s %s(%d): bar %d = %v, engine %v", precName[F](), form, kind, L, i, col[i], want[L][i])
				}
			}
		}
		t.Logf("%s %s %s: %d lengths x %d bars, %d differ from engine bit for bit", precName[F](), form, kind, ns, n, bad)
	}
	check("HMA", h, grid.HMA.Values(), ref.H)
	check("HMA3", h3, grid.HMA3.Values(), ref.H3)
}

// prepared prepares job on the first GPU only: the tests that call it run
// the whole grid on lane 0, which on several GPUs would hold only its own
// share of the HMA series (laneHMA); sweepRun covers the sharded path.
func prepared[F engine.Float](t *testing.T, b *Backend, job *engine.Job, sk sweepKernel) *kernel[F] {
	t.Helper()
	k, err := b.WithDevices(1).(*Backend).prepare(t.Context(), job, sk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return k.(*kernel[F])
}

// TestGPUIndicators: h and h3 for every length, in fp64 and fp32, direct
// and prefix, bit for bit against engine on a fresh random walk (price
// ~30,000, where fp32 prefix sums are garbage: the same garbage).
func TestGPUIndicators(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	bars := datatest.TickWalk(rng, 30_000, 30_000, 0.1)
	grid := engine.Grid{HMA: mustRange(t, "--hma", "2:101:9"), HMA3: mustRange(t, "--hma3", "6:150:11")}
	p := defaultParams()
	p.Source = engine.SourceHL2
	for _, form := range []engine.Formulation{engine.Direct, engine.Prefix} {
		job := &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP32, WMA: form}
		k32 := prepared[float32](t, b, job, kernelFor(grid.Len()))
		checkIndicators[float32](t, k32.lanes[0], bars, grid, p.Source, form)
		// fp64 through buildIndicators directly, so that one formulation
		// also runs in the series-major layout of the bar-parallel kernel.
		d := b.devs[0]
		var di *deviceIndicators
		x := kernels.SourceSeries[float64](bars, p.Source)
		cl := kernels.SourceSeries[float64](bars, engine.SourceClose)
		r := kernels.BarReturns[float64](bars)
		if err := d.do(func() error {
			var err error
			// Prefix also exercises the series-major layout.
			di, err = buildIndicators(d, x, cl, r, grid.HMA.Values(), grid.HMA3.Values(), form == engine.Prefix, form == engine.Prefix)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		l := &lane{d: d, ind: di}
		checkIndicators[float64](t, l, bars, grid, p.Source, form)
		d.do(func() error { di.free(d); return nil })
	}
}

func sweepRun(t *testing.T, b engine.Backend, job *engine.Job) []engine.Metrics {
	t.Helper()
	run, err := engine.Sweep(t.Context(), b, job, engine.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]engine.Metrics, len(run.Results))
	for i, r := range run.Results {
		if r.Index != i {
			t.Fatalf("result %d has index %d", i, r.Index)
		}
		out[i] = r.Metrics
	}
	return out
}

// TestGPUSweepFIL is the acceptance test: FIL/USDT one-minute bars trimmed
// to 150,000, grid 20:200:20 x 30:240:30. fp64: indicators bit for bit,
// trade counts identical on every combo, every metric within 1e-9
// relative of the fp64 reference. fp32: indicators bit for bit with
// the reference's float32 path, and the sweep against reference.Backtest[float32].
func TestGPUSweepFIL(t *testing.T) {
	b := gpuBackend(t)
	bars := datatest.FIL(t, 150_000)
	grid := engine.Grid{HMA: mustRange(t, "--hma", "20:200:20"), HMA3: mustRange(t, "--hma3", "30:240:30")}
	p := defaultParams()
	want := conformance.Reference(t, &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP64, WMA: engine.Direct})
	want32 := conformance.Reference(t, &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP32, WMA: engine.Direct})
	for _, sk := range []sweepKernel{barParallel, threadPerCombo} {
		job := &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP64}
		k := prepared[float64](t, b, job, sk)
		checkIndicators[float64](t, k.lanes[0], bars, grid, p.Source, engine.Direct)
		got := sweepRun(t, forced{b, sk}, job)
		conformance.CompareMetrics(t, "FIL fp64 GPU "+sk.String()+" vs the reference", got, want, grid, conformance.Tolerance{Rel: 1e-9, CVaR: 1e-9})
		job32 := &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP32}
		k32 := prepared[float32](t, b, job32, sk)
		checkIndicators[float32](t, k32.lanes[0], bars, grid, p.Source, engine.Direct)
		got32 := sweepRun(t, forced{b, sk}, job32)
		conformance.CompareMetrics(t, "FIL fp32 GPU "+sk.String()+" vs the reference", got32, want32, grid, conformance.Tolerance{Rel: fp32Tol(sk.seg), CVaR: 1e-3, Equity: sk.seg})
	}
}

// TestGPUSweepRandom: fresh random walks with ties, long-short and
// long-only, fp64 and fp32, against reference.Backtest.
func TestGPUSweepRandom(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
		bars := datatest.TickWalk(rng, 20_000, 4, 0.001)
		grid := engine.Grid{HMA: mustRange(t, "--hma", "4:60:7"), HMA3: mustRange(t, "--hma3", "6:90:12")}
		p := defaultParams()
		p.Mode = mode
		want := conformance.Reference(t, &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP64, WMA: engine.Direct})
		want32 := conformance.Reference(t, &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP32, WMA: engine.Direct})
		for _, sk := range []sweepKernel{barParallel, threadPerCombo} {
			got := sweepRun(t, forced{b, sk}, &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP64})
			conformance.CompareMetrics(t, "random "+mode.String()+" fp64 "+sk.String(), got, want, grid, conformance.Tolerance{Rel: 1e-9, CVaR: 1e-9})
			got32 := sweepRun(t, forced{b, sk}, &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP32})
			conformance.CompareMetrics(t, "random "+mode.String()+" fp32 "+sk.String(), got32, want32, grid, conformance.Tolerance{Rel: fp32Tol(sk.seg), CVaR: 1e-3, Equity: sk.seg})
		}
	}
}

// TestGPUSmall is a small grid with a 4-value selection buffer, so nearly
// every combo takes the VaR refinement passes; scripts/cuda-device.sh also
// runs it under compute-sanitizer (memcheck, racecheck).
func TestGPUSmall(t *testing.T) {
	b := gpuBackend(t)
	rng := datatest.Rand(t)
	bars := datatest.TickWalk(rng, 3000, 30_000, 0.1)
	grid := engine.Grid{HMA: mustRange(t, "--hma", "4:40:6"), HMA3: mustRange(t, "--hma3", "6:60:9")}
	p := defaultParams()
	want64 := conformance.Reference(t, &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP64, WMA: engine.Direct})
	want32 := conformance.Reference(t, &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: engine.FP32, WMA: engine.Direct})
	for _, sk := range []sweepKernel{barParallel, threadPerCombo} {
		for _, prec := range []engine.Precision{engine.FP64, engine.FP32} {
			job := &engine.Job{Bars: bars, Grid: grid, Params: p, Precision: prec}
			out := make([]engine.Metrics, grid.Len())
			var refined int
			want, tol := want64, 1e-9
			if prec == engine.FP64 {
				k := prepared[float64](t, b, job, sk)
				k.cap = 4
				if err := k.Compute(t.Context(), 0, 0, out); err != nil {
					t.Fatal(err)
				}
				_, _, _, refined = k.stats()
			} else {
				want, tol = want32, fp32Tol(sk.seg)
				k := prepared[float32](t, b, job, sk)
				k.cap = 4
				if err := k.Compute(t.Context(), 0, 0, out); err != nil {
					t.Fatal(err)
				}
				_, _, _, refined = k.stats()
			}
			label := fmt.Sprintf("small %s cap 4, %s", prec, sk)
			conformance.CompareMetrics(t, label, out, want, grid, conformance.Tolerance{Rel: tol, CVaR: 1e-3})
			t.Logf("%s: %d of %d combos refined", label, refined, len(out))
			if refined == 0 {
				t.Error("no combo took the refinement path")
			}
		}
	}
}

// recorder keeps the kernel Sweep prepares, for its device-time counters,
// and can force the sweep kernel (nil: kernelFor).
type recorder struct {
	*Backend
	k  engine.Kernel
	sk *sweepKernel
}

func (r *recorder) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	sk := kernelFor(job.Grid.Len())
	if r.sk != nil {
		sk = *r.sk
	}
	k, err := r.Backend.prepare(ctx, job, sk)
	r.k = k
	return k, err
}

// TestGPUTiming times engine.Sweep end to end (bars in host memory to
// every combo's metrics in host memory: upload, indicators, sweep,
// download, finishing) after a warm-up, median of 3, and the kernels'
// device time from CUDA events. It writes the table to $SWEEPBENCH_OUT.
func TestGPUTiming(t *testing.T) {
	b := gpuBackend(t)
	if testing.Short() {
		t.Skip("timing skipped in -short")
	}
	bars := datatest.FIL(t, 150_000)
	devs, _ := b.Devices()
	cases := []struct {
		hma, hma3 string
		sk        *sweepKernel // nil: automatic (kernelFor)
	}{
		{"20:200:20", "30:240:30", nil},
		{"20:200:20", "30:240:30", &threadPerCombo},
		{"10:329:1", "12:331:1", nil},
		{"10:329:1", "12:331:1", &threadPerCombo},
		{"10:329:1", "12:331:1", &barParallel},
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "kernel: auto = bar-parallel (sweep_seg) below %d combos, else one combo per thread (sweep_*_k1); otherwise the kernel named is forced (2 combos per thread: cuda/dev/sweep_k2.cu)\n\n", segMaxCombos)
	fmt.Fprintf(&sb, "| grid | precision | kernel | combos | end-to-end median (ms) | combos/s end-to-end | indicator kernels (ms) | sweep kernel (ms) | combos/s sweep kernel | refined | prepare (ms) |\n")
	fmt.Fprintf(&sb, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range cases {
		grid := engine.Grid{HMA: mustRange(t, "--hma", c.hma), HMA3: mustRange(t, "--hma3", c.hma3)}
		kname := "auto"
		if c.sk != nil {
			kname = c.sk.String()
		}
		for _, prec := range []engine.Precision{engine.FP32, engine.FP64} {
			job := &engine.Job{Bars: bars, Grid: grid, Params: defaultParams(), Precision: prec}
			rec := &recorder{Backend: b, sk: c.sk}
			var times []time.Duration
			var ind, sw, prep float64
			var refined int
			for rep := 0; rep < 4; rep++ {
				start := time.Now()
				run, err := engine.Sweep(t.Context(), rec, job, engine.SweepOptions{})
				el := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				if len(run.Results) != grid.Len() {
					t.Fatalf("%d results, want %d", len(run.Results), grid.Len())
				}
				if rep == 0 {
					continue // warm-up
				}
				times = append(times, el)
				prep += run.Prepare.Seconds() * 1000 / 3 // engine.Sweep's Prepare phase (host + async launches)
				var i, s float64
				switch k := rec.k.(type) {
				case *kernel[float32]:
					i, s, _, refined = k.stats()
				case *kernel[float64]:
					i, s, _, refined = k.stats()
				}
				ind += i / 3
				sw += s / 3
			}
			slices.Sort(times)
			med := times[len(times)/2]
			row := fmt.Sprintf("| %s x %s | %s | %s | %d | %.2f | %.0f | %.2f | %.2f | %.0f | %d | %.2f |",
				c.hma, c.hma3, prec, kname, grid.Len(), float64(med.Microseconds())/1000, float64(grid.Len())/med.Seconds(),
				ind, sw, float64(grid.Len())/(sw/1000), refined, prep)
			t.Log("timing " + row)
			sb.WriteString(row + "\n")
		}
	}
	fmt.Fprintf(&sb, "\n%s, %d bars (FIL/USDT 1m), %s\n", devs[0].Name+" "+devs[0].Driver, bars.Len(), time.Now().UTC().Format(time.RFC3339))
	fmt.Print(sb.String())
	if dir := os.Getenv("SWEEPBENCH_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "timing.md"), []byte(sb.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}
