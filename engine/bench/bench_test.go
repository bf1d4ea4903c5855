package bench

import (
	"context"
	"errors"
	"slices"
	"testing"

	"sweepbench/engine"
)

func TestSkipNotes(t *testing.T) {
	res := []RungResult{{ID: "M3"}, {ID: "M5", Skipped: "no driver"}, {ID: "M6", Skipped: "no driver"},
		{ID: "M7", Skipped: "no driver"}, {ID: "Metal", Skipped: "macOS only"}}
	got := SkipNotes(res)
	want := []string{"M5, M6, M7 skipped: no driver", "Metal skipped: macOS only"}
	if !slices.Equal(got, want) {
		t.Errorf("SkipNotes = %q, want %q", got, want)
	}
}

// TestRungNaiveNoArithmetic: with no Arithmetic registered, RungNaive says
// ErrNoArithmetic rather than panicking (was part of engine's
// TestNoArithmetic).
func TestRungNaiveNoArithmetic(t *testing.T) {
	if old, err := engine.CPU(); err == nil {
		engine.RegisterArithmetic(nil)
		defer engine.RegisterArithmetic(old)
	}
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 20, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 24, Step: 12}}
	job := &engine.Job{Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}}
	if _, _, err := RungNaive(context.Background(), job); !errors.Is(err, engine.ErrNoArithmetic) {
		t.Errorf("RungNaive: %v", err)
	}
}
