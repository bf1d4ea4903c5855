package tui

import (
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/tui/common"
)

// TestDataAllowed: a dataset Config.DataAllowed refuses is never read: the
// load ends with the refusal on the status line; one it allows loads.
func TestDataAllowed(t *testing.T) {
	var asked []string
	refusal := errors.New("dataset /etc/shadow: not allowed: this server reads only the embedded datasets")
	f := smallFlags()
	f.Data = "/etc/shadow"
	cfg := Config{Registry: testRegistry(), Flags: f, DataAllowed: func(spec string) error {
		asked = append(asked, spec)
		if strings.HasPrefix(spec, "embedded:") {
			return nil
		}
		return refusal
	}}
	m := newModel(t.Context(), cfg, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	if len(asked) != 1 || asked[0] != "/etc/shadow" || m.status.LastErr != refusal.Error() || m.state.Raw != nil {
		t.Fatalf("asked %q, status %q, dataset loaded %v; want the refusal and nothing read", asked, m.status.LastErr, m.state.Raw != nil)
	}
	d.send(common.LoadMsg{Spec: "embedded:btcusdt-1m"})
	if m.state.Raw == nil || m.status.LastErr != "" {
		t.Fatalf("embedded dataset: loaded %v, status %q", m.state.Raw != nil, m.status.LastErr)
	}
}
