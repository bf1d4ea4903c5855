package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/tui/screens/results"
)

// TestTabBarKeepsSetup: at 80x24 the results screen shows one pane at a
// time and its tab bar lists the panes; the Setup tab (where esc goes)
// and the Results tab stay beside them, in colour and with NO_COLOR (whose
// active tabs take brackets: it once dropped Setup for them). The other
// screens' names give way first, then the product's name.
func TestTabBarKeepsSetup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile termenv.Profile
	}{
		{"NO_COLOR", termenv.Ascii},
		{"colour", termenv.TrueColor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(context.Background(), Config{Registry: testRegistry(), Flags: smallFlags()}, tc.profile, true, true)
			d := &driver{t: t, m: m}
			d.run(m.Init())
			d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
			d.key("enter")
			d.settle()
			for p := range results.NumPanes {
				m.results.SetFocus(p)
				bar := strings.SplitN(m.View(), "\n", 2)[0]
				for _, want := range append([]string{"Setup", "Results"}, results.PaneNames[:]...) {
					if !strings.Contains(bar, want) {
						t.Fatalf("%s focused: the tab bar lacks %q:\n%q", results.PaneNames[p], want, bar)
					}
				}
				if strings.Contains(bar, "…") || strings.Contains(bar, "...") {
					t.Fatalf("%s focused: the tab bar is cut:\n%q", results.PaneNames[p], bar)
				}
			}
			if tc.profile == termenv.Ascii {
				m.results.SetFocus(results.HeatmapPane)
				if bar := strings.SplitN(m.View(), "\n", 2)[0]; !strings.Contains(bar, "[Results]") || !strings.Contains(bar, "[Heatmap]") {
					t.Fatalf("the active screen and pane are not marked:\n%q", bar)
				}
			}
		})
	}
}
