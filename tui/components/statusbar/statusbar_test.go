package statusbar

import (
	"strings"
	"testing"

	"github.com/muesli/termenv"

	"sweepbench/engine/data"
	"sweepbench/tui/common"
	"sweepbench/tui/theme"
)

// TestNoSegmentCutMidWord: beside a long note at 80 columns the status
// bar drops whole segments (backend, session) rather than cut one mid-word
// (found by a fresh-user trial: "session 2 · r…").
func TestNoSegmentCutMidWord(t *testing.T) {
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true)}
	state := &common.RunState{Dataset: &data.Dataset{Info: data.Info{Name: "embedded:filusdt-1m"}}, Backend: "reference"}
	status := &common.Status{Saved: "session 2", Info: "cancelled: showing the 288 combos that completed of 400 in each lane"}
	m := New(ctx, state, status)
	m.SetWidth(80)
	v := m.View()
	left := strings.SplitN(strings.TrimSpace(v), "  ", 2)[0]
	for _, seg := range strings.Split(left, " | ") {
		if seg != "embedded:filusdt-1m" && seg != "session 2" && seg != "reference" {
			t.Errorf("segment %q cut: %q", seg, v)
		}
	}
	if !strings.Contains(v, "cancelled: showing") {
		t.Errorf("the note is not shown: %q", v)
	}
}
