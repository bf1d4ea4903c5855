package engine

import (
	"slices"
	"testing"
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
