package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/tui/common"
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

// TestHelpPerScreen: the help overlay is generated from the key map of
// the screen on display, under the workbench's own keys: the sessions
// browser's keys on the sessions screen, the panes' on the results.
func TestHelpPerScreen(t *testing.T) {
	st := tempStore(t)
	seedStore(t, st)
	d := newStoreDriver(t, storeConfig(smallFlags(), st), 120, 40)
	m := d.m
	help := func() string {
		d.key("?")
		v := m.View()
		d.key("?")
		return v
	}
	for _, tc := range []struct {
		name     string
		go_      func()
		has, not []string
	}{
		{"setup", func() { d.key("esc") }, []string{"run", "saved sessions", "quit (anywhere)"}, []string{"mark (2 to compare)", "heat scale"}},
		{"sessions", func() { d.key("S") }, []string{"mark (2 to compare)", "compare marked", "resume", "saved sessions"}, []string{"heat scale"}},
		{"results", func() { d.key("esc", "tab", "enter"); d.settle() }, []string{"heat scale", "robustness pane", "next flip", "bench (ladder)"}, []string{"mark (2 to compare)"}},
	} {
		tc.go_()
		v := help()
		for _, want := range tc.has {
			if !strings.Contains(v, want) {
				t.Errorf("%s: the help lacks %q:\n%s", tc.name, want, v)
			}
		}
		for _, bad := range tc.not {
			if strings.Contains(v, bad) {
				t.Errorf("%s: the help has another screen's %q:\n%s", tc.name, bad, v)
			}
		}
	}
	if m.screen != common.ResultsScreen {
		t.Fatalf("screen %d, want the results", m.screen)
	}
}
