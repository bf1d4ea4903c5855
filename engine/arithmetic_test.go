package engine

import (
	"context"
	"errors"
	"testing"
)

// withoutArithmetic runs f with no Arithmetic registered (this test binary's
// external tests import package reference, which registers one).
func withoutArithmetic(t *testing.T, f func()) {
	t.Helper()
	old := registered.Load()
	registered.Store(nil)
	defer registered.Store(old)
	f()
}

// TestNoArithmetic: what needs the CPU arithmetic says ErrNoArithmetic when
// none is registered, rather than panicking.
func TestNoArithmetic(t *testing.T) {
	bars := closeBars(make([]float64, 200))
	for i := range bars.Close {
		bars.Close[i] = 100 + float64(i%7)
	}
	g := Grid{HMA: Range{10, 20, 10}, HMA3: Range{12, 24, 12}}
	p := Params{Fee: DefaultFee, BarsPerYear: 525600}
	job := &Job{Bars: bars, Grid: g, Params: p}
	ctx := context.Background()
	withoutArithmetic(t, func() {
		if _, err := CPU(); !errors.Is(err, ErrNoArithmetic) {
			t.Errorf("CPU: %v", err)
		}
		if _, err := IndicatorsOf[float32](ctx, job); !errors.Is(err, ErrNoArithmetic) {
			t.Errorf("IndicatorsOf: %v", err)
		}
		run := &Run{Precision: FP64, Grid: g, Status: StatusComplete}
		if _, err := CompareRuns(ctx, job, run, &Run{Precision: FP32, Grid: g, Status: StatusComplete}, 0, nil); !errors.Is(err, ErrNoArithmetic) {
			t.Errorf("CompareRuns: %v", err)
		}
		if _, err := InspectCombo(ctx, bars, g.At(0), p, FP64, Direct); !errors.Is(err, ErrNoArithmetic) {
			t.Errorf("InspectCombo: %v", err)
		}
	})
}
