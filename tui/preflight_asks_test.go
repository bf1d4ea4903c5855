package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/engine/preflight"
	"sweepbench/tui/common"
)

// TestLongCPUStudyAsksOnItsEstimate: 999,000 combos in fp64 (under the
// million combos x precisions the workbench used to ask on) that the
// calibration says take 15 minutes do not start on enter: the run screen
// says the estimate and asks, as run asks for --yes; n goes back to the
// form with nothing started, y starts it.
func TestLongCPUStudyAsksOnItsEstimate(t *testing.T) {
	f := smallFlags()
	f.Precision, f.HMA, f.HMA3 = "fp64", "2:1999", "6:505"
	d, calls := preflightDriver(t, f, preflight.DefaultRates, 15*time.Minute)
	d.hold = true
	d.key("enter")
	want := "999,000 combos in 1 precision on the CPU reference would take ~15m0s (999,000 combos a precision, 2,248 series, 2 cores): y runs it anyway"
	if d.m.run.Running() || d.m.screen != common.RunScreen || !d.m.run.Asking() || *calls != 1 {
		t.Fatalf("running %v, screen %d, asking %v, calibrations %d: want the question on the run screen", d.m.run.Running(), d.m.screen, d.m.run.Asking(), *calls)
	}
	if v := d.m.View(); !strings.Contains(strings.Join(strings.Fields(v), " "), want) {
		t.Fatalf("the run screen does not ask %q:\n%s", want, v)
	}
	d.key("n")
	if d.m.run.Running() || d.m.run.Checking() || d.m.screen != common.SetupScreen || d.m.run.Started() != 0 {
		t.Fatalf("n: running %v, checking %v, screen %d: want the form, nothing started", d.m.run.Running(), d.m.run.Checking(), d.m.screen)
	}
	d.key("enter") // asked again: a new check
	if !d.m.run.Asking() || *calls != 2 {
		t.Fatalf("enter again: asking %v, calibrations %d", d.m.run.Asking(), *calls)
	}
	d.key("y")
	if !d.m.run.Running() || d.m.screen != common.RunScreen || d.pending == nil {
		t.Fatalf("y: screen %d, running %v: the confirmed study did not start (last error %q)", d.m.screen, d.m.run.Running(), d.m.status.LastErr)
	}
	if v := d.m.View(); !strings.Contains(v, "estimate ~15m0s (999,000 combos a precision") {
		t.Errorf("the running study does not say its estimate:\n%s", v)
	}
	d.key("esc")
	d.drain()
}

// TestManyCombosShortStudyStarts: 1,000,000 combos in both precisions
// (over the combo count the workbench used to ask on) that the calibration
// says take two minutes start on the first enter, the estimate said over
// the lanes.
func TestManyCombosShortStudyStarts(t *testing.T) {
	f := smallFlags()
	f.HMA, f.HMA3 = "2:1001", "6:1005"
	d, calls := preflightDriver(t, f, preflight.DefaultRates, 2*time.Minute)
	d.hold = true
	d.key("enter")
	if !d.m.run.Running() || d.m.run.Checking() || *calls != 1 {
		t.Fatalf("running %v, checking %v, calibrations %d (last error %q): want it started", d.m.run.Running(), d.m.run.Checking(), *calls, d.m.status.LastErr)
	}
	if v := d.m.View(); !strings.Contains(v, "estimate ~2m0s (1,000,000 combos a precision, 1,500 series, 2 cores)") {
		t.Errorf("the run screen does not say the estimate:\n%s", v)
	}
	d.key("esc")
	d.drain()
}

// TestImpossibleGridAskedAtOnce: 200,000,000 combos over the 43,208 bars
// of the embedded data (about half of them computed, the rest aliases) are
// at least 9 minutes on 2 cores from arithmetic alone (fp64): asked about
// at once, with the time at the typical rate (about 6 hours, not the 9
// minutes' floor), without advising one precision to a study of one and
// without the calibration (which takes seconds on such a grid's middle
// lengths).
func TestImpossibleGridAskedAtOnce(t *testing.T) {
	f := smallFlags()
	f.Head = 0
	f.Precision, f.HMA, f.HMA3 = "fp64", "2:20001", "6:10005"
	d, calls := preflightDriver(t, f, preflight.DefaultRates, time.Hour)
	d.key("enter")
	if !d.m.run.Asking() || *calls != 0 || d.m.run.Running() {
		t.Fatalf("asking %v, calibrations %d, running %v (last error %q): want the question at once", d.m.run.Asking(), *calls, d.m.run.Running(), d.m.status.LastErr)
	}
	want := "200,000,000 combos in 1 precision on the CPU reference would take about 6h0m0s on 2 cores (from the grid's size and the bars alone): y runs it anyway; any other key leaves it (a GPU backend or a coarser grid is quicker)"
	if v := strings.Join(strings.Fields(d.m.View()), " "); !strings.Contains(v, want) {
		t.Fatalf("the run screen does not ask %q:\n%s", want, v)
	}
	d.key("esc")
	if d.m.run.Checking() || d.m.screen != common.SetupScreen || d.m.run.Started() != 0 {
		t.Fatalf("esc: checking %v, screen %d, started %d", d.m.run.Checking(), d.m.screen, d.m.run.Started())
	}
}

// fixedPreflight is a workbench preflight that does not depend on the
// host: rates r, 2 cores and a calibration that says total (it counts its
// calls); the memory limit is the host's, so the grids below keep little.
func fixedPreflight(r preflight.Rates, total time.Duration, calls *int) preflight.PreflightOptions {
	return preflight.PreflightOptions{Rates: r, Workers: 2,
		Calibrate: func(_ context.Context, s *engine.Study) (preflight.Estimate, error) {
			*calls++
			d := s.Grid.Distinct()
			return preflight.Estimate{Combos: s.Grid.Len(), Computed: d.Len(), Series: d.HMA.Len() + d.HMA3.Len(), Tiles: 1, Workers: 2, Total: total}, nil
		}}
}

// preflightDriver is a driver whose workbench checks studies with
// fixedPreflight.
func preflightDriver(t *testing.T, f Flags, r preflight.Rates, total time.Duration) (*driver, *int) {
	calls := new(int)
	cfg := Config{Registry: testRegistry(), Flags: f, Preflight: fixedPreflight(r, total, calls)}
	d := &driver{t: t, m: newModel(context.Background(), cfg, termenv.Ascii, true, true)}
	d.run(d.m.Init())
	d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	return d, calls
}
