package strategy

import (
	"math"
	"reflect"
	"testing"
)

func TestDivergences(t *testing.T) {
	// bar:     0  1  2  3  4  5  6  7  8  9
	// p64:     1  1  0  0 -1 -1  1  1  0  1
	// p32:     0  1  0  1  1 -1  0 -1 -1  0
	// differ:  x        x  x     x  x  x  x
	// Runs: at the start {0, 1}; {3, 2} (two different disagreements, one
	// run); {6, 4} to the end, one equal bar after the one before. Root
	// margins: 2e-5 (non-borderline), 5e-6 (borderline), 1e-5 = tol (not
	// under it: non-borderline). Every other bar's margin is 0, so reading
	// any bar but the root would make it borderline.
	p64 := []State{1, 1, 0, 0, -1, -1, 1, 1, 0, 1}
	p32 := []State{0, 1, 0, 1, 1, -1, 0, -1, -1, 0}
	m := make([]float64, 10)
	m[0], m[3], m[6] = 2e-5, 5e-6, 1e-5
	ds := Divergences(p64, p32, m, 1e-5)
	want := []Divergence{{0, 1, 2e-5, false}, {3, 2, 5e-6, true}, {6, 4, 1e-5, false}}
	if !reflect.DeepEqual(ds, want) {
		t.Errorf("Divergences = %+v, want %+v", ds, want)
	}
	cp := JudgeCombo(ds)
	if cp.FlipBars != 7 || cp.Divergences != 3 || cp.NonBorderline != 2 || !cp.Collapsed || cp.Sensitive ||
		cp.Worst == nil || *cp.Worst != want[2] {
		t.Errorf("JudgeCombo = %+v (worst %+v), want 7 bars, 3, 2 non-borderline, collapsed, worst %+v", cp, cp.Worst, want[2])
	}
	cp.Worst.Root = 99
	if ds[2].Root != 6 {
		t.Error("Worst points into the slice judged")
	}

	// Equal positions: none; JudgeCombo of none is the zero ComboParity.
	if ds := Divergences(p64, p64, m, 1e-5); len(ds) != 0 {
		t.Errorf("equal positions: %+v", ds)
	}
	if cp := JudgeCombo(nil); !reflect.DeepEqual(cp, ComboParity{}) {
		t.Errorf("JudgeCombo(nil) = %+v", cp)
	}

	// Every bar differs: one run from the start to the end; a NaN root
	// margin is not borderline.
	ds = Divergences([]State{1, 1, 1}, []State{-1, 0, -1}, []float64{math.NaN(), 0, 0}, 1e-5)
	if len(ds) != 1 || ds[0].Root != 0 || ds[0].Bars != 3 || !math.IsNaN(ds[0].Margin) || ds[0].Borderline {
		t.Errorf("all differ: %+v", ds)
	}

	// Only borderline: sensitive, worst the longest (the earliest of the
	// longest).
	bl := []Divergence{{2, 1, 1e-6, true}, {5, 3, 2e-6, true}, {12, 3, 0, true}}
	cp = JudgeCombo(bl)
	if cp.FlipBars != 7 || cp.Divergences != 3 || cp.NonBorderline != 0 || cp.Collapsed || !cp.Sensitive || *cp.Worst != bl[1] {
		t.Errorf("borderline only: %+v (worst %+v)", cp, cp.Worst)
	}
	// A short non-borderline is worse than a long borderline.
	mixed := []Divergence{{0, 5, 1e-7, true}, {9, 1, 3e-3, false}, {20, 9, 0, true}}
	cp = JudgeCombo(mixed)
	if cp.FlipBars != 15 || cp.NonBorderline != 1 || !cp.Collapsed || cp.Sensitive || *cp.Worst != mixed[1] {
		t.Errorf("mixed: %+v (worst %+v)", cp, cp.Worst)
	}

	defer func() {
		if recover() == nil {
			t.Error("mismatched lengths: no panic")
		}
	}()
	Divergences(p64, p32[:9], m, 1e-5)
}
