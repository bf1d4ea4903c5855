package tui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

// slow32 is the reference backend whose fp32 lane computes one chunk and
// then holds until the sweep is cancelled; fp64 runs to the end. combos64
// counts the fp64 combos computed, calls32 the fp32 chunks asked for.
type slow32 struct {
	engine.Backend
	combos64, calls32 *atomic.Int64
}

func (slow32) Name() string { return "slow32" }

func (s slow32) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	k, err := s.Backend.Prepare(ctx, job)
	if err != nil {
		return nil, err
	}
	return &slow32Kernel{Kernel: k, fp32: job.Precision == engine.FP32, s: s}, nil
}

type slow32Kernel struct {
	engine.Kernel
	fp32 bool
	s    slow32
}

func (k *slow32Kernel) ChunkSize() int { return min(k.Kernel.ChunkSize(), 16) }

func (k *slow32Kernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	if k.fp32 {
		if k.s.calls32.Add(1) > 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		return k.Kernel.Compute(ctx, lane, first, out)
	}
	err := k.Kernel.Compute(ctx, lane, first, out)
	if err == nil {
		k.s.combos64.Add(int64(len(out)))
	}
	return err
}

// TestCancelDuringFP32: esc while the fp32 lane runs (fp64 complete); a
// combo the fp32 run never computed says so in the Combo and Crossover
// panes instead of recomputed fp32 numbers, and the cancel is a note.
func TestCancelDuringFP32(t *testing.T) {
	var combos64, calls32 atomic.Int64
	reg := testRegistry()
	reg.Register(slow32{Backend: reference.New(), combos64: &combos64, calls32: &calls32})
	f := smallFlags()
	f.HMA, f.HMA3 = "2:40:2", "6:60:6" // 200 combos
	f.Backend = "slow32"
	m := newModel(context.Background(), Config{Registry: reg, Flags: f}, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.hold = true
	d.key("enter")
	if m.screen != common.RunScreen {
		t.Fatalf("the run did not start (last error %q)", m.status.LastErr)
	}
	waitFor(t, "fp64 to complete and fp32 to hold", func() bool { return combos64.Load() >= 200 && calls32.Load() > 1 })
	d.key("esc")
	d.drain()
	r := m.state.Results
	if r == nil || r.R32 == nil || r.R64 == nil {
		t.Fatalf("no results after the cancel (last error %q)", m.status.LastErr)
	}
	if len(r.R64.Results) != 200 || len(r.R32.Results) >= 200 {
		t.Fatalf("fp64 %d, fp32 %d combos", len(r.R64.Results), len(r.R32.Results))
	}
	if m.status.LastErr != "" || !strings.Contains(m.status.Info, "cancelled: showing 200 fp64 + ") {
		t.Fatalf("status: error %q, info %q", m.status.LastErr, m.status.Info)
	}
	if v := m.View(); strings.Contains(v, "error:") || !strings.Contains(v, "cancelled: showing") {
		t.Fatalf("the cancel shows as an error:\n%s", v)
	}
	if title := m.results.Metrics().Title(); !strings.Contains(title, "fp32: ") || !strings.Contains(title, "cancelled") {
		t.Fatalf("metrics title %q", title)
	}
	missing := -1
	for i := 0; i < r.Grid.Len() && missing < 0; i++ {
		if r.R32.Lookup(i) == nil {
			missing = i
		}
	}
	d.send(common.SelectMsg{Index: missing})
	d.settle()
	in := m.state.Inspect
	if in == nil || in.Index != missing || in.D32 != nil || in.D64 == nil {
		t.Fatalf("inspection of combo %d: %+v", missing, in)
	}
	const want = "fp32 not computed (run cancelled)"
	m.results.SetFocus(results.ComboPane)
	if v := m.View(); !strings.Contains(v, want) || !strings.Contains(v, "fp64: return") {
		t.Fatalf("the Combo pane:\n%s", v)
	}
	m.results.SetFocus(results.CrossoverPane)
	if v := m.View(); !strings.Contains(v, want) || strings.Contains(v, "flip 1") {
		t.Fatalf("the Crossover pane:\n%s", v)
	}
}
