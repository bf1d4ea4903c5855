package tui

import (
	"fmt"
	"strings"
	"sweepbench/tui/screens/results"
	"testing"
)

// TestTradeListFollowsCursor (issue 15, defect 1): in the Combo pane's
// trade list the cursor never leaves the view: after 30 downs the row of
// trade 31 is on screen with the cursor on it, and G shows the last trade.
func TestTradeListFollowsCursor(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprint(size[0], "x", size[1]), func(t *testing.T) {
			d := newDriver(t, smallFlags(), size[0], size[1])
			m := d.m
			d.key("enter")
			d.settle()
			for m.results.Focus() != results.ComboPane {
				d.key("tab")
			}
			d.settle()
			n := m.results.Detail().Trades()
			if n < 40 {
				t.Fatalf("%d trades: want a combo with more than a page", n)
			}
			for i := 0; i < 30; i++ {
				d.key("down")
			}
			if row := cursorRow(t, m.results.Detail().View()); !strings.HasPrefix(strings.TrimSpace(row), "31 ") {
				t.Fatalf("after 30 downs the cursor row is %q, want trade 31\n%s", row, m.results.Detail().View())
			}
			d.key("G")
			if row := cursorRow(t, m.results.Detail().View()); !strings.HasPrefix(strings.TrimSpace(row), fmt.Sprint(n, " ")) {
				t.Fatalf("after G the cursor row is %q, want trade %d\n%s", row, n, m.results.Detail().View())
			}
		})
	}
}

// cursorRow is the text after the cursor marker on the screen's line that
// holds it (the pane's list), failing when none does.
func cursorRow(t *testing.T, view string) string {
	t.Helper()
	for _, l := range strings.Split(view, "\n") {
		if i := strings.Index(l, "> "); i >= 0 {
			return l[i+2:]
		}
	}
	t.Fatalf("no cursor row on screen:\n%s", view)
	return ""
}
