package statusbar

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"sweepbench/engine/data"
	"sweepbench/tui/common"
	"sweepbench/tui/keys"
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

// sessionsKeys is the Sessions screen's short help, in its order.
type sessionsKeys []key.Binding

func (k sessionsKeys) ShortHelp() []key.Binding  { return k }
func (k sessionsKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k} }

// TestKeysGetTheRoomOfALongLeftPart (trial 2, item 9): at 120 columns
// beside a long dataset label, session, backend and device, the Sessions
// screen's footer showed "enter select/open …" and ~27 blank columns; it
// drops the device and backend (never the dataset or session) while that
// shows more keys, down to the browser's own (space mark, R resume).
func TestKeysGetTheRoomOfALongLeftPart(t *testing.T) {
	for _, plain := range []bool{true, false} {
		keysGetTheRoom(t, plain)
	}
}

func keysGetTheRoom(t *testing.T, plain bool) {
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, plain)}
	state := &common.RunState{Dataset: &data.Dataset{Info: data.Info{Name: "embedded:btcusdt-1m[:3000]"}},
		Backend: "reference", Device: "AMD EPYC (2 threads)"}
	status := &common.Status{Saved: "session 1"}
	k := keys.Default()
	m := New(ctx, state, status)
	mark, compare := k.Mark, k.Compare // as the Sessions screen shortens them
	mark.SetHelp("space", "mark")
	compare.SetHelp("c", "compare")
	m.SetKeys(sessionsKeys{k.Select, mark, compare, k.Delete, k.Resume, k.Back, k.Help})
	m.SetWidth(120)
	v := m.View()
	if w := ansi.StringWidth(v); w != 120 {
		t.Errorf("width %d, want 120: %q", w, v)
	}
	for _, s := range []string{"embedded:btcusdt-1m[:3000]", "session 1", "enter select/open", "space mark", "c compare", "x/del remove", "R resume"} {
		if !strings.Contains(v, s) {
			t.Errorf("plain %v: footer does not show %q: %q", plain, s, v)
		}
	}
	// With room for every key, the left part keeps all its segments.
	m.SetWidth(220)
	if v := m.View(); !strings.Contains(v, "AMD EPYC (2 threads)") || !strings.Contains(v, "? ") {
		t.Errorf("at 220 columns: %q", v)
	}
}
