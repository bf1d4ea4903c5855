package reference_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/bench"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// TestRegistered: importing the package registers its Arithmetic, which is
// what engine.CPU returns.
func TestRegistered(t *testing.T) {
	a, err := engine.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.(reference.Arithmetic); !ok {
		t.Errorf("engine.CPU() = %T, want reference.Arithmetic", a)
	}
}

func arithJob(t *testing.T) *engine.Job {
	rng := rand.New(rand.NewPCG(datatest.Seed(t), 3))
	return &engine.Job{Bars: datatest.RandomWalk(rng, 2000, 100, 0.004),
		Grid:   engine.Grid{HMA: engine.Range{Start: 10, Stop: 40, Step: 15}, HMA3: engine.Range{Start: 12, Stop: 60, Step: 24}},
		Params: engine.Params{Fee: engine.DefaultFee, Source: engine.SourceHL2, BarsPerYear: 525600}}
}

// TestRungNaiveEqualsSweep: the bench ladder's M0 (scalar WMAs recomputed
// per combo, bench.RungNaive through Arithmetic.NaiveSweep) gives the
// reference sweep's fp64 bits on every metric of every combo: the ladder's
// parity rests on it.
func TestRungNaiveEqualsSweep(t *testing.T) {
	job := arithJob(t)
	naive, ind, err := bench.RungNaive(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	sweep, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(naive.Results) != job.Grid.Len() || ind <= 0 || naive.Precision != engine.FP64 {
		t.Fatalf("%d results, indicator time %v, %s", len(naive.Results), ind, naive.Precision)
	}
	trades := 0
	for i, r := range naive.Results {
		if r.Index != i || r.Combo != job.Grid.At(i) {
			t.Fatalf("result %d is combo %d %+v", i, r.Index, r.Combo)
		}
		if _, same := conformance.SameMetrics(r.Metrics, sweep.Results[i].Metrics); !same {
			t.Errorf("combo %+v: M0 %+v, sweep %+v", r.Combo, r.Metrics, sweep.Results[i].Metrics)
		}
		trades += r.TotalTrades
	}
	if trades == 0 {
		t.Error("no trades: the comparison proves nothing")
	}
}

// TestRungDeviceIndicators: M5 backtests in fp64 over the fp32 series its
// device returns. With the reference's own fp32 series as the "device"
// (Arithmetic has Indicators32), every combo must equal Backtest run by
// hand in float64 on those series widened, with the float64 returns.
func TestRungDeviceIndicators(t *testing.T) {
	job := arithJob(t)
	run, _, err := bench.RungDeviceIndicators(reference.Arithmetic{}, "cpu")(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	ind32, err := reference.BuildIndicators[float32](context.Background(), job.Bars, job.Grid, job.Params.Source, engine.Direct)
	if err != nil {
		t.Fatal(err)
	}
	r := kernels.BarReturns[float64](job.Bars)
	var sc reference.Scratch[float64]
	for i, res := range run.Results {
		c := job.Grid.At(i)
		want := reference.Backtest(widen(ind32.H[c.HMA]), widen(ind32.H3[c.HMA3]), r, engine.ComboWarmup(c), job.Params, &sc)
		if _, same := conformance.SameMetrics(res.Metrics, want); !same {
			t.Errorf("combo %+v: M5 %+v, by hand %+v", c, res.Metrics, want)
		}
	}
	if run.Precision != engine.FP32 || len(run.Results) != job.Grid.Len() {
		t.Errorf("run %s with %d results", run.Precision, len(run.Results))
	}
}

// TestTimeCombo: the calibration measures something in each precision and
// stops on a cancelled context.
func TestTimeCombo(t *testing.T) {
	job := arithJob(t)
	c := job.Grid.At(1)
	for _, prec := range []engine.Precision{engine.FP64, engine.FP32} {
		job.Precision = prec
		tm, err := reference.Arithmetic{}.TimeCombo(context.Background(), job, c)
		if err != nil {
			t.Fatal(err)
		}
		if tm.HMA <= 0 || tm.HMA3 <= 0 || tm.Backtest <= 0 {
			t.Errorf("%s: %+v: every part takes some time", prec, tm)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (reference.Arithmetic{}).TimeCombo(ctx, job, c); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
