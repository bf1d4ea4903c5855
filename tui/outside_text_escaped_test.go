//go:build unix

package tui

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sweepbench/tui/common"
)

// evilName is a file name that would retitle the window (ESC ]0; BEL) and
// turn the text red (ESC [31m); evilShown is how it must be drawn.
const (
	evilName  = "ev\x1b]0;pwned\x07il\x1b[31m.csv"
	evilShown = `ev\x1b]0;pwned\x07il\x1b[31m.csv`
)

// evilFile writes 400 Binance rows under evilName in a new folder.
func evilFile(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../testdata/data/binance_archive_FILUSDT-1m-2023-08_head.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	p := filepath.Join(t.TempDir(), evilName)
	if err := os.WriteFile(p, []byte(strings.Join(lines[:401], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// noRawEscapes fails when the view (drawn without colour: the workbench's
// own styling emits no escape then) holds an ESC or BEL byte, and when it
// does not show the name escaped.
func noRawEscapes(t *testing.T, where, view string, wantName bool) {
	t.Helper()
	if i := strings.IndexAny(view, "\x1b\x07"); i >= 0 {
		t.Fatalf("%s: raw %q at byte %d:\n%s", where, view[i], i, view)
	}
	if wantName && !strings.Contains(view, evilShown) {
		t.Fatalf("%s: the name is not shown as %s:\n%s", where, evilShown, view)
	}
}

// TestOutsideTextEscaped: a dataset whose file name holds terminal
// escapes, loaded, run and saved by the workbench: the dataset pane, the
// status bar, the run's results, the sessions list and the bench plan show
// the name escaped, and no ESC or BEL reaches the screen; a file refused for its
// header (which holds an escape too) shows the error escaped.
func TestOutsideTextEscaped(t *testing.T) {
	p := evilFile(t)
	f := smallFlags()
	f.Data, f.Head, f.HMA, f.HMA3 = p, 0, "10:20:10", "12:24:12"
	st := tempStore(t)
	cfg := storeConfig(f, st)
	cfg.Rungs = fakeRungs
	d := newStoreDriver(t, cfg, 160, 48)
	m := d.m
	if m.state.Raw == nil {
		t.Fatalf("not loaded: %q", m.status.LastErr)
	}
	noRawEscapes(t, "setup", m.View(), true)
	// The status bar is the last line.
	if v := m.View(); !strings.Contains(v[strings.LastIndexByte(v, '\n'):], evilShown) {
		t.Fatalf("the status bar does not name the dataset escaped:\n%s", v)
	}
	d.key("enter")
	if m.screen != common.ResultsScreen || m.state.Results == nil || !m.state.Results.Complete() {
		t.Fatalf("no results: screen %d, error %q", m.screen, m.status.LastErr)
	}
	v := m.View()
	noRawEscapes(t, "results", v, true)
	if !strings.Contains(v, "Metrics: 4 of 4") {
		t.Fatalf("results:\n%s", v)
	}
	d.key("S")
	waitFor(t, "the sessions list", func() bool { return strings.Contains(m.View(), "Sessions: 1") })
	noRawEscapes(t, "sessions", m.View(), true)
	d.key("B") // the bench screen names the dataset in its plan
	if v := m.View(); !strings.Contains(v, "enter runs the ladder") {
		t.Fatalf("bench:\n%s", v)
	}
	noRawEscapes(t, "bench", m.View(), true)

	// A header with an escape, in a file named with one: the error.
	bad := filepath.Join(filepath.Dir(p), "bad\x1b[31m.csv")
	os.WriteFile(bad, []byte("when\x1b]0;x\x07,open,high,low,close\n1,1,1,1,1\n"), 0o644)
	f.Data = bad
	d = newDriver(t, f, 160, 48)
	v = d.m.View()
	noRawEscapes(t, "a refused file", v, false)
	if !strings.Contains(v, `bad\x1b[31m.csv: line 1: no timestamp column`) || !strings.Contains(v, `found: when\x1b]0;x\x07, open`) {
		t.Fatalf("the refusal is not shown escaped:\n%s", v)
	}
}
