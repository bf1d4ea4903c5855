package tui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

// TestLoadKeepsAMovedFocus: the dataset given on the command line loads
// after the workbench starts; a user who presses esc before it has loaded
// (leaving the form's text field) keeps that focus when the load ends, so
// the next S opens the sessions browser instead of being typed into the
// HMA range (seen over SSH on a loaded machine: "10:30:10S"). Without a
// key meanwhile, the load still gives the form the keys.
func TestLoadKeepsAMovedFocus(t *testing.T) {
	d := &driver{t: t, m: newTestModel(smallFlags())}
	load := d.m.Init() // the load, held: it ends after the key below
	d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	d.key("esc")
	d.run(load)
	d.key("S")
	if d.m.screen != common.SessionsScreen {
		t.Fatalf("screen %v after esc during the load and S, want the sessions browser; HMA range %q", d.m.screen, d.m.setup.Form().Values()[form.HMA])
	}

	d = &driver{t: t, m: newTestModel(smallFlags())}
	d.run(d.m.Init())
	d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	d.key("S")
	if d.m.screen != common.SetupScreen || d.m.setup.Form().Values()[form.HMA] != "10:30:10S" {
		t.Fatalf("without esc the loaded form takes the keys: screen %v, HMA range %q", d.m.screen, d.m.setup.Form().Values()[form.HMA])
	}
}
