package reference_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
)

// seededBars is datatest's random walk at FIL-like prices on a fixed seed.
func seededBars(seed uint64, n int) *engine.Bars {
	return datatest.RandomWalk(rand.New(rand.NewPCG(seed, 1)), n, 30000, 0.002)
}

// TestSweepEqualsBacktest: the reference backend's sweep gives, for every
// combo, exactly the bits of reference.Backtest run by hand on HMA and HMA3
// computed once per length (no shared build, no cache, no chunking):
// fp64 and fp32, close and hl2, both modes, both WMA formulations, with one
// thread, with GOMAXPROCS and with more lanes than cores.
func TestSweepEqualsBacktest(t *testing.T) {
	b := seededBars(7, 3000)
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 40, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 48, Step: 12}}
	for _, c := range []struct {
		prec engine.Precision
		form engine.Formulation
		src  engine.Source
		mode engine.Mode
	}{
		{engine.FP64, engine.Direct, engine.SourceClose, engine.LongShort},
		{engine.FP32, engine.Direct, engine.SourceClose, engine.LongShort},
		{engine.FP64, engine.Direct, engine.SourceHL2, engine.LongOnly},
		{engine.FP32, engine.Direct, engine.SourceHL2, engine.LongOnly},
		{engine.FP32, engine.Prefix, engine.SourceClose, engine.LongShort},
		{engine.FP64, engine.Prefix, engine.SourceClose, engine.LongShort}, // a bare job's formulation is honoured in fp64 too
	} {
		for _, threads := range []int{1, 0, 5} {
			name := fmt.Sprintf("%s/%s/%s/%s/threads=%d", c.prec, c.form, c.src, c.mode, threads)
			t.Run(name, func(t *testing.T) {
				p := engine.Params{Fee: engine.DefaultFee, Mode: c.mode, Source: c.src, BarsPerYear: 525600}
				job := &engine.Job{Bars: b, Grid: g, Params: p, Precision: c.prec, WMA: c.form}
				run, err := engine.Sweep(context.Background(), &reference.Backend{Threads: threads}, job, engine.SweepOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if run.Status != engine.StatusComplete || len(run.Results) != g.Len() {
					t.Fatalf("status %s, %d results", run.Status, len(run.Results))
				}
				if run.WMA != c.form || run.Precision != c.prec {
					t.Errorf("run labelled %s %s, want %s %s", run.Precision, run.WMA, c.prec, c.form)
				}
				var want []engine.Metrics
				if c.prec == engine.FP32 {
					want = byHand(t, b, g, p, engine.FP32, c.form)
				} else {
					want = byHand(t, b, g, p, engine.FP64, c.form)
				}
				trades := 0
				for i, r := range run.Results {
					if r.Index != i || r.Combo != g.At(i) {
						t.Fatalf("Results[%d] is combo %d %+v", i, r.Index, r.Combo)
					}
					if _, same := conformance.SameMetrics(r.Metrics, want[i]); !same {
						t.Errorf("combo %+v: sweep %+v, by hand %+v", r.Combo, r.Metrics, want[i])
					}
					trades += r.TotalTrades
				}
				if trades == 0 {
					t.Error("no trades at all: the comparison proves nothing")
				}
			})
		}
	}
}

// byHand is the reference computed by hand (conformance.Reference: each
// length's HMA or HMA3 on its own, then Backtest combo by combo).
func byHand(t *testing.T, b *engine.Bars, g engine.Grid, p engine.Params, prec engine.Precision, form engine.Formulation) []engine.Metrics {
	return conformance.Reference(t, &engine.Job{Bars: b, Grid: g, Params: p, Precision: prec, WMA: form})
}

// TestStudyFP64AlwaysDirect: the fp64 reference of a study is the direct
// sum whatever --wma says (SPEC "WMA formulations"); the formulation applies
// to the fp32 run. (A bare Sweep honours the job's formulation in fp64 too,
// for the bench ladder: TestSweepEqualsBacktest covers fp64 prefix.)
func TestStudyFP64AlwaysDirect(t *testing.T) {
	b := seededBars(8, 1500)
	ds := &data.Dataset{Bars: *b, Info: data.Info{Name: "synthetic", Bars: b.Len(), MedianSpacing: time.Minute}}
	g := engine.Grid{HMA: engine.Range{Start: 20, Stop: 40, Step: 20}, HMA3: engine.Range{Start: 30, Stop: 60, Step: 30}}
	p := engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}
	rep, err := engine.RunStudy(context.Background(), &engine.Study{Dataset: ds, Grid: g, Params: p,
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, WMA: engine.Prefix, Backend: reference.New()}, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r64, r32 := rep.Run(engine.FP64), rep.Run(engine.FP32)
	if r64.WMA != engine.Direct || r32.WMA != engine.Prefix {
		t.Errorf("runs labelled fp64 %s, fp32 %s: want direct and prefix", r64.WMA, r32.WMA)
	}
	want := byHand(t, b, g, p, engine.FP64, engine.Direct)
	for i, r := range r64.Results {
		if _, same := conformance.SameMetrics(r.Metrics, want[i]); !same {
			t.Errorf("combo %d: the study's fp64 run is not the direct reference", i)
		}
	}
	if want32 := byHand(t, b, g, p, engine.FP32, engine.Prefix); !sameMetrics(r32.Results[0].Metrics, want32[0]) {
		t.Error("the study's fp32 run is not the prefix computation")
	}
}

// TestBackendDescribesItself: name, availability and the device line.
func TestBackendDescribesItself(t *testing.T) {
	b := &reference.Backend{Threads: 3}
	if b.Name() != "reference" || b.Available() != nil {
		t.Errorf("Name %q Available %v", b.Name(), b.Available())
	}
	devs, err := b.Devices()
	if err != nil || len(devs) != 1 || !strings.Contains(devs[0].Name, "(3 threads)") || !strings.HasPrefix(devs[0].Name, reference.CPUModel()) {
		t.Errorf("Devices = %+v, %v", devs, err)
	}
	if reference.CPUModel() == "" {
		t.Error("empty CPU model")
	}
}

// TestPrepareCancelled: a cancelled context stops Prepare (the indicator
// build), and the sweep reports it as cancelled, not failed.
func TestPrepareCancelled(t *testing.T) {
	b := seededBars(9, 2000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	job := &engine.Job{Bars: b, Grid: engine.Grid{HMA: engine.Range{Start: 20, Stop: 200, Step: 20}, HMA3: engine.Range{Start: 30, Stop: 240, Step: 30}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}}
	run, err := engine.Sweep(ctx, reference.New(), job, engine.SweepOptions{})
	if err == nil || run == nil || run.Status != engine.StatusCancelled {
		t.Errorf("err %v run %+v: want Status cancelled", err, run)
	}
}

// TestJobThreadsCaps: Job.Threads caps the backend's threads (the bench
// ladder's serial rungs), the device line says so, and the results do not
// depend on it.
func TestJobThreadsCaps(t *testing.T) {
	b := seededBars(10, 1200)
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 24, Step: 12}}
	p := engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}
	var first *engine.Run
	for _, c := range []struct{ backend, job, want int }{{4, 1, 1}, {4, 0, 4}, {2, 3, 2}} {
		job := &engine.Job{Bars: b, Grid: g, Params: p, Precision: engine.FP64, Threads: c.job}
		run, err := engine.Sweep(context.Background(), &reference.Backend{Threads: c.backend}, job, engine.SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("(%d threads)", c.want); !strings.HasSuffix(run.Device, want) {
			t.Errorf("backend %d, job %d threads: device %q, want %q", c.backend, c.job, run.Device, want)
		}
		if first == nil {
			first = run
			continue
		}
		for i := range run.Results {
			if _, same := conformance.SameMetrics(run.Results[i].Metrics, first.Results[i].Metrics); !same {
				t.Errorf("combo %d depends on the thread count", i)
			}
		}
	}
}
