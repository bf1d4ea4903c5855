package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/tui/screens/results"
)

func TestResize(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	d.key("enter")
	d.settle()
	for _, sz := range [][2]int{{80, 24}, {200, 60}, {120, 40}, {100, 30}, {60, 16}, {81, 25}} {
		d.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		for p := range results.NumPanes {
			d.m.results.SetFocus(p)
			checkSize(t, d.m.View(), sz[0], sz[1])
		}
		d.key("?")
		checkSize(t, d.m.View(), sz[0], sz[1])
		d.key("?")
	}
	// A terminal too small says so whole (wrapped, issue 15 defect 9), at
	// 50x14 and at 40x10.
	for _, sz := range [][2]int{{50, 14}, {40, 10}} {
		d.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		v := strings.Join(strings.Fields(d.m.View()), " ")
		if want := fmt.Sprintf("sweepbench needs at least 60x16 (this terminal is %dx%d); q quits", sz[0], sz[1]); !strings.Contains(v, want) {
			t.Fatalf("a tiny terminal should say %q:\n%s", want, d.m.View())
		}
		checkSize(t, d.m.View(), sz[0], sz[1])
	}
}

// TestEverySize draws every pane at sizes from the minimum to 200x60, in
// colour, and checks each screen fills the terminal exactly (a resize
// through them once found a table drawing old rows against new columns).
func TestEverySize(t *testing.T) {
	m := newModel(context.Background(), Config{Registry: testRegistry(), Flags: smallFlags()}, termenv.TrueColor, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.key("enter")
	d.settle()
	for w := minW; w <= 200; w += 7 {
		for h := minH; h <= 60; h += 4 {
			d.send(tea.WindowSizeMsg{Width: w, Height: h})
			for p := range results.NumPanes {
				m.results.SetFocus(p)
				v := m.View()
				if strings.Contains(v, "internal error") {
					t.Fatalf("%dx%d, %s:\n%s", w, h, results.PaneNames[p], v)
				}
				checkSize(t, v, w, h)
			}
		}
	}
}

// TestColour renders every screen with colour: the same sizes, and the
// unicode frame (the plain one is ASCII).
func TestColour(t *testing.T) {
	m := newModel(context.Background(), Config{Registry: testRegistry(), Flags: smallFlags()}, termenv.TrueColor, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	if !strings.Contains(m.View(), "╭") && !strings.Contains(m.View(), "┏") {
		t.Fatal("no unicode frame in colour mode")
	}
	d.key("enter")
	d.settle()
	for _, sz := range [][2]int{{80, 24}, {160, 48}, {200, 60}} {
		d.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		for p := range results.NumPanes {
			m.results.SetFocus(p)
			checkSize(t, m.View(), sz[0], sz[1])
		}
	}
}
