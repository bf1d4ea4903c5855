package conformance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
)

// Options say how close a backend must come to the reference.
type Options struct {
	// FP64 and FP32 bound its metrics against the reference's in each
	// precision; the zero Tolerance wants every bit. Trade counts are always
	// exact.
	FP64, FP32 Tolerance
	// Bars is the length of each case's random bars (0: 3,000).
	Bars int
}

func (o Options) tol(p engine.Precision) Tolerance {
	if p == engine.FP32 {
		return o.FP32
	}
	return o.FP64
}

// suiteCase is one job the suite runs: bars, grid, parameters, formulation.
type suiteCase struct {
	name   string
	bars   *engine.Bars
	grid   engine.Grid
	params engine.Params
	form   engine.Formulation
}

func (c suiteCase) job(p engine.Precision) *engine.Job {
	return &engine.Job{Bars: c.bars, Grid: c.grid, Params: c.params, Precision: p, WMA: c.form}
}

// cases are four jobs on fresh bars: minute-like ticks with ties and flat
// returns (close, long-short), a random walk at FIL-like prices (hl2,
// long-only, slippage 0.0005), the prefix formulation (ohlc4), whose fp32 intermediates
// are ruined at this price: the same ruin on every backend, and an HMA3
// range of step 1 (odd start, even end), whose twin lengths (one p =
// floor(L/2)) engine.Sweep computes once, on the distinct grid
// (engine.Grid.Distinct), which holds a length below the range: the case
// last (aliasCase).
func cases(rng *rand.Rand, n int) []suiteCase {
	p := engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600}
	lo, ohlc := p, p
	lo.Mode, lo.Source, lo.Slippage = engine.LongOnly, engine.SourceHL2, 0.0005 // slippage: k = (1-f)(1-q) on every backend (engine.Keep)
	ohlc.Source = engine.SourceOHLC4
	g := engine.Grid{HMA: engine.Range{Start: 4, Stop: 60, Step: 14}, HMA3: engine.Range{Start: 6, Stop: 90, Step: 21}}
	g2 := engine.Grid{HMA: engine.Range{Start: 9, Stop: 99, Step: 30}, HMA3: engine.Range{Start: 12, Stop: 120, Step: 27}}
	g3 := engine.Grid{HMA: engine.Range{Start: 5, Stop: 45, Step: 20}, HMA3: engine.Range{Start: 7, Stop: 20, Step: 1}}
	return []suiteCase{
		{"ticks close long-short", datatest.TickWalk(rng, n, 100, 0.01), g, p, engine.Direct},
		{"walk hl2 long-only", datatest.RandomWalk(rng, n, 30000, 0.002), g2, lo, engine.Direct},
		{"prefix ohlc4", datatest.RandomWalk(rng, n, 30000, 0.001), g, ohlc, engine.Prefix},
		{"hma3 step 1", datatest.TickWalk(rng, n, 100, 0.01), g3, p, engine.Direct},
	}
}

// aliasCase is the case of cases with an HMA3 range of step 1.
func aliasCase(cs []suiteCase) suiteCase { return cs[len(cs)-1] }

// precisions are the precisions b computes (engine.PrecisionSupport), fp64 first.
func precisions(b engine.Backend) []engine.Precision {
	var out []engine.Precision
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		if ps, ok := b.(engine.PrecisionSupport); ok && ps.Supports(p) != nil {
			continue
		}
		out = append(out, p)
	}
	return out
}

// TestBackend runs the conformance suite on b; it skips when b is not
// available here, saying why. See the package comment for what it checks.
func TestBackend(t *testing.T, b engine.Backend, opt Options) {
	t.Helper()
	if err := b.Available(); err != nil {
		t.Skipf("backend %s is not available here: %v", b.Name(), err)
	}
	if opt.Bars <= 0 {
		opt.Bars = 3000
	}
	cs := cases(datatest.Rand(t), opt.Bars)
	precs := precisions(b)
	if len(precs) == 0 {
		t.Fatalf("backend %s supports neither fp64 nor fp32", b.Name())
	}
	t.Run("reference", func(t *testing.T) { testReference(t, b, opt, cs, precs) })
	t.Run("indicators", func(t *testing.T) { testIndicators(t, b, cs[1:]) })
	t.Run("poisoned", func(t *testing.T) { testPoisoned(t, b, opt, cs[0], precs) })
	for _, c := range []suiteCase{cs[0], aliasCase(cs)} {
		t.Run("chunks/"+c.name, func(t *testing.T) { testChunks(t, b, c, precs) })
	}
	t.Run("cancel", func(t *testing.T) { testCancel(t, b, cs[1], precs[0]) })
	for _, c := range []suiteCase{cs[0], aliasCase(cs)} {
		t.Run("study/"+c.name, func(t *testing.T) { testStudy(t, b, opt, c) })
	}
	t.Run("parity", func(t *testing.T) { testParity(t, b, cs) })
	t.Run("blocks", func(t *testing.T) { testBlocks(t, b, cs, precs) })
	t.Run("strategies", func(t *testing.T) { testStrategies(t, b, opt.Bars) })
}

// sweep runs job on b through engine.Sweep and returns the metrics in grid
// order, checking that every combo came back under its own index.
func sweep(t *testing.T, b engine.Backend, job *engine.Job, opt engine.SweepOptions) []engine.Metrics {
	t.Helper()
	run, err := engine.Sweep(context.Background(), b, job, opt)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if run.Status != engine.StatusComplete || len(run.Results) != job.Grid.Len() {
		t.Fatalf("sweep: status %s, %d results of %d", run.Status, len(run.Results), job.Grid.Len())
	}
	out := make([]engine.Metrics, len(run.Results))
	for i, r := range run.Results {
		if r.Index != i || r.Combo != job.Grid.At(i) {
			t.Fatalf("sweep: result %d is combo %d %+v, want %+v", i, r.Index, r.Combo, job.Grid.At(i))
		}
		out[i] = r.Metrics
	}
	return out
}

// testReference: every case, every precision b computes, against the
// reference computed by hand, within the backend's tolerance.
func testReference(t *testing.T, b engine.Backend, opt Options, cs []suiteCase, precs []engine.Precision) {
	for _, c := range cs {
		for _, p := range precs {
			t.Run(fmt.Sprintf("%s/%s", c.name, p), func(t *testing.T) {
				job := c.job(p)
				want := Reference(t, job)
				got := sweep(t, b, job, engine.SweepOptions{})
				CompareMetrics(t, b.Name()+" "+p.String(), got, want, c.grid, opt.tol(p))
				trades := 0
				for _, m := range want {
					trades += m.TotalTrades
				}
				if trades == 0 {
					t.Fatal("the reference made no trade: the case proves nothing")
				}
			})
		}
	}
}

// testIndicators: a backend that exports its fp32 series
// (engine.IndicatorDevice), and its fp64 ones (engine.SeriesDevice), gives
// the reference's bits, direct and prefix.
func testIndicators(t *testing.T, b engine.Backend, cs []suiteCase) {
	dev, ok := b.(engine.IndicatorDevice)
	if !ok {
		t.Skipf("%s does not export indicator series (engine.IndicatorDevice)", b.Name())
	}
	for _, c := range cs {
		job := c.job(engine.FP32)
		got, err := dev.Indicators32(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		h, h3, r := Series[float32](t, job)
		for L, w := range h {
			if i, ok := SameSeries(got.H[L], w); !ok {
				t.Errorf("%s: h(%d) bar %d differs from the reference", c.name, L, i)
			}
		}
		for L, w := range h3 {
			if i, ok := SameSeries(got.H3[L], w); !ok {
				t.Errorf("%s: h3(%d) bar %d differs from the reference", c.name, L, i)
			}
		}
		if i, ok := SameSeries(got.R, r); !ok {
			t.Errorf("%s: bar return %d differs from the reference", c.name, i)
		}
		sd, ok := b.(engine.SeriesDevice)
		if !ok {
			continue
		}
		// The fp64 series too, which the parity report takes from the
		// device (engine.SeriesDevice).
		job = c.job(engine.FP64)
		got64, err := sd.Indicators64(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		h64, h364, r64 := Series[float64](t, job)
		for L, w := range h64 {
			if i, ok := SameSeries(got64.H[L], w); !ok {
				t.Errorf("%s: fp64 h(%d) bar %d differs from the reference", c.name, L, i)
			}
		}
		for L, w := range h364 {
			if i, ok := SameSeries(got64.H3[L], w); !ok {
				t.Errorf("%s: fp64 h3(%d) bar %d differs from the reference", c.name, L, i)
			}
		}
		if i, ok := SameSeries(got64.R, r64); !ok {
			t.Errorf("%s: fp64 bar return %d differs from the reference", c.name, i)
		}
	}
}

// poison fills every metric of out with a value no backend computes: a NaN
// with its own payload, or -7777 for a count.
var poison = math.Float64frombits(0x7ff4_dead_beef_7777)

func poisoned(n int) []engine.Metrics {
	out := make([]engine.Metrics, n)
	for i := range out {
		for _, name := range engine.MetricNames {
			out[i].SetValue(name, poison)
		}
		out[i].TotalTrades, out[i].LongBars, out[i].ShortBars, out[i].FlatBars = -7777, -7777, -7777, -7777
	}
	return out
}

// unwritten is the first metric of m that still holds the poison.
func unwritten(m engine.Metrics) string {
	for _, name := range engine.MetricNames {
		v, _ := m.Value(name)
		if math.Float64bits(v) == math.Float64bits(poison) || v == -7777 {
			return name
		}
	}
	return ""
}

// laneRange is the combos Sweep may hand lane of k (engine.Kernel): its own
// chunk when the grid is one chunk per lane, else any.
func laneRange(k engine.Kernel, total, lane int) (lo, hi int) {
	chunk := max(k.ChunkSize(), 1)
	if total <= k.Lanes()*chunk {
		return min(lane*chunk, total), min((lane+1)*chunk, total)
	}
	return 0, total
}

func prepare(t *testing.T, b engine.Backend, job *engine.Job) engine.Kernel {
	t.Helper()
	k, err := b.Prepare(context.Background(), job)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	t.Cleanup(func() {
		if err := k.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return k
}

// testPoisoned: Compute writes every slot of its output, each with the
// metrics of its own combo.
func testPoisoned(t *testing.T, b engine.Backend, opt Options, c suiteCase, precs []engine.Precision) {
	for _, p := range precs {
		job := c.job(p)
		want := Reference(t, job)
		k := prepare(t, b, job)
		lo, hi := laneRange(k, job.Grid.Len(), 0)
		out := poisoned(hi - lo)
		if err := k.Compute(context.Background(), 0, lo, out); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if name := unwritten(out[i]); name != "" {
				t.Fatalf("%s: combo %d: %s never written", p, lo+i, name)
			}
		}
		// Outside the lane's combos got is want itself, so the grid labels
		// the combos right.
		got := append(append(append([]engine.Metrics{}, want[:lo]...), out...), want[hi:]...)
		CompareMetrics(t, fmt.Sprintf("%s combos %d..%d in one Compute", p, lo, hi-1), got, want, job.Grid, opt.tol(p))
	}
}

// testChunks: the same combos computed in one call, in pieces of 1, 2, 3...
// combos from every offset, and through a resumed sweep (Skip) give the
// same bits.
func testChunks(t *testing.T, b engine.Backend, c suiteCase, precs []engine.Precision) {
	for _, p := range precs {
		job := c.job(p)
		k := prepare(t, b, job)
		lo, hi := laneRange(k, job.Grid.Len(), 0)
		whole := make([]engine.Metrics, hi-lo)
		if err := k.Compute(context.Background(), 0, lo, whole); err != nil {
			t.Fatal(err)
		}
		pieces := make([]engine.Metrics, hi-lo)
		for a, size := lo, 1; a < hi; a, size = a+size, size%4+1 {
			z := min(a+size, hi)
			if err := k.Compute(context.Background(), 0, a, pieces[a-lo:z-lo]); err != nil {
				t.Fatalf("%s: combos %d..%d: %v", p, a, z-1, err)
			}
		}
		for i := range whole {
			if name, same := SameMetrics(pieces[i], whole[i]); !same {
				t.Errorf("%s: combo %d: %s differs when computed in pieces", p, lo+i, name)
			}
		}

		full := sweep(t, b, job, engine.SweepOptions{})
		skip := func(i int) bool { return i%3 == 1 }
		run, err := engine.Sweep(context.Background(), b, job, engine.SweepOptions{Skip: skip})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range run.Results {
			if skip(r.Index) {
				t.Errorf("%s: resumed sweep computed combo %d, reported done", p, r.Index)
			}
			if name, same := SameMetrics(r.Metrics, full[r.Index]); !same {
				t.Errorf("%s: resumed sweep, combo %d: %s differs from the whole sweep", p, r.Index, name)
			}
			n++
		}
		if want := job.Grid.Len() - (job.Grid.Len()+1)/3; n != want {
			t.Errorf("%s: resumed sweep returned %d combos, want %d", p, n, want)
		}
	}
}

// testCancel: a cancelled context stops Sweep (prepare or compute) and
// Compute promptly with the context's error, and a sweep cancelled midway
// keeps only correct results.
func testCancel(t *testing.T, b engine.Backend, c suiteCase, p engine.Precision) {
	job := c.job(p)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	run, err := engine.Sweep(cancelled, b, job, engine.SweepOptions{})
	if !errors.Is(err, context.Canceled) || run == nil || run.Status != engine.StatusCancelled {
		t.Errorf("sweep on a cancelled context: err %v, run %+v: want context.Canceled and status cancelled", err, run)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("sweep on a cancelled context took %v", d)
	}

	k := prepare(t, b, job)
	lo, hi := laneRange(k, job.Grid.Len(), 0)
	if err := k.Compute(cancelled, 0, lo, make([]engine.Metrics, hi-lo)); !errors.Is(err, context.Canceled) {
		t.Errorf("Compute on a cancelled context: %v, want context.Canceled", err)
	}

	full := sweep(t, b, job, engine.SweepOptions{})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	run, err = engine.Sweep(ctx, b, job, engine.SweepOptions{Sink: func([]engine.ComboResult) error { stop(); return nil }})
	if !errors.Is(err, context.Canceled) || run.Status != engine.StatusCancelled {
		t.Errorf("sweep cancelled after its first chunk: err %v, status %s", err, run.Status)
	}
	for _, r := range run.Results {
		if name, same := SameMetrics(r.Metrics, full[r.Index]); !same || r.Combo != job.Grid.At(r.Index) {
			t.Errorf("cancelled sweep, combo %d: %s differs from the whole sweep", r.Index, name)
		}
	}
}

// testStudy: a study of both precisions runs each on b within its
// tolerance, or, when b lacks one (engine.PrecisionSupport), on the
// fallback, bit for bit the reference, and its note says so; without a
// fallback that study is the backend field's error.
func testStudy(t *testing.T, b engine.Backend, opt Options, c suiteCase) {
	ds := &data.Dataset{Bars: *c.bars, Info: data.Info{Name: "conformance", Bars: c.bars.Len(), MedianSpacing: datatest.Spacing}}
	s := &engine.Study{Dataset: ds, Grid: c.grid, Params: c.params, Precisions: []engine.Precision{engine.FP64, engine.FP32},
		WMA: c.form, Backend: b, Fallback: reference.New()}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Parity == nil || !rep.Complete() {
		t.Fatalf("study incomplete or without parity: %+v", rep)
	}
	lacks := func(p engine.Precision) bool {
		ps, ok := b.(engine.PrecisionSupport)
		return ok && ps.Supports(p) != nil
	}
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		run := rep.Run(p)
		job := c.job(p)
		if p == engine.FP64 {
			job.WMA = engine.Direct // a study's reference lane is the direct sum
		}
		want := Reference(t, job)
		got := make([]engine.Metrics, len(run.Results))
		for i, r := range run.Results {
			got[i] = r.Metrics
		}
		switch {
		case lacks(p):
			if run.Backend != "reference" {
				t.Errorf("%s: %s has no %s, the lane ran on %q, want the fallback", p, b.Name(), p, run.Backend)
			}
			// Known before the run: the note Spec.Study gives the study.
			if note := fmt.Sprintf("%s has no %s: the %s lane runs on reference", b.Name(), p, p); !strings.Contains(s.FallbackNote(), note) {
				t.Errorf("%s: the fallback note %q does not say %q", p, s.FallbackNote(), note)
			}
			CompareMetrics(t, "fallback "+p.String(), got, want, c.grid, Tolerance{})
		default:
			if run.Backend != b.Name() {
				t.Errorf("%s: the lane ran on %q, want %s", p, run.Backend, b.Name())
			}
			CompareMetrics(t, "study "+p.String(), got, want, c.grid, opt.tol(p))
		}
	}
	if lacks(engine.FP64) {
		s.Fallback = nil
		rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
		var fe *engine.FieldError
		if !errors.As(err, &fe) || fe.Field != engine.FieldBackend || fe.Value != b.Name() {
			t.Errorf("study without a fallback: err %v, want the backend field's error naming %s", err, b.Name())
		}
		if rep != nil && len(rep.Runs) > 0 {
			t.Errorf("study without a fallback ran %d lanes", len(rep.Runs))
		}
	}
}
