package report

import (
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"

	"sweepbench/tui/components/heatmap"
)

// TestQuantileScale: the edges are type-7 quantiles worked by hand, NaN
// and Inf are skipped, and the levels are the workbench heatmap's for the
// same values (the report and the terminal colour a cell alike).
func TestQuantileScale(t *testing.T) {
	vals := []float64{4, math.NaN(), 1, 3, math.Inf(1), 2, 5}
	s := QuantileScale(vals, 4)
	// 1..5 sorted: the p quantile is 1 + 4p.
	want := []float64{1, 2, 3, 4, 5}
	for i, e := range s.Edges {
		if e != want[i] {
			t.Errorf("edge %d = %g, want %g", i, e, want[i])
		}
	}
	tui := heatmap.NewScale(heatmap.Quantile, vals, 4)
	for _, v := range []float64{-1, 1, 1.5, 2, 2.5, 3, 4, 4.99, 5, 6} {
		if got, want := s.Level(v), tui.Level(v); got != want {
			t.Errorf("level of %g: %d, the workbench's %d", v, got, want)
		}
	}
	if s := QuantileScale([]float64{7, 7, 7}, Levels); s.Level(7) != (Levels-1)/2 {
		t.Errorf("one distinct value: level %d, want the middle", s.Level(7))
	}
}

// TestLogBins: four bins a decade, the values counted where log10 puts
// them, a tolerance beyond the values widening the span, 0 not drawn.
func TestLogBins(t *testing.T) {
	bins, skipped := logBins([]float64{1e-7, 2e-7, 9e-7, 0}, 1e-5)
	if skipped != 1 {
		t.Errorf("skipped %d, want 1 (the 0)", skipped)
	}
	// Decades 1e-7 .. 1e-5 inclusive of the tolerance's bin: 9 bins.
	if len(bins) != 9 || math.Abs(bins[0].Min-1e-7) > 1e-20 || bins[8].Max < 1e-5 {
		t.Fatalf("bins %v", bins)
	}
	// 1e-7 and 2e-7 (log10 -6.70: bin 1) and 9e-7 (-6.05: bin 3).
	for i, w := range []float64{1, 1, 0, 1, 0, 0, 0, 0, 0} {
		if bins[i].Weight != w {
			t.Errorf("bin %d [%g, %g) holds %g, want %g", i, bins[i].Min, bins[i].Max, bins[i].Weight, w)
		}
	}
}

// TestReduce: a long curve keeps its first and last points and its
// extremes; a short one every point.
func TestReduce(t *testing.T) {
	n := 100_000
	x, y := make([]float64, n), make([]float64, n)
	for i := range y {
		x[i], y[i] = float64(i), math.Sin(float64(i)/1000)
	}
	y[31_337], y[77_777] = 5, -5
	xy := reduce(x, y)
	if len(xy) > MaxCurvePoints {
		t.Errorf("%d points, at most %d", len(xy), MaxCurvePoints)
	}
	if xy[0].X != 0 || xy[len(xy)-1].X != float64(n-1) {
		t.Errorf("ends %v .. %v", xy[0], xy[len(xy)-1])
	}
	found := func(p plotter.XY) bool {
		for _, q := range xy {
			if q == p {
				return true
			}
		}
		return false
	}
	if !found(plotter.XY{X: 31_337, Y: 5}) || !found(plotter.XY{X: 77_777, Y: -5}) {
		t.Error("the extremes are lost")
	}
	if got := reduce(x[:10], y[:10]); len(got) != 10 {
		t.Errorf("a short curve: %d points", len(got))
	}
}

// TestNiceTicks: labels tell ticks apart with the fewest digits, plainly.
func TestNiceTicks(t *testing.T) {
	var labels []string
	for _, tk := range (niceTicks{}).Ticks(4.1009, 4.1017) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	seen := map[string]bool{}
	for _, l := range labels {
		if seen[l] {
			t.Errorf("label %q twice: %q", l, labels)
		}
		seen[l] = true
	}
	if got := label(100, 1); got != "100" {
		t.Errorf("label(100) = %q", got)
	}
	if got := decade(-7); got != "1e-07" {
		t.Errorf("decade(-7) = %q", got)
	}
}
