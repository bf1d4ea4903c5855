package tui

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"

	_ "sweepbench/strategy"
)

// zscoreSessionFlags is a zscore study of 5 x 3 x 3 = 45 combos on the
// first 3,000 bars of BTC/USDT 1m, with blocks and a walk-forward.
func zscoreSessionFlags() Flags {
	f := smallFlags()
	f.Head = 3000
	f.Strategy = "zscore"
	f.Params = map[string]string{"length": "10:30:5", "entry": "1.5:2.5:0.5", "exit": "0:1:0.5"}
	f.Blocks, f.WF = 8, "rolling:4"
	return f
}

// fullRun is f's study run with every result kept, as `run` runs it.
func fullRun(t *testing.T, f Flags) *engine.Report {
	t.Helper()
	s, err := f.Spec.Build(testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestStrategySessionPaged: a zscore study shown paged (above
// common.PagedAbove), saved and opened again from the sessions browser,
// names its combos by their parameters everywhere: the robustness pane's
// DSR, plateau and folds (robust.Combo's Label, the window 3x3x3), the
// heatmap drawn from the run's summary over length x entry (exit reduced
// to its best, as the summary reduces it; the cell's combo and value the
// full run's), and the browser's best sharpe line (Grid.Label).
func TestStrategySessionPaged(t *testing.T) {
	pagedAbove(t, 20)
	f := zscoreSessionFlags()
	full := fullRun(t, f)
	g := full.Grid
	if g.Len() != 45 {
		t.Fatalf("%d combos, want 45", g.Len())
	}
	// The best fp64 Sharpe of cell length 10 x entry 1.5 (over exit), and
	// the study's best Sharpe, from the full run.
	cellBest, cellV := -1, math.Inf(-1)
	best, bestV := -1, math.Inf(-1)
	for _, c := range full.Runs[engine.FP64].Results {
		v := c.Metrics.Sharpe
		if math.IsNaN(v) {
			continue
		}
		if co := g.Strategy.Coords(c.Index); co[0] == 0 && co[1] == 0 && v > cellV {
			cellBest, cellV = c.Index, v
		}
		if v > bestV {
			best, bestV = c.Index, v
		}
	}
	if cellBest < 0 || best < 0 {
		t.Fatal("the full run has no Sharpe")
	}

	st := tempStore(t)
	for _, from := range []string{"live", "saved"} {
		t.Run(from, func(t *testing.T) {
			d := newStoreDriver(t, storeConfig(f, st), 160, 50)
			m := d.m
			if from == "live" {
				d.key("enter")
			} else {
				d.global("S")
				d.key("enter")
			}
			d.settle()
			r := m.state.Results
			if m.screen != common.ResultsScreen || r == nil || !r.Paged() || r.Grid.Family() != "zscore" || r.Pager(engine.FP64) == nil {
				t.Fatalf("screen %d, results %v (err %q, warn %q)", m.screen, r != nil, m.status.LastErr, m.status.Warn)
			}
			if from == "live" && m.status.Saved != "session 1" {
				t.Fatalf("saved %q", m.status.Saved)
			}

			// Robustness: the combos by their parameters.
			sm := r.Robust
			if sm == nil || sm.Selected.Label == "" || sm.WF == nil || len(sm.WF.Folds) == 0 {
				t.Fatalf("robustness summary %+v", sm)
			}
			if sm.Selected.Label != g.Label(sm.Selected.Index) || sm.PlateauBest.Label != g.Label(sm.PlateauBest.Index) {
				t.Fatalf("summary labels %q %q, grid %q %q", sm.Selected.Label, sm.PlateauBest.Label, g.Label(sm.Selected.Index), g.Label(sm.PlateauBest.Index))
			}
			d.key("o")
			txt := words(m.results.Robustness().Lines())
			want := []string{
				fmt.Sprintf("DSR %.3f for the objective's pick (max sharpe), %s (deflated Sharpe ratio)", sm.DSR.DSR, g.Label(sm.Selected.Index)),
				"each combo's 3x3x3 neighbourhood",
				"plateau best " + g.Label(sm.PlateauBest.Index) + ": sharpe",
				"raw best " + g.Label(sm.Selected.Index) + ": sharpe",
				", 3x3x3 mean",
				fmt.Sprintf("1 %d %s ", sm.WF.Folds[0].OOSBlock, g.Label(sm.WF.Folds[0].Combo.Index)),
			}
			for _, w := range want {
				if !strings.Contains(txt, w) {
					t.Errorf("the robustness pane lacks %q:\n%s", w, txt)
				}
			}
			if strings.Contains(txt, "hma 0") || strings.Contains(txt, "0 x 0") {
				t.Errorf("the robustness pane names hull's zero combo:\n%s", txt)
			}
			d.key("esc")

			// The heatmap: length x entry from the summary, exit reduced.
			for m.results.Focus() != results.HeatmapPane {
				d.key("tab")
			}
			d.key("g") // the first cell: length 10 x entry 1.5
			d.settle()
			m.View()
			v := words(strings.Split(m.results.Heatmap().View(), "\n"))
			for _, w := range []string{
				"rows length, cols entry; exit: best (max) over 0:1:0.5, as the run's summary reduces them; a paged study draws its first two axes only",
				g.Label(cellBest) + ": sharpe " + common.Value("sharpe", cellV),
			} {
				if !strings.Contains(v, w) {
					t.Errorf("the heatmap lacks %q:\n%s", w, v)
				}
			}
			if strings.Contains(v, "no heatmap") {
				t.Errorf("the heatmap shows a message:\n%s", v)
			}
			if m.state.Selected != cellBest {
				t.Errorf("the first cell selected combo %d (%s), its best is %d (%s)", m.state.Selected, g.Label(m.state.Selected), cellBest, g.Label(cellBest))
			}
			// x offers no other axes for paged data.
			d.key("x")
			if v := m.results.Heatmap().View(); !strings.Contains(v, "rows length, cols entry") {
				t.Errorf("after x the paged heatmap left its axes:\n%s", v)
			}

			// The overview draws the summary's cells too.
			d.key("z")
			if v := words(strings.Split(m.results.Heatmap().View(), "\n")); !strings.Contains(v, "overview: a cell is") || strings.Contains(v, "no heatmap") {
				t.Errorf("the paged overview:\n%s", v)
			}
			d.key("z")

			// The browser's best sharpe line names the combo.
			d.global("S")
			if v, w := m.View(), "best sharpe "+strconv.FormatFloat(bestV, 'f', 3, 64)+" at "+g.Label(best)+" (fp64)"; !strings.Contains(v, w) {
				t.Errorf("the sessions browser lacks %q:\n%s", w, v)
			}
		})
	}
}
