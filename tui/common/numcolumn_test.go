package common

import (
	"math"
	"slices"
	"testing"
)

// TestFitNumbers: hand-made columns, each cell written as a reader would
// by hand: counts whole with separators, one precision per column, no
// negative zero, the width the widest cell.
func TestFitNumbers(t *testing.T) {
	cases := []struct {
		name        string
		vals        []float64
		count, plus bool
		want        []string
		width       int
	}{
		{"count", []float64{3923, 12, 0}, true, false, []string{"3,923", "12", "0"}, 5},
		{"count delta", []float64{-1410, 2, 0}, true, false, []string{"-1,410", "2", "0"}, 6},
		{"dn", []float64{-2, 0, 14}, true, true, []string{"-2", "+0", "+14"}, 3},
		{"one precision", []float64{0.5, 12.25, -0.00001}, false, false, []string{"0.500", "12.250", "0.000"}, 6},
		{"no negative zero", []float64{-0.000001, 0.1234}, false, false, []string{"0.00000", "0.12340"}, 7},
		{"sharpe", []float64{-274.14, -71.798, 3.5}, false, false, []string{"-274.14", "-71.80", "3.50"}, 7},
		{"separators", []float64{123456.7, -5}, false, false, []string{"123,457", "-5"}, 7},
		{"zeros", []float64{0, 0}, false, false, []string{"0", "0"}, 1},
		{"tiny", []float64{3.13e-7, -1e-8}, false, false, []string{"3.13e-07", "-1.00e-08"}, 9},
		{"non-finite", []float64{1.5, math.Inf(-1), math.NaN()}, false, false, []string{"1.5000", "-inf", "nan"}, 6},
		{"empty", nil, false, false, nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := FitNumbers(slices.Values(c.vals), c.count, c.plus)
			for i, v := range c.vals {
				if got := f.Format(v); got != c.want[i] {
					t.Errorf("Format(%g) = %q, want %q (format %+v)", v, got, c.want[i], f)
				}
				if n := len(f.Format(v)); n > f.Width {
					t.Errorf("Format(%g) is %d wide, the column %d", v, n, f.Width)
				}
			}
			if f.Width != c.width {
				t.Errorf("width %d, want %d", f.Width, c.width)
			}
		})
	}
}

// TestIsCount: the integer columns, by the engine's metric table.
func TestIsCount(t *testing.T) {
	for _, n := range []string{"total_trades", "long_bars", "short_bars", "flat_bars", ColDn, ColFlips} {
		if !IsCount(n) {
			t.Errorf("%s is a count", n)
		}
	}
	for _, n := range []string{"sharpe", "total_return", ColDPnL, "nope"} {
		if IsCount(n) {
			t.Errorf("%s is no count", n)
		}
	}
}
