package preflight_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/preflight"
	_ "sweepbench/strategy" // registers engine.NewStrategy
)

// strategyEstimateStudy is estimateStudy's study of n bars with a strategy
// grid instead of hull's.
func strategyEstimateStudy(t *testing.T, n int, family string, params map[string]string, precs []engine.Precision) *engine.Study {
	t.Helper()
	s := estimateStudy(t, n, "10", "12", precs)
	st, err := engine.NewStrategy(family, params, false)
	if err != nil {
		t.Fatal(err)
	}
	s.Grid = engine.Grid{Strategy: st}
	return s
}

// TestPreflightStrategy: a strategy grid's study is not calibrated
// (EstimateStudy says ErrNotCalibrated; PreflightStudy never calls it) and
// is estimated from its combos (Grid.Len) and bars at the typical rate,
// exactly: combos x bars x (precisions + 1 for the parity pass) x Typical
// / workers; a short one shows nothing, a long one is shown, and one over
// ConfirmTime needs a confirmation. No division by an empty hull range.
func TestPreflightStrategy(t *testing.T) {
	both := []engine.Precision{engine.FP64, engine.FP32}
	s := strategyEstimateStudy(t, 3000, "cross", map[string]string{"fast": "ema:5:50:5", "slow": "sma:20:200:10"}, both)
	if _, err := preflight.EstimateStudy(context.Background(), s); !errors.Is(err, preflight.ErrNotCalibrated) {
		t.Fatalf("EstimateStudy of a strategy grid: %v, want ErrNotCalibrated", err)
	}
	rates := preflight.Rates{Fast: 0.25, Slow: 50, SlowSeries: 2, Typical: 10}
	opt := preflight.PreflightOptions{Rates: rates, Workers: 2,
		Calibrate: func(context.Context, *engine.Study) (preflight.Estimate, error) {
			t.Fatal("a strategy study was calibrated")
			return preflight.Estimate{}, nil
		}}
	for _, c := range []struct {
		bars   int
		params map[string]string
		show   bool
	}{
		// 190 combos x 3,000 bars x 3 x 10 ns / 2 cores = 8.55 ms.
		{3000, map[string]string{"fast": "ema:5:50:5", "slow": "sma:20:200:10"}, false},
		// 199 x 191 combos x 100,000 bars: 57 s, said before it starts.
		{100_000, map[string]string{"fast": "ema:2:200:1", "slow": "sma:20:400:2"}, true},
	} {
		s := strategyEstimateStudy(t, c.bars, "cross", c.params, both)
		p, err := preflight.PreflightStudy(context.Background(), s, opt)
		want := time.Duration(float64(s.Grid.Len()) * float64(c.bars) * 3 * rates.Typical / 2)
		if !p.Uncalibrated || p.Estimate != nil || p.About != want || p.Time() != want || p.Floor <= 0 || p.Ceiling < p.Floor {
			t.Errorf("%d bars: %+v, want about %v", c.bars, p, want)
		}
		if got := p.Show(); got != c.show || got != (want > preflight.ShowEstimateOver) {
			t.Errorf("%d bars: Show %v for %v", c.bars, got, want)
		}
		var ce *preflight.ConfirmError
		if long := errors.As(err, &ce); long != (want > preflight.ConfirmTime) {
			t.Errorf("%d bars: %v for %v", c.bars, err, want)
		}
	}

	// A grid of 10^5 combos on 10^6 bars: about 25 minutes on 2 cores,
	// to be confirmed, and said so.
	big := strategyEstimateStudy(t, 1_000_000, "breakout", map[string]string{"entry": "10:509:1", "exit": "5:204:1"}, both)
	p, err := preflight.PreflightStudy(context.Background(), big, opt)
	var ce *preflight.ConfirmError
	if !errors.As(err, &ce) || !ce.Long || p.Time() <= preflight.ConfirmTime {
		t.Fatalf("a long strategy study: %v, %+v", err, p)
	}
	if d := p.Describe(); d != "about 25m0s on 2 cores (from the grid's size and the bars alone)" {
		t.Errorf("Describe = %q", d)
	}
	opt.Yes = true
	if _, err := preflight.PreflightStudy(context.Background(), big, opt); err != nil {
		t.Errorf("confirmed: %v", err)
	}
}

// renamed is a backend under another name (a GPU's, say).
type renamed struct {
	engine.Backend
	name string
}

func (r renamed) Name() string { return r.name }

// TestPreflightStrategyOnGPU: a strategy study on a GPU backend runs on
// its fallback, the CPU reference (Study.FallbackNote), so it is
// estimated as the CPU reference's; the ConfirmError names the family.
func TestPreflightStrategyOnGPU(t *testing.T) {
	s := strategyEstimateStudy(t, 1_000_000, "breakout", map[string]string{"entry": "10:509:1", "exit": "5:204:1"}, []engine.Precision{engine.FP64, engine.FP32})
	s.Fallback = s.Backend
	s.Backend = renamed{s.Backend, "cuda"}
	p, err := preflight.PreflightStudy(context.Background(), s, preflight.PreflightOptions{Rates: preflight.DefaultRates, Workers: 2})
	var ce *preflight.ConfirmError
	if !errors.As(err, &ce) || ce.Strategy != "breakout" || !p.Uncalibrated || p.Time() != 25*time.Minute {
		t.Fatalf("%v, %+v", err, p)
	}
}
