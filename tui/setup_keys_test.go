package tui

import (
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

func TestSetupKeys(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	m := d.m
	if m.state.Raw == nil || m.setup.Pane() != 1 {
		t.Fatalf("--data should load at start and focus the form (raw %v, focus %d)", m.state.Raw != nil, m.setup.Pane())
	}
	cases := []struct {
		name  string
		keys  []string
		check func(t *testing.T)
	}{
		{"tab moves to the dataset pane", []string{"tab"}, func(t *testing.T) {
			if m.setup.Pane() != 0 {
				t.Fatalf("focus %d, want the dataset pane", m.setup.Pane())
			}
		}},
		{"shift+tab comes back to the form", []string{"shift+tab"}, func(t *testing.T) {
			if m.setup.Pane() != 1 || !m.setup.Form().Typing() {
				t.Fatalf("focus %d typing %v, want the form's first field", m.setup.Pane(), m.setup.Form().Typing())
			}
		}},
		// Issue 15, defect 4: in a text field every character is text, q
		// and S and ? too (a letter in a range is the range's error).
		{"q, S and ? are typed into a range", []string{"q", "S", "?"}, func(t *testing.T) {
			if v := m.setup.Form().Values()[form.HMA]; v != "10:30:10qS?" {
				t.Fatalf("hma %q, want the keys typed", v)
			}
			if m.quitting || m.showHelp || m.screen != common.SetupScreen || m.setup.Form().Valid() {
				t.Fatalf("quitting %v, help %v, screen %d, valid %v: want the keys in the field and its error shown", m.quitting, m.showHelp, m.screen, m.setup.Form().Valid())
			}
		}},
		{"backspace takes them back", []string{"backspace", "backspace", "backspace"}, func(t *testing.T) {
			if v := m.setup.Form().Values()[form.HMA]; v != "10:30:10" || !m.setup.Form().Valid() {
				t.Fatalf("hma %q valid %v", v, m.setup.Form().Valid())
			}
		}},
		{"a bad range shows the engine's error inline", []string{"backspace", "x"}, func(t *testing.T) {
			if v := m.setup.Form().Values()[form.HMA]; v != "10:30:1x" || m.setup.Form().Valid() || !strings.Contains(m.View(), `"1x" is not an integer`) {
				t.Fatalf("hma %q valid %v:\n%s", v, m.setup.Form().Valid(), m.View())
			}
			d.key("backspace")
		}},
		{"a range the bars cannot hold names the combo", []string{"backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "10:6000:10"}, func(t *testing.T) {
			if m.setup.Form().Valid() {
				t.Fatal("hma 10:6000:10 on 5,000 bars should not validate")
			}
			if v := m.View(); !strings.Contains(v, "needs") || !strings.Contains(v, "the data has 5000") {
				t.Fatalf("the engine's Grid.Validate error is not shown:\n%s", v)
			}
			d.key("enter")
			if m.screen != common.SetupScreen || !strings.Contains(m.status.LastErr, "the data has 5000") {
				t.Fatalf("enter on an invalid form: screen %d, last error %q", m.screen, m.status.LastErr)
			}
		}},
		{"a field's parse error", []string{"backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "10:5:1"}, func(t *testing.T) {
			if v := m.View(); !strings.Contains(v, `HMA range 10:5:1: empty range (stop 5 < start 10;`) {
				t.Fatalf("ParseRange's error is not shown:\n%s", v)
			}
		}},
		{"a length below the minimum is marked on its field", []string{"backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "1:10"}, func(t *testing.T) {
			v := m.View()
			if !strings.Contains(v, "length 1 is below the minimum 2") {
				t.Fatalf("Grid.Validate's error is not shown:\n%s", v)
			}
			if !regexp.MustCompile(`!\s*HMA range`).MatchString(v) {
				t.Fatalf("the HMA field is not marked with !:\n%s", v)
			}
			d.key("backspace", "backspace", "backspace", "backspace", "10:5:1")
		}},
		{"down and choices cycle, skipping the unavailable backend", []string{"down", "down", "down", "down", "down", "down", "down", "right"}, func(t *testing.T) {
			if v := m.setup.Form().Values()[form.Backend]; v != "auto" {
				t.Fatalf("backend %q: right from reference should skip cuda (unavailable) and wrap to auto", v)
			}
			if !strings.Contains(m.View(), "cuda unavailable: no NVIDIA driver found") {
				t.Fatal("the unavailable backend's reason is not shown")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d.key(c.keys...)
			c.check(t)
		})
	}
	// q on a choice field quits.
	_, cmd := m.Update(keyMsg("q"))
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q did not quit")
	}
}
