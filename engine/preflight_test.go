package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/memlimit"
	"sweepbench/engine/preflight"
	"sweepbench/engine/text"
)

// asReference is a backend named "reference" (Preflight times the CPU
// reference only).
type asReference struct{ engine.Backend }

func (asReference) Name() string { return "reference" }

// preflightFixture is the fake study on "the reference", the memory limit
// fixed at avail (MemAvailable), and options whose calibration says total
// and counts its calls.
func preflightFixture(t *testing.T, avail int64, total time.Duration) (*engine.Study, *preflight.PreflightOptions, *int) {
	t.Helper()
	t.Cleanup(engine.SetMemoryLimit(func() memlimit.MemoryLimit {
		return memlimit.MemoryLimit{Available: avail, Kind: memlimit.LimitMemAvailable, Limit: avail}
	}))
	s := engine.FakeStudy(asReference{engine.NewFakeBackend(1, 10)})
	calls := new(int)
	opt := &preflight.PreflightOptions{Workers: 2, Rates: preflight.Rates{Fast: 1e-9, Slow: 1e9, SlowSeries: 1e9},
		Calibrate: func(context.Context, *engine.Study) (preflight.Estimate, error) {
			*calls++
			return preflight.Estimate{Combos: s.Grid.Len(), Series: 6, Workers: 2, Total: total}, nil
		}}
	return s, opt, calls
}

// TestPreflightFromArithmeticAlone: what cannot fit (the per-combo results
// beyond the memory available) is refused with *engine.MemoryError, --yes or not,
// and what is over preflight.ConfirmTime at the fast rate with *preflight.ConfirmError unless
// --yes, both without calibrating; with --yes the floor is the estimate
// said.
func TestPreflightFromArithmeticAlone(t *testing.T) {
	s, opt, calls := preflightFixture(t, 1<<40, time.Second)
	need := engine.ForecastMemory(s).Results
	engine.SetMemoryLimit(func() memlimit.MemoryLimit {
		return memlimit.MemoryLimit{Available: need - 1, Kind: memlimit.LimitMemAvailable}
	})
	opt.Yes = true
	var me *engine.MemoryError
	if _, err := preflight.PreflightStudy(context.Background(), s, *opt); !errors.As(err, &me) || *calls != 0 {
		t.Fatalf("err %v, calibrations %d: want a engine.MemoryError at once", err, *calls)
	}
	engine.SetMemoryLimit(func() memlimit.MemoryLimit {
		return memlimit.MemoryLimit{Available: 1 << 40, Kind: memlimit.LimitMemAvailable}
	})
	// The grid's computed combos x bars x 2 precisions at 1 s a bar on 2
	// cores: far over preflight.ConfirmTime.
	opt.Yes, opt.Rates.Fast = false, 1e9
	p, err := preflight.PreflightStudy(context.Background(), s, *opt)
	var ce *preflight.ConfirmError
	if !errors.As(err, &ce) || !ce.Long || ce.Heavy || *calls != 0 || p.Estimate != nil {
		t.Fatalf("err %v, calibrations %d: want a preflight.ConfirmError at once", err, *calls)
	}
	bars := int64(s.Dataset.Bars.Len())
	if want := time.Duration(int64(s.Grid.Distinct().Len())*bars*2) * time.Second / 2; p.Floor != want {
		t.Fatalf("floor %v, want %v (combos x bars x precisions x 1 s / 2 cores)", p.Floor, want)
	}
	if !strings.HasPrefix(p.Describe(), "at least ~") || !strings.Contains(err.Error(), "on the CPU reference would take at least ~") {
		t.Fatalf("Describe %q, err %q", p.Describe(), err)
	}
	opt.Yes = true
	if p, err := preflight.PreflightStudy(context.Background(), s, *opt); err != nil || !p.Show() || *calls != 0 {
		t.Fatalf("--yes: err %v, show %v, calibrations %d", err, p.Show(), *calls)
	}
}

// TestPreflightOnTheEstimate: the calibrated time decides: over
// preflight.ConfirmTime it asks (not with --yes), over preflight.ShowEstimateOver it is said,
// under that neither; a study under preflight.ShowEstimateOver at the slow rates is
// not calibrated at all; another backend than the reference is not timed.
func TestPreflightOnTheEstimate(t *testing.T) {
	for _, c := range []struct {
		total      time.Duration
		yes        bool
		ask, show  bool
		calibrated bool
	}{
		{15 * time.Minute, false, true, true, true},
		{15 * time.Minute, true, false, true, true},
		{preflight.ConfirmTime, false, false, true, true},
		{30 * time.Second, false, false, true, true},
		{5 * time.Second, false, false, false, true},
	} {
		s, opt, calls := preflightFixture(t, 1<<40, c.total)
		opt.Yes = c.yes
		p, err := preflight.PreflightStudy(context.Background(), s, *opt)
		var ce *preflight.ConfirmError
		if asked := errors.As(err, &ce); asked != c.ask || (err != nil && !asked) || p.Show() != c.show || (*calls == 1) != c.calibrated {
			t.Errorf("%v yes %v: err %v, show %v, calibrations %d", c.total, c.yes, err, p.Show(), *calls)
		}
		if c.ask && !strings.Contains(err.Error(), "on the CPU reference would take ~15m0s") {
			t.Errorf("err %q: want the estimate", err)
		}
	}
	s, opt, calls := preflightFixture(t, 1<<40, time.Hour)
	opt.Rates = preflight.Rates{Fast: 1e-9, Slow: 1e-3, SlowSeries: 1e-3}
	if p, err := preflight.PreflightStudy(context.Background(), s, *opt); err != nil || *calls != 0 || p.Show() || p.Ceiling > preflight.ShowEstimateOver {
		t.Errorf("a short study: err %v, calibrations %d, ceiling %v", err, *calls, p.Ceiling)
	}
	s.Backend = engine.NewFakeBackend(1, 10)
	opt.Rates = preflight.Rates{Fast: 1e9, Slow: 1e9, SlowSeries: 1e9}
	if _, err := preflight.PreflightStudy(context.Background(), s, *opt); err != nil || *calls != 0 {
		t.Errorf("another backend: err %v, calibrations %d", err, *calls)
	}
}

// TestPreflightOnMemory: a study whose forecast is over half the memory
// available (but fits) asks for a confirmation, on any backend, saying
// the forecast and the limit; under half it does not.
func TestPreflightOnMemory(t *testing.T) {
	s, opt, _ := preflightFixture(t, 1<<40, time.Second)
	s.Backend = engine.NewFakeBackend(1, 10)
	total := engine.ForecastMemory(s).Total()
	lim := memlimit.MemoryLimit{Available: total * 3 / 2, Kind: memlimit.LimitCgroupV2, Limit: total * 2, Used: total / 2, Cgroup: "/app"}
	engine.SetMemoryLimit(func() memlimit.MemoryLimit { return lim })
	_, err := preflight.PreflightStudy(context.Background(), s, *opt)
	var ce *preflight.ConfirmError
	if !errors.As(err, &ce) || !ce.Heavy || ce.Long {
		t.Fatalf("err %v: want a preflight.ConfirmError for the memory", err)
	}
	if want := "would take about " + text.Bytes(total) + " of memory, more than half of the " + text.Bytes(total*3/2) + " available (bound by the memory limit of cgroup /app"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err %q: want %q", err, want)
	}
	opt.Yes = true
	if _, err := preflight.PreflightStudy(context.Background(), s, *opt); err != nil {
		t.Fatalf("--yes: %v", err)
	}
	opt.Yes = false
	lim.Available = total * 2
	if _, err := preflight.PreflightStudy(context.Background(), s, *opt); err != nil {
		t.Fatalf("half the memory: %v", err)
	}
}

// TestPreflightTypicalRate: a study too long to calibrate is said at the
// typical rate (preflight.Rates.Typical: combos x bars x (precisions + the parity
// pass) / cores), "about", not at the floor 40 times faster than a core;
// with no typical rate known the floor is said, "at least". The
// preflight.ConfirmError counts the study's precisions (one precision is advice
// only with two).
func TestPreflightTypicalRate(t *testing.T) {
	s, opt, calls := preflightFixture(t, 1<<40, time.Second)
	opt.Rates = preflight.Rates{Fast: 1e9, Slow: 1e9, SlowSeries: 1e9, Typical: 4e10}
	p, err := preflight.PreflightStudy(context.Background(), s, *opt)
	var ce *preflight.ConfirmError
	if !errors.As(err, &ce) || !ce.Long || *calls != 0 || ce.Precisions != 2 {
		t.Fatalf("err %v, calibrations %d: want a preflight.ConfirmError at once for 2 precisions", err, *calls)
	}
	bars := int64(s.Dataset.Bars.Len())
	steps := int64(s.Grid.Distinct().Len()) * bars * 3 // 2 precisions and the parity pass
	want := time.Duration(steps*40) * time.Second / 2
	if p.About != want || p.Time() != want || p.Workers != 2 {
		t.Fatalf("about %v, time %v, workers %d: want %v on 2 cores", p.About, p.Time(), p.Workers, want)
	}
	const day = 24 * time.Hour
	if want < 2*day {
		t.Fatalf("about %v: want two days or more (said in days)", want)
	}
	wantText := "about " + text.Plural(int((want+day/2)/day), "day") + " on 2 cores (from the grid's size and the bars alone)"
	if p.Describe() != wantText || !strings.Contains(err.Error(), "on the CPU reference would take "+wantText) {
		t.Fatalf("Describe %q, err %q: want %q", p.Describe(), err, wantText)
	}
	s.Precisions = s.Precisions[:1]
	if _, err := preflight.PreflightStudy(context.Background(), s, *opt); !errors.As(err, &ce) || ce.Precisions != 1 {
		t.Fatalf("one precision: err %v", err)
	}
	// preflight.DefaultRates' typical bar is 40 times its floor.
	if preflight.DefaultRates.Typical != 40*preflight.DefaultRates.Fast {
		t.Fatalf("preflight.DefaultRates %+v", preflight.DefaultRates)
	}
}

// TestEstimateNoArithmetic: with no Arithmetic registered, EstimateStudy
// says ErrNoArithmetic rather than panicking (was part of
// TestNoArithmetic).
func TestEstimateNoArithmetic(t *testing.T) {
	if old, err := engine.CPU(); err == nil {
		engine.RegisterArithmetic(nil)
		defer engine.RegisterArithmetic(old)
	}
	s := engine.FakeStudy(engine.NewFakeBackend(1, 1))
	if _, err := preflight.EstimateStudy(context.Background(), s); !errors.Is(err, engine.ErrNoArithmetic) {
		t.Errorf("EstimateStudy: %v", err)
	}
}
