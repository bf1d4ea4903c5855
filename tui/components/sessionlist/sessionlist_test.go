package sessionlist

import (
	"github.com/charmbracelet/x/ansi"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/sessions"
	"sweepbench/tui/common"
	"sweepbench/tui/keys"
	"sweepbench/tui/theme"
)

// TestSessionsToldApart (issue 15, defect 8): at 120 columns every session
// shows its date, its file name whole (the directories elided in the
// middle) and timeframe, grid, parity verdict and best Sharpe; at 80 the
// same with the file name's own middle elided; the columns
// that do not fit (status, precisions, settings) scroll into view with
// right, and the header says when columns are out of view.
func TestSessionsToldApart(t *testing.T) {
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true), Keys: keys.Default()}
	m := New(ctx)
	dir := "/srv/data/market/very/long/directory/of/vendor/files/"
	var list []sessions.Session
	for i, name := range []string{"BTCUSDT-1m-2023-08.csv", "ETHUSDT-1m-2023-08.csv"} {
		ss := sessions.Session{ID: int64(i + 1), Status: engine.StatusComplete, Parity: []string{"pass", "collapse"}[i],
			Grid:       engine.Grid{HMA: engine.Range{Start: 10, Stop: 100, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 120, Step: 12}},
			Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: "reference",
			Params: engine.Params{Fee: 0.00045}}
		ss.Dataset.Name, ss.Spec.Timeframe = dir+name, "5m"
		list = append(list, ss)
	}
	m.SetList(list, "", nil)
	m.SetSize(120, 8)
	v := m.View()
	for _, want := range []string{"/sr.../BTCUSDT-1m-2023-08.csv 5m", "ETHUSDT-1m-2023-08.csv 5m", "10:100:10x12:120:12", "collapse", "pass", "complete"} {
		if !strings.Contains(v, want) {
			t.Errorf("at 120 columns the list lacks %q:\n%s", want, v)
		}
	}
	m.SetSize(80, 8)
	v = m.View()
	for _, want := range []string{"BTCUSDT-...8.csv 5m", "ETHUSDT-...8.csv 5m", "10:100:10x12:120:12", "collapse", "pass"} {
		if !strings.Contains(v, want) {
			t.Errorf("at 80 columns the list lacks %q:\n%s", want, v)
		}
	}
	header := strings.SplitN(v, "\n", 2)[0]
	if !strings.HasPrefix(strings.TrimSpace(header), ">") || strings.Contains(v, "settings") {
		t.Errorf("header %q: want > (columns out of view on the right) and no settings column yet", header)
	}
	for i := 0; i < 10 && strings.HasSuffix(strings.Fields(header)[0], ">"); i++ {
		m.Update(tea.KeyMsg{Type: tea.KeyRight})
		v = m.View()
		header = strings.SplitN(v, "\n", 2)[0]
	}
	if !strings.Contains(v, "fee 0.045%, long-short") || !strings.HasPrefix(strings.TrimSpace(header), "<") || !strings.Contains(v, "fp64+fp32") {
		t.Errorf("scrolled right: want the settings and precisions and < in the header:\n%s", v)
	}
	// Wide, with long settings: they show beside the rest, cut to the
	// room left (they hid behind > for want of their whole width).
	for i := range list {
		list[i].Spec.Suite = "3fa2c9e1b0d4 1/2 r0a1b2c3d"
		list[i].Spec.Objective, list[i].Spec.MinTrades, list[i].Spec.MaxDrawdown, list[i].Spec.Blocks, list[i].Spec.WF = "sortino", 400, 0.3, 16, "rolling:8"
	}
	m = New(ctx)
	m.SetList(list, "", nil)
	m.SetSize(180, 8)
	v = m.View()
	header = strings.SplitN(v, "\n", 2)[0]
	if !strings.Contains(header, "settings") || strings.Contains(header, ">") || !strings.Contains(v, "fee 0.045%, long-short") {
		t.Errorf("at 180 columns the settings do not show:\n%s", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(l); w > 180 {
			t.Errorf("a line of %d cells at 180 columns: %q", w, l)
		}
	}
}
