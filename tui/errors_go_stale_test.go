package tui

import (
	"strings"
	"testing"

	"sweepbench/tui/common"
)

// TestStaleErrors: an error goes once its cause is fixed or the screen
// changes; the form names its fields by their labels.
func TestStaleErrors(t *testing.T) {
	t.Run("a form error goes once the field is fixed", func(t *testing.T) {
		f := smallFlags()
		f.HMA = "10:30:0"
		d := newDriver(t, f, 80, 24)
		m := d.m
		d.key("enter")
		if m.screen != common.SetupScreen || !strings.HasPrefix(m.status.LastErr, "HMA range") || strings.Contains(m.status.LastErr, "--hma") {
			t.Fatalf("screen %d, last error %q", m.screen, m.status.LastErr)
		}
		d.key("backspace", "10")
		if v := m.setup.Form().Values()["hma"]; v != "10:30:10" || !m.setup.Form().Valid() {
			t.Fatalf("hma %q valid %v", v, m.setup.Form().Valid())
		}
		if m.status.LastErr != "" {
			t.Fatalf("the fixed error stays: %q", m.status.LastErr)
		}
	})
	t.Run("a filter error goes when fixed, and on another screen", func(t *testing.T) {
		d := newDriver(t, smallFlags(), 80, 24)
		m := d.m
		d.key("enter")
		if m.screen != common.ResultsScreen {
			t.Fatalf("screen %d (last error %q)", m.screen, m.status.LastErr)
		}
		d.key("/", "sharpe>", "enter")
		if !strings.Contains(m.status.LastErr, "filter") {
			t.Fatalf("last error %q", m.status.LastErr)
		}
		// / again edits the broken text (not appended to, ctrl+u clears).
		d.key("/")
		if got := m.results.Metrics().Editing(); !got || !strings.Contains(m.View(), "/sharpe>") {
			t.Fatalf("editing %v:\n%s", got, m.View())
		}
		d.key("1", "enter")
		if m.status.LastErr != "" || !strings.Contains(m.View(), "filter: sharpe>1") {
			t.Fatalf("last error %q:\n%s", m.status.LastErr, m.View())
		}
		d.key("/", "x", "enter")
		if m.status.LastErr == "" {
			t.Fatal("no error for a bad filter")
		}
		d.key("esc") // to the Setup screen
		if m.screen != common.SetupScreen || m.status.LastErr != "" {
			t.Fatalf("screen %d, last error %q", m.screen, m.status.LastErr)
		}
	})
}
