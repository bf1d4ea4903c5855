package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// asReference is a backend named "reference" (Preflight times the CPU
// reference only).
type asReference struct{ Backend }

func (asReference) Name() string { return "reference" }

// preflightFixture is the fake study on "the reference", the memory limit
// fixed at avail (MemAvailable), and options whose calibration says total
// and counts its calls.
func preflightFixture(t *testing.T, avail int64, total time.Duration) (*Study, *PreflightOptions, *int) {
	t.Helper()
	old := memoryLimit
	t.Cleanup(func() { memoryLimit = old })
	memoryLimit = func() MemoryLimit { return MemoryLimit{Available: avail, Kind: LimitMemAvailable, Limit: avail} }
	s := fakeStudy(asReference{&fakeBackend{lanes: 1, chunk: 10}})
	calls := new(int)
	opt := &PreflightOptions{Workers: 2, Rates: Rates{Fast: 1e-9, Slow: 1e9, SlowSeries: 1e9},
		Calibrate: func(context.Context, *Study) (Estimate, error) {
			*calls++
			return Estimate{Combos: s.Grid.Len(), Series: 6, Workers: 2, Total: total}, nil
		}}
	return s, opt, calls
}

// TestPreflightFromArithmeticAlone: what cannot fit (the per-combo results
// beyond the memory available) is refused with *MemoryError, --yes or not,
// and what is over ConfirmTime at the fast rate with *ConfirmError unless
// --yes, both without calibrating; with --yes the floor is the estimate
// said.
func TestPreflightFromArithmeticAlone(t *testing.T) {
	s, opt, calls := preflightFixture(t, 1<<40, time.Second)
	need := ForecastMemory(s).Results
	memoryLimit = func() MemoryLimit { return MemoryLimit{Available: need - 1, Kind: LimitMemAvailable} }
	opt.Yes = true
	var me *MemoryError
	if _, err := PreflightStudy(context.Background(), s, *opt); !errors.As(err, &me) || *calls != 0 {
		t.Fatalf("err %v, calibrations %d: want a MemoryError at once", err, *calls)
	}
	memoryLimit = func() MemoryLimit { return MemoryLimit{Available: 1 << 40, Kind: LimitMemAvailable} }
	// The grid's computed combos x bars x 2 precisions at 1 s a bar on 2
	// cores: far over ConfirmTime.
	opt.Yes, opt.Rates.Fast = false, 1e9
	p, err := PreflightStudy(context.Background(), s, *opt)
	var ce *ConfirmError
	if !errors.As(err, &ce) || !ce.Long || ce.Heavy || *calls != 0 || p.Estimate != nil {
		t.Fatalf("err %v, calibrations %d: want a ConfirmError at once", err, *calls)
	}
	bars := int64(s.Dataset.Bars.Len())
	if want := time.Duration(int64(s.Grid.Distinct().Len())*bars*2) * time.Second / 2; p.Floor != want {
		t.Fatalf("floor %v, want %v (combos x bars x precisions x 1 s / 2 cores)", p.Floor, want)
	}
	if !strings.HasPrefix(p.Describe(), "at least ~") || !strings.Contains(err.Error(), "on the CPU reference would take at least ~") {
		t.Fatalf("Describe %q, err %q", p.Describe(), err)
	}
	opt.Yes = true
	if p, err := PreflightStudy(context.Background(), s, *opt); err != nil || !p.Show() || *calls != 0 {
		t.Fatalf("--yes: err %v, show %v, calibrations %d", err, p.Show(), *calls)
	}
}

// TestPreflightOnTheEstimate: the calibrated time decides: over
// ConfirmTime it asks (not with --yes), over ShowEstimateOver it is said,
// under that neither; a study under ShowEstimateOver at the slow rates is
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
		{ConfirmTime, false, false, true, true},
		{30 * time.Second, false, false, true, true},
		{5 * time.Second, false, false, false, true},
	} {
		s, opt, calls := preflightFixture(t, 1<<40, c.total)
		opt.Yes = c.yes
		p, err := PreflightStudy(context.Background(), s, *opt)
		var ce *ConfirmError
		if asked := errors.As(err, &ce); asked != c.ask || (err != nil && !asked) || p.Show() != c.show || (*calls == 1) != c.calibrated {
			t.Errorf("%v yes %v: err %v, show %v, calibrations %d", c.total, c.yes, err, p.Show(), *calls)
		}
		if c.ask && !strings.Contains(err.Error(), "on the CPU reference would take ~15m0s") {
			t.Errorf("err %q: want the estimate", err)
		}
	}
	s, opt, calls := preflightFixture(t, 1<<40, time.Hour)
	opt.Rates = Rates{Fast: 1e-9, Slow: 1e-3, SlowSeries: 1e-3}
	if p, err := PreflightStudy(context.Background(), s, *opt); err != nil || *calls != 0 || p.Show() || p.Ceiling > ShowEstimateOver {
		t.Errorf("a short study: err %v, calibrations %d, ceiling %v", err, *calls, p.Ceiling)
	}
	s.Backend = &fakeBackend{lanes: 1, chunk: 10}
	opt.Rates = Rates{Fast: 1e9, Slow: 1e9, SlowSeries: 1e9}
	if _, err := PreflightStudy(context.Background(), s, *opt); err != nil || *calls != 0 {
		t.Errorf("another backend: err %v, calibrations %d", err, *calls)
	}
}

// TestPreflightOnMemory: a study whose forecast is over half the memory
// available (but fits) asks for a confirmation, on any backend, saying
// the forecast and the limit; under half it does not.
func TestPreflightOnMemory(t *testing.T) {
	s, opt, _ := preflightFixture(t, 1<<40, time.Second)
	s.Backend = &fakeBackend{lanes: 1, chunk: 10}
	total := ForecastMemory(s).Total()
	lim := MemoryLimit{Available: total * 3 / 2, Kind: LimitCgroupV2, Limit: total * 2, Used: total / 2, Cgroup: "/app"}
	memoryLimit = func() MemoryLimit { return lim }
	_, err := PreflightStudy(context.Background(), s, *opt)
	var ce *ConfirmError
	if !errors.As(err, &ce) || !ce.Heavy || ce.Long {
		t.Fatalf("err %v: want a ConfirmError for the memory", err)
	}
	if want := "would take about " + Bytes(total) + " of memory, more than half of the " + Bytes(total*3/2) + " available (bound by the memory limit of cgroup /app"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err %q: want %q", err, want)
	}
	opt.Yes = true
	if _, err := PreflightStudy(context.Background(), s, *opt); err != nil {
		t.Fatalf("--yes: %v", err)
	}
	opt.Yes = false
	lim.Available = total * 2
	if _, err := PreflightStudy(context.Background(), s, *opt); err != nil {
		t.Fatalf("half the memory: %v", err)
	}
}

// TestPreflightTypicalRate: a study too long to calibrate is said at the
// typical rate (Rates.Typical: combos x bars x (precisions + the parity
// pass) / cores), "about", not at the floor 40 times faster than a core;
// with no typical rate known the floor is said, "at least". The
// ConfirmError counts the study's precisions (one precision is advice
// only with two).
func TestPreflightTypicalRate(t *testing.T) {
	s, opt, calls := preflightFixture(t, 1<<40, time.Second)
	opt.Rates = Rates{Fast: 1e9, Slow: 1e9, SlowSeries: 1e9, Typical: 4e10}
	p, err := PreflightStudy(context.Background(), s, *opt)
	var ce *ConfirmError
	if !errors.As(err, &ce) || !ce.Long || *calls != 0 || ce.Precisions != 2 {
		t.Fatalf("err %v, calibrations %d: want a ConfirmError at once for 2 precisions", err, *calls)
	}
	bars := int64(s.Dataset.Bars.Len())
	steps := int64(s.Grid.Distinct().Len()) * bars * 3 // 2 precisions and the parity pass
	want := time.Duration(steps*40) * time.Second / 2
	if p.About != want || p.Time() != want || p.Workers != 2 {
		t.Fatalf("about %v, time %v, workers %d: want %v on 2 cores", p.About, p.Time(), p.Workers, want)
	}
	wantText := "about " + longDuration(want) + " on 2 cores (from the grid's size and the bars alone)"
	if p.Describe() != wantText || !strings.Contains(err.Error(), "on the CPU reference would take "+wantText) {
		t.Fatalf("Describe %q, err %q: want %q", p.Describe(), err, wantText)
	}
	s.Precisions = s.Precisions[:1]
	if _, err := PreflightStudy(context.Background(), s, *opt); !errors.As(err, &ce) || ce.Precisions != 1 {
		t.Fatalf("one precision: err %v", err)
	}
	// DefaultRates' typical bar is 40 times its floor.
	if DefaultRates.Typical != 40*DefaultRates.Fast {
		t.Fatalf("DefaultRates %+v", DefaultRates)
	}
}

// TestLongDuration: from two days up in whole days, from an hour up to the
// minute, else as the estimate.
func TestLongDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1220 * time.Hour:              "51 days",
		48 * time.Hour:                "2 days",
		47*time.Hour + 30*time.Minute: "47h30m0s",
		9 * time.Minute:               "9m0s",
	} {
		if got := longDuration(d); got != want {
			t.Errorf("longDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
