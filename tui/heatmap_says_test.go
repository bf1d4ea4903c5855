package tui

import (
	"regexp"
	"testing"

	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

// TestHeatmapSaysWhatItShows: a grid larger than the pane scrolls with the
// cursor, and the legend says which rows and columns are in view.
func TestHeatmapSaysWhatItShows(t *testing.T) {
	f := smallFlags()
	f.Head = 1500
	f.HMA, f.HMA3 = "10:70:2", "12:120:2" // 31 x 55 combos
	d := newDriver(t, f, 80, 24)
	m := d.m
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen {
		t.Fatalf("screen %d after the run (last error %q)", m.screen, m.status.LastErr)
	}
	d.key("tab", "tab") // the heatmap
	if m.results.Focus() != results.HeatmapPane {
		t.Fatalf("focus %s", results.PaneNames[m.results.Focus()])
	}
	v := m.View()
	re := regexp.MustCompile(`shown: hma (\d+)\.\.(\d+) of 10\.\.70, hma3 (\d+)\.\.(\d+) of 12\.\.120`)
	if !re.MatchString(v) {
		t.Fatalf("the clipped heatmap does not say what it shows:\n%s", v)
	}
	d.key("G") // the last combo: the view follows it
	if got := re.FindStringSubmatch(m.View()); got == nil || got[2] != "70" || got[4] != "120" {
		t.Fatalf("after G the view should end at hma 70, hma3 120: %v\n%s", got, m.View())
	}
}
