package tui

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestWindowSizeClamped: a terminal larger than MaxWidth x MaxHeight (a
// client may claim 65535x65535, or 2^32-1 over SSH) is drawn at most that
// large, and the view is that size; a terminal within the bounds is drawn
// at its own size.
func TestWindowSizeClamped(t *testing.T) {
	if MaxWidth != 1000 || MaxHeight != 500 {
		t.Fatalf("MaxWidth x MaxHeight = %dx%d, want 1000x500", MaxWidth, MaxHeight)
	}
	for _, c := range []struct{ w, h, wantW, wantH int }{
		{65535, 65535, 1000, 500},
		{1<<32 - 1, 1<<32 - 1, 1000, 500},
		{100000, 30, 1000, 30},
		{120, 100000, 120, 500},
		{1000, 500, 1000, 500},
		{100, 30, 100, 30},
	} {
		t.Run(fmt.Sprintf("%dx%d", c.w, c.h), func(t *testing.T) {
			d := newDriver(t, smallFlags(), 80, 24)
			d.send(tea.WindowSizeMsg{Width: c.w, Height: c.h})
			if got, want := fmt.Sprintf("%dx%d", d.m.ctx.Width, d.m.ctx.Height), fmt.Sprintf("%dx%d", c.wantW, c.wantH); got != want {
				t.Fatalf("the workbench is %s, want %s", got, want)
			}
			checkSize(t, d.m.View(), c.wantW, c.wantH)
		})
	}
}
