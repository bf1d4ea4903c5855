package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/tui/common"
	"sweepbench/tui/screens/results"
)

func TestErrorsShown(t *testing.T) {
	t.Run("a missing file", func(t *testing.T) {
		f := smallFlags()
		f.Data = "/nonexistent/bars.csv"
		d := newDriver(t, f, 80, 24)
		if !strings.Contains(d.m.status.LastErr, "/nonexistent/bars.csv") || !strings.Contains(d.m.View(), "error:") {
			t.Fatalf("last error %q", d.m.status.LastErr)
		}
	})
	t.Run("an unavailable backend on the command line", func(t *testing.T) {
		f := smallFlags()
		f.Backend = "cuda"
		d := newDriver(t, f, 80, 24)
		if !strings.Contains(d.m.status.LastErr, "backend cuda: not available here: no NVIDIA driver found") {
			t.Fatalf("last error %q", d.m.status.LastErr)
		}
	})
	t.Run("a timeframe finer than the data", func(t *testing.T) {
		f := smallFlags()
		f.Data, f.Timeframe = "../testdata/data/binance_klines_BTCUSDT-1h-2023-03.json.gz", "5m"
		d := newDriver(t, f, 100, 30)
		if d.m.setup.Form().Valid() || !strings.Contains(d.m.View(), "timeframe 5m: ") {
			t.Fatalf("resampling 1h bars to 5m should fail with the engine's error:\n%s", d.m.View())
		}
	})
	t.Run("a panic in a component", func(t *testing.T) {
		d := newDriver(t, smallFlags(), 80, 24)
		d.key("enter")
		d.m.screens[common.ResultsScreen] = (*results.Model)(nil) // the next key to the results dereferences it
		d.key("j")
		if !strings.Contains(d.m.status.LastErr, "internal error") {
			t.Fatalf("last error %q", d.m.status.LastErr)
		}
	})
	t.Run("a panic in a command", func(t *testing.T) {
		msg := common.Guard(func() tea.Msg { panic("boom") }, func(err error) tea.Msg { return err })()
		if err, ok := msg.(error); !ok || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("guard returned %v", msg)
		}
	})
}
