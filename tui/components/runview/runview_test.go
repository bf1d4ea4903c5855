package runview

import (
	"strings"
	"testing"

	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/tui/common"
	"sweepbench/tui/theme"
)

// TestBestPerLane (issue 15, defect 9): the run screen shows each lane's
// best so far under its own precision; an fp32 best better than fp64's is
// not shown as the fp64 lane's.
func TestBestPerLane(t *testing.T) {
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true), Deterministic: true}
	state := common.NewRunState()
	m := New(ctx, state)
	m.SetSize(100, 20)
	s := &engine.Study{Dataset: &data.Dataset{}, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 20, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 24, Step: 12}},
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: fakeBackend{}}
	state.Study = s
	m.Start(s)
	b64 := &engine.ComboResult{Combo: engine.Combo{HMA: 10, HMA3: 12}, Metrics: engine.Metrics{Sharpe: 1.5, TotalTrades: 40}}
	b32 := &engine.ComboResult{Combo: engine.Combo{HMA: 20, HMA3: 24}, Metrics: engine.Metrics{Sharpe: 2.5, TotalTrades: 41}}
	m.Progress([]engine.Progress{{Precision: engine.FP64, Done: 2, Total: 4, Best: b64, Phase: engine.PhaseCompute},
		{Precision: engine.FP32, Done: 1, Total: 4, Best: b32, Phase: engine.PhaseCompute}})
	v := m.View()
	for _, want := range []string{"best sharpe so far, fp64: 1.5 at hma 10 x hma3 12", "best sharpe so far, fp32: 2.5 at hma 20 x hma3 24"} {
		if !strings.Contains(v, want) {
			t.Errorf("run screen lacks %q:\n%s", want, v)
		}
	}
}

// fakeBackend names a backend for the run screen's header.
type fakeBackend struct{ engine.Backend }

func (fakeBackend) Name() string { return "reference" }

// TestPhasesNamed (issue 15, defect 6): once the lanes are done, the run
// screen names the study's phase (parity, then robustness, then saving)
// and what it does, instead of a spinner alone; the lanes stay done.
func TestPhasesNamed(t *testing.T) {
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true), Deterministic: true}
	state := common.NewRunState()
	m := New(ctx, state)
	m.SetSize(100, 20)
	s := &engine.Study{Dataset: &data.Dataset{}, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 20, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 24, Step: 12}},
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: fakeBackend{}}
	state.Study = s
	m.Start(s)
	m.Progress([]engine.Progress{{Precision: engine.FP64, Done: 4, Total: 4, Phase: engine.PhaseDone},
		{Precision: engine.FP32, Done: 4, Total: 4, Phase: engine.PhaseDone}})
	if v := m.View(); strings.Contains(v, "now:") {
		t.Fatalf("a phase named before any began:\n%s", v)
	}
	for _, c := range []struct {
		ev   engine.Progress
		want string
	}{
		{engine.Progress{Precision: engine.FP32, Done: 0, Total: 4, Phase: engine.PhaseParity}, "now: parity: the fp32 positions compared with fp64's bar by bar on 4 combos"},
		{engine.Progress{Precision: engine.FP32, Done: 2, Total: 4, Phase: engine.PhaseParity}, "| 2 of 4 compared"},
		{engine.Progress{Total: 4, Phase: engine.PhaseRobustness}, "now: robustness: PBO over every split"},
		{engine.Progress{Total: 4, Phase: engine.PhaseSaving}, "now: saving: the last batches"},
	} {
		m.Progress([]engine.Progress{c.ev})
		v := strings.Join(strings.Fields(m.View()), " ")
		if !strings.Contains(v, c.want) || strings.Count(v, " done") != 2 {
			t.Errorf("after a %s event: want %q and both lanes done:\n%s", c.ev.Phase, c.want, m.View())
		}
	}
}
