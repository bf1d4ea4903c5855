package conformance_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/reference"
)

// brokenEnv selects, in a child test process, the broken backend TestBroken
// runs the suite on.
const brokenEnv = "SWEEPBENCH_CONFORMANCE_BROKEN"

// broken wraps the reference backend and breaks one thing.
type broken struct {
	*reference.Backend
	how string
}

func (b broken) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	k, err := b.Backend.Prepare(ctx, job)
	if err != nil {
		return nil, err
	}
	return brokenKernel{k, b.how}, nil
}

// Indicators32 is the reference's fp32 series, with one value one ulp off
// when how is "indicators".
func (b broken) Indicators32(ctx context.Context, job *engine.Job) (*engine.Indicators[float32], error) {
	ind, err := reference.GetIndicators[float32](ctx, job)
	if err != nil || b.how != "indicators" {
		return ind, err
	}
	h := ind.H[job.Grid.HMA.Start]
	i := len(h) / 2
	h[i] = math.Nextafter32(h[i], float32(math.Inf(1)))
	return ind, nil
}

// DeviceParity is the naive device parity pass (conformance.NaiveParity),
// with the worst flip lost when how is "parity".
func (b broken) DeviceParity(ctx context.Context, job *engine.Job, test engine.Precision, form engine.Formulation, tol float64) (*engine.DeviceParity, error) {
	dp, err := conformance.NaiveParity(b.Backend).(engine.ParityDevice).DeviceParity(ctx, job, test, form, tol)
	if err != nil || b.how != "parity" || len(dp.Worst) == 0 {
		return dp, err
	}
	w := 0
	for i, f := range dp.Worst {
		if f.Margin > dp.Worst[w].Margin {
			w = i
		}
	}
	dp.Worst = append(dp.Worst[:w], dp.Worst[w+1:]...)
	return dp, nil
}

type brokenKernel struct {
	engine.Kernel
	how string
}

func (k brokenKernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	switch k.how {
	case "deaf": // ignores cancellation
		ctx = context.Background()
	case "unwritten": // leaves the last slot of each call as it found it
		if len(out) > 1 {
			out = out[:len(out)-1]
		}
	}
	if err := k.Kernel.Compute(ctx, lane, first, out); err != nil {
		return err
	}
	for i := range out {
		switch {
		case k.how == "metric" && first+i == 3: // one ulp on one combo
			out[i].Sharpe = math.Nextafter(out[i].Sharpe, math.Inf(1))
		case k.how == "chunky" && first%2 == 1: // depends on where a call starts
			out[i].TotalReturn = math.Nextafter(out[i].TotalReturn, math.Inf(1))
		}
	}
	return nil
}

// TestBroken runs the suite on the broken backend named by brokenEnv; it is
// run only as TestSuiteCatchesBrokenBackends's child.
func TestBroken(t *testing.T) {
	how := os.Getenv(brokenEnv)
	if how == "" {
		t.Skip("run by TestSuiteCatchesBrokenBackends")
	}
	conformance.TestBackend(t, broken{reference.New(), how}, conformance.Options{})
}

// TestSuiteCatchesBrokenBackends: the suite fails each backend broken in
// one way, and says what broke (a suite that cannot fail proves nothing).
func TestSuiteCatchesBrokenBackends(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("the child runs TestBroken only")
	}
	for _, c := range []struct{ how, want string }{
		{"metric", "sharpe ="},
		{"unwritten", "never written"},
		{"deaf", "Compute on a cancelled context"},
		{"chunky", "differs when computed in pieces"},
		{"indicators", "differs from the reference"},
		{"parity", "worst flip 0"},
	} {
		t.Run(c.how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBroken$", "-test.count=1")
			cmd.Env = append(os.Environ(), brokenEnv+"="+c.how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a backend broken by %q:\n%s", c.how, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Errorf("broken by %q: the failure does not say %q:\n%s", c.how, c.want, out)
			}
		})
	}
}

// TestNaiveParityDevice: the suite on a backend whose parity pass is the
// naive one (every combo's positions compared bar by bar, every flip
// returned shuffled): engine.CompareOnDevice builds from it the report
// engine.Compare builds, field for field.
func TestNaiveParityDevice(t *testing.T) {
	conformance.TestBackend(t, conformance.NaiveParity(reference.New()), conformance.Options{})
}

// TestNearAndSame: the comparisons every test relies on: NaN payloads and
// infinities, one ulp, relative and absolute tolerances.
func TestNearAndSame(t *testing.T) {
	a := engine.Metrics{TotalReturn: 0.1, Sharpe: math.NaN(), Omega: math.Inf(1), TotalTrades: 3}
	b := a
	b.Sharpe = math.Float64frombits(math.Float64bits(math.NaN()) ^ 1) // another NaN payload
	if name, same := conformance.SameMetrics(a, b); !same {
		t.Errorf("NaNs of two payloads differ in %s", name)
	}
	b.TotalReturn = math.Nextafter(0.1, 1)
	if name, same := conformance.SameMetrics(a, b); same || name != "total_return" {
		t.Errorf("one ulp apart: SameMetrics = %q, %v", name, same)
	}
	for _, c := range []struct {
		got, want, rel, abs float64
		ok                  bool
	}{
		{1.0001, 1, 1e-3, 0, true}, {1.01, 1, 1e-3, 0, false}, {1e-12, 0, 1e-3, 1e-9, true},
		{math.Inf(1), math.Inf(1), 0, 0, true}, {math.Inf(1), 1e308, 1, 0, false}, {math.NaN(), math.NaN(), 0, 0, true}, {math.NaN(), 0, 1, 1, false},
	} {
		if got := conformance.Near(c.got, c.want, c.rel, c.abs); got != c.ok {
			t.Errorf("Near(%v, %v, %v, %v) = %v", c.got, c.want, c.rel, c.abs, got)
		}
	}
	if i, same := conformance.SameSeries([]float32{1, float32(math.NaN()), 3}, []float32{1, float32(math.NaN()), 4}); same || i != 2 {
		t.Errorf("SameSeries = %d, %v, want index 2", i, same)
	}
}
