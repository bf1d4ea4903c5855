package tui

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/robust"
	"sweepbench/engine/text"
	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

// cliSummary is the robustness summary `run` computes for f's study: its
// Spec built, run and analysed through the same functions as cmd_run.go.
func cliSummary(t *testing.T, f Flags) *robust.Summary {
	t.Helper()
	ctx := context.Background()
	s, err := f.Spec.Build(testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(ctx, s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt, err := robust.OptionsFor(f.Spec)
	if err != nil {
		t.Fatal(err)
	}
	opt.Bars = &s.Dataset.Bars
	r, err := robust.Analyse(ctx, rep, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r.Summary()
}

// words is a pane's lines as one string of words (the pane wraps).
func words(lines []string) string { return strings.Join(strings.Fields(strings.Join(lines, " ")), " ") }

// TestRobustnessPane: a study with blocks shows its robustness section in
// its own pane (o from any results pane, or tab): PBO with its verdict,
// splits, degradation and loss probability, the logit histogram, the DSR,
// the plateau best beside the raw best, the walk-forward's folds and the
// stitched out-of-sample equity chart, every figure the one `run`
// computes for the same study; the pane scrolls (G to its end, g back);
// esc returns to the pane o came from; the key is in the help; the
// heatmap marks the plateau best.
func TestRobustnessPane(t *testing.T) {
	f := robustFlags()
	want := cliSummary(t, f)
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := newDriver(t, f, sz[0], sz[1])
			m := d.m
			d.key("enter")
			d.settle()
			if m.screen != common.ResultsScreen || m.state.Results.Robust == nil {
				t.Fatalf("screen %d, robustness %v (err %q, warning %q)", m.screen, m.state.Results.Robust != nil, m.status.LastErr, m.status.Warn)
			}
			got := m.state.Results.Robust
			if *got.PBO != *want.PBO || got.DSR.DSR != want.DSR.DSR || got.WF.TotalReturn != want.WF.TotalReturn ||
				len(got.WF.Equity) != len(want.WF.Equity) || got.PlateauBest != want.PlateauBest {
				t.Fatalf("the workbench's summary differs from run's:\n%+v\n%+v", got, want)
			}
			// The stitched curve ends at the folds' product.
			if end := got.WF.Equity[len(got.WF.Equity)-1].Equity; math.Abs(end-(1+got.WF.TotalReturn)) > 1e-12*(1+got.WF.TotalReturn) {
				t.Errorf("the stitched curve ends at %.17g, the stitched return is %.17g", end, got.WF.TotalReturn)
			}

			d.key("o")
			if m.results.Focus() != results.RobustnessPane {
				t.Fatalf("o focused pane %d", m.results.Focus())
			}
			checkSize(t, m.View(), sz[0], sz[1])
			txt := words(m.results.Robustness().Lines())
			folds := ""
			for i, fd := range want.WF.Folds {
				folds += fmt.Sprintf("%d %d %d x %d %s %s %.4f ", i+1, fd.OOSBlock, fd.Combo.HMA, fd.Combo.HMA3,
					gstr(fd.ISObjective), gstr(fd.OOSObjective), 100*fd.OOSReturn)
			}
			top := 0
			for _, c := range want.LogitHistogram.Counts {
				top = max(top, c)
			}
			for _, w := range []string{
				"8 blocks of bar returns", "objective max sharpe, 9 trials",
				fmt.Sprintf("PBO %.3f over 70 splits", *want.PBO), want.PBOVerdict,
				fmt.Sprintf("slope %.3g", *want.Slope), fmt.Sprintf("R^2 %.3g", *want.R2),
				fmt.Sprintf("probability of out-of-sample loss: %.0f%%", 100**want.ProbOOSLoss),
				fmt.Sprintf("%d|", top), "logit of the in-sample best's out-of-sample rank",
				// Trial 2, item 11: the objective's pick, not the table's cursor.
				fmt.Sprintf("DSR %.3f for the objective's pick (max sharpe), hma %d x hma3 %d", want.DSR.DSR, want.Selected.HMA, want.Selected.HMA3),
				fmt.Sprintf("Sharpe %s annualised (%s per bar)", strconvG(want.DSR.SharpeAnnual, 4), strconvG(want.DSR.SharpePerBar, 3)),
				"DSR is the probability that its true Sharpe exceeds what the",
				fmt.Sprintf("plateau best hma %d x hma3 %d", want.PlateauBest.HMA, want.PlateauBest.HMA3),
				fmt.Sprintf("raw best hma %d x hma3 %d", want.Selected.HMA, want.Selected.HMA3),
				"walk-forward rolling:4, 4 folds",
				fmt.Sprintf("stitched out-of-sample return %s%%", text.FormatFloat(math.Round(1e4*want.WF.TotalReturn)/100)),
				strings.TrimSpace(folds),
				fmt.Sprintf("stitched out-of-sample equity, bars %s to %s", text.Thousands(want.WF.Equity[0].Bar),
					text.Thousands(want.WF.Equity[len(want.WF.Equity)-1].Bar)),
			} {
				if !strings.Contains(txt, w) {
					t.Errorf("the pane lacks %q:\n%s", w, strings.Join(m.results.Robustness().Lines(), "\n"))
				}
			}
			// Scrolling: the end holds the equity chart, g goes back to PBO.
			d.key("G")
			m.View()
			if v := m.results.Robustness().View(); !strings.Contains(v, "stitched out-of-sample equity") || strings.Contains(v, "PBO 0") {
				t.Errorf("G does not show the pane's end:\n%s", v)
			}
			d.key("g")
			m.View()
			if v := m.results.Robustness().View(); !strings.Contains(v, "PBO ") {
				t.Errorf("g does not show the pane's top:\n%s", v)
			}
			d.key("esc")
			if m.results.Focus() != results.MetricsPane {
				t.Errorf("esc went to pane %d, not the table o came from", m.results.Focus())
			}
			// The heatmap marks the plateau best and names it.
			m.results.SetFocus(results.HeatmapPane)
			mark := fmt.Sprintf("P plateau best %d x %d", want.PlateauBest.HMA, want.PlateauBest.HMA3)
			if v := m.View(); !strings.Contains(v, mark) {
				t.Errorf("the heatmap lacks %q:\n%s", mark, v)
			}
			// The key is in the help.
			d.key("?")
			if v := m.View(); !strings.Contains(v, "robustness pane") {
				t.Errorf("the help lacks the robustness key:\n%s", v)
			}
		})
	}
}

func gstr(v float64) string { return strconvG(v, 4) }

func strconvG(v float64, prec int) string { return fmt.Sprintf("%.*g", prec, v) }

// TestRobustnessPaneWithoutBlocks: a study without blocks has the pane,
// which says how to get the statistics (the form's field, --blocks).
func TestRobustnessPaneWithoutBlocks(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	d.key("enter")
	for range int(results.RobustnessPane) {
		d.key("tab")
	}
	if d.m.results.Focus() != results.RobustnessPane {
		t.Fatalf("tab reached pane %d", d.m.results.Focus())
	}
	txt := words(d.m.results.Robustness().Lines())
	for _, w := range []string{"No robustness statistics for this study", "set blocks in the form", "sweepbench tui --blocks 16"} {
		if !strings.Contains(txt, w) {
			t.Errorf("the pane lacks %q:\n%s", w, txt)
		}
	}
	if !strings.Contains(d.m.View(), "[Robustness]") {
		t.Errorf("the pane's tab is not shown:\n%s", d.m.View())
	}
}
