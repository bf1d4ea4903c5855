package tui

import (
	"context"
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"
)

// offlineMetal is the Metal backend as on Linux: never available.
type offlineMetal struct{ offline }

func (offlineMetal) Name() string     { return "metal" }
func (offlineMetal) Available() error { return errors.New("Metal is available on macOS only") }

// TestSetupAt80x24: at 80x24 on a machine without a GPU (cuda and metal
// unavailable: two notes), the setup screen shows the three datasets and
// the loaded one's three summary lines, every row of the form (bars/year,
// time zone and LEAN asset included), the grid, the estimate, the run
// button and both notes, the last note on the pane's last line.
func TestSetupAt80x24(t *testing.T) {
	reg := testRegistry()
	reg.Register(offlineMetal{})
	m := newModel(context.Background(), Config{Registry: reg, Flags: smallFlags()}, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	v := m.View()
	checkSize(t, v, 80, 24)
	for _, want := range []string{
		"embedded:filusdt-1m", "embedded:btcusdt-1m", "Open a file",
		"embedded:btcusdt-1m[:5000] | layout csv", "5,000 bars, 2025-06-01 17:23 .. 2025-06-05 04:42 UTC", "gaps 0 | price 103659.9",
		"HMA range", "HMA3 range", "fee/side", "mode", "source", "timeframe", "head bars",
		"backend", "precision", "WMA (fp32)", "borderline", "bars/year", "time zone", "LEAN asset",
		"grid 3 x 3 = 9 combos", "estimate:", "enter runs the sweep",
		"cuda unavailable: no NVIDIA driver found", "metal unavailable: Metal is available on macOS only",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("%q is not on the screen", want)
		}
	}
	lines := strings.Split(v, "\n")
	// The form's border is on line 22 (0-based), the status bar on 23:
	// the last note is on the line above the border.
	if !strings.Contains(lines[21], "metal unavailable") || !strings.HasPrefix(lines[22], "#===") {
		t.Errorf("the last note is not the pane's last line:\n%s", v)
	}
}
