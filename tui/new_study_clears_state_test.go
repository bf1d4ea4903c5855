package tui

import (
	"strings"
	"testing"

	"sweepbench/tui/common"
)

// TestNoStaleState (issue 15, defect 3): after a study on FIL/USDT with a
// table filter, opening session 2 (BTC/USDT, fee 0.1%) from the browser
// shows that session everywhere: the status bar's dataset and session, the
// table without the old filter, and the form (e) with its values.
func TestNoStaleState(t *testing.T) {
	st := tempStore(t)
	seedStore(t, st)
	f := smallFlags()
	f.Data, f.Head = "embedded:filusdt-1m", 4000
	d := newStoreDriver(t, storeConfig(f, st), 120, 40)
	m := d.m
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen || m.status.Saved != "session 4" {
		t.Fatalf("screen %d, saved %q (err %q)", m.screen, m.status.Saved, m.status.LastErr)
	}
	d.key("/", "h", "m", "a", "=", "2", "0", "enter")
	if got := m.results.Metrics().Title(); !strings.HasPrefix(got, "Metrics: 3 of 9") {
		t.Fatalf("filter hma=20: %q", got)
	}
	d.global("S")
	m.sessions.List().Select(2)
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen || m.status.Saved != "session 2" {
		t.Fatalf("screen %d, saved %q (err %q)", m.screen, m.status.Saved, m.status.LastErr)
	}
	if got := m.results.Metrics().Title(); !strings.HasPrefix(got, "Metrics: 9 of 9") {
		t.Errorf("the filter of session 4 carried over into session 2: %q", got)
	}
	bar := lastLine(m.View())
	if !strings.Contains(bar, "btcusdt-1m[:5000]") || strings.Contains(bar, "filusdt") || !strings.Contains(bar, "session 2") {
		t.Errorf("status bar %q: want session 2's dataset and id", bar)
	}
	d.key("e")
	if v := m.setup.Form().Values(); v["fee"] != "0.001" || !strings.Contains(v["data"]+m.View(), "btcusdt") {
		t.Errorf("form after e on session 2: %v", v)
	}
}
