package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	enginepreflight "sweepbench/engine/preflight"
)

// fixPreflight fixes run's preflight for the test: rates r, 2 cores, and a
// calibration that says total (nothing depends on the host's speed); it
// returns how many times the calibration ran.
func fixPreflight(t *testing.T, r enginepreflight.Rates, total time.Duration) *int {
	t.Helper()
	old := preflightOptions
	t.Cleanup(func() { preflightOptions = old })
	calls := new(int)
	preflightOptions = enginepreflight.PreflightOptions{Rates: r, Workers: 2,
		Calibrate: func(_ context.Context, s *engine.Study) (enginepreflight.Estimate, error) {
			*calls++
			d := s.Grid.Distinct()
			return enginepreflight.Estimate{Combos: s.Grid.Len(), Computed: d.Len(), Series: d.HMA.Len() + d.HMA3.Len(), Tiles: 1, Workers: 2, Total: total}, nil
		}}
	return calls
}

// TestRunRefusesAnImpossibleGridAtOnce: a 10^10-combo grid (fp64, the
// table: no per-combo result kept, so it would fit in tiles) over the
// 175,680 bars of the default data is at least 30 hours on 2 cores from
// arithmetic alone: refused without --yes before any calibration (which
// took 9-36 s on such a grid's middle lengths), saying the time at the
// typical rate (about 51 days: the 999,000-combo study's 15 minutes
// scaled up is 104 days), not the floor 40 times faster, and not advising
// one precision to a study of one.
func TestRunRefusesAnImpossibleGridAtOnce(t *testing.T) {
	calls := fixPreflight(t, enginepreflight.DefaultRates, time.Hour)
	_, _, err := execute(t, "run", "--precision", "fp64", "--hma", "2:100001", "--hma3", "6:100005", "--backend", "reference", "--no-save", "-q")
	want := "10,000,000,000 combos in 1 precision on the CPU reference would take about 51 days on 2 cores (from the grid's size and the bars alone): pass --yes to run it anyway, or use a GPU backend (sweepbench devices), a coarser grid\n"
	if !strings.Contains(err+"\n", want) || *calls != 0 {
		t.Fatalf("err %q, calibrations %d: want %q at once", err, *calls, want)
	}
}

// TestRunAsksForYesOnEstimatedTime: 999,000 combos in fp64 (under the
// million combos x precisions that used to be the only rule) that the
// calibration says take 15 minutes are refused without --yes, with the
// estimate.
func TestRunAsksForYesOnEstimatedTime(t *testing.T) {
	calls := fixPreflight(t, enginepreflight.DefaultRates, 15*time.Minute)
	_, _, err := execute(t, "run", "--precision", "fp64", "--hma", "2:1999", "--hma3", "6:505", "--backend", "reference", "--no-save", "-q")
	want := "999,000 combos in 1 precision on the CPU reference would take ~15m0s (999,000 combos a precision, 2,248 series, 2 cores): pass --yes to run it anyway, or use a GPU backend (sweepbench devices), a coarser grid"
	if !strings.Contains(err, want) || strings.Contains(err, "one precision") || *calls != 1 {
		t.Fatalf("err %q, calibrations %d: want %q", err, *calls, want)
	}
}

// TestRunSaysTheEstimate: the estimate of a study over ten seconds is said
// on stderr before it runs (with --yes too, not with -q); a shorter one is
// not; one under ten seconds even at the slow rates is not calibrated.
func TestRunSaysTheEstimate(t *testing.T) {
	args := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12", "--backend", "reference", "--no-save"}
	slow := enginepreflight.Rates{Fast: 1e-9, Slow: 1e9, SlowSeries: 1e9} // always calibrated
	for _, c := range []struct {
		name  string
		rates enginepreflight.Rates
		total time.Duration
		extra []string
		said  string // the first line of stderr; "" none
		calls int
	}{
		{"30 seconds", slow, 30 * time.Second, nil, "estimate ~30s (9 combos a precision, 6 series, 2 cores)", 1},
		{"an hour, --yes", slow, time.Hour, []string{"--yes"}, "estimate ~1h0m0s (9 combos a precision, 6 series, 2 cores)", 1},
		{"30 seconds, -q", slow, 30 * time.Second, []string{"-q"}, "", 1},
		{"5 seconds", slow, 5 * time.Second, nil, "", 1},
		{"short at the slow rates", enginepreflight.DefaultRates, time.Hour, nil, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := fixPreflight(t, c.rates, c.total)
			out, stderr, err := execute(t, append(args, c.extra...)...)
			if err != "" || !strings.Contains(out, "Top") {
				t.Fatalf("err %q, stdout %q", err, out)
			}
			first, _, _ := strings.Cut(stderr, "\n")
			if c.said != "" && first != c.said || c.said == "" && strings.Contains(stderr, "estimate") {
				t.Fatalf("stderr %q: want the first line %q", stderr, c.said)
			}
			if *calls != c.calls {
				t.Fatalf("calibrated %d times, want %d", *calls, c.calls)
			}
		})
	}
}

// TestLargeCPUStudyAsksForYes: a study the CPU reference would take long
// over (a calibration of 20 minutes, injected) is refused without --yes,
// with the engine's estimate, before anything is computed; in two
// precisions, one precision is among the advice.
func TestLargeCPUStudyAsksForYes(t *testing.T) {
	fixPreflight(t, enginepreflight.Rates{Fast: 1e-9, Slow: 1e9, SlowSeries: 1e9}, 20*time.Minute)
	_, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "2:1001", "--hma3", "6:1005",
		"--backend", "reference", "--no-save", "-q")
	if !strings.Contains(err, "1,000,000 combos in 2 precisions on the CPU reference would take ~") || !strings.Contains(err, "pass --yes") || !strings.HasSuffix(err, "a coarser grid or one precision") {
		t.Errorf("err %q", err)
	}
}

// TestRunEstimatesAStrategyGrid: a crossover grid of 10^6 combos in fp64
// over the default data is estimated from its size and bars alone (never
// calibrated: the calibration times hull's arithmetic) at the typical
// rate, 10^6 x 175,680 bars x 10 ns / 2 cores = 14m38s, and refused
// without --yes; the advice names no GPU backend (only the CPU reference
// computes a strategy family).
func TestRunEstimatesAStrategyGrid(t *testing.T) {
	calls := fixPreflight(t, enginepreflight.DefaultRates, time.Hour)
	_, _, err := execute(t, "run", "--precision", "fp64", "--strategy", "cross", "--fast", "ema:2:1001:1", "--slow", "sma:2:1001:1",
		"--backend", "reference", "--no-save", "-q")
	want := "1,000,000 combos in 1 precision on the CPU reference would take about 14m38s on 2 cores (from the grid's size and the bars alone): pass --yes to run it anyway, or use a coarser grid\n"
	if !strings.Contains(err+"\n", want) || *calls != 0 {
		t.Fatalf("err %q, calibrations %d: want %q", err, *calls, want)
	}
}
