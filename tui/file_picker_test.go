package tui

import (
	"strings"
	"testing"

	"sweepbench/engine/data"
)

// TestFilePicker opens a file through the picker: only the formats the
// loaders read are offered, and the chosen one is loaded and summarised.
func TestFilePicker(t *testing.T) {
	t.Chdir("../testdata/data")
	f := DefaultFlags()
	f.Backend = "reference"
	d := newDriver(t, f, 100, 30)
	m := d.m
	if m.setup.Pane() != 0 || m.state.Raw != nil {
		t.Fatal("without --data the dataset pane has the focus and nothing is loaded")
	}
	d.key("down", "down", "enter") // "Open a file..."
	if !m.setup.Datasets().Picking() {
		t.Fatal("enter on Open a file did not open the picker")
	}
	v := m.View()
	if !strings.Contains(v, "binance_archive_FILUSDT-1m-2023-08_head.csv") {
		t.Fatalf("the picker does not list the data files:\n%s", v)
	}
	// The first entry is the folder lean/; the next, README.md: shown,
	// but refused with the reason.
	d.key("down", "enter")
	if !strings.Contains(m.status.LastErr, "README.md: not a supported file name") {
		t.Fatalf("last error %q", m.status.LastErr)
	}
	// The whole refusal under the picker, every supported extension
	// named (the status bar has room for its start only).
	if v := strings.Join(strings.Fields(m.setup.Datasets().View()), " "); !strings.Contains(v, "README.md: not a supported file name: want "+strings.Join(data.SupportedExtensions(), ", ")) {
		t.Fatalf("the picker does not show the whole refusal:\n%s", m.setup.Datasets().View())
	}
	d.key("down", "enter")
	if m.setup.Datasets().Picking() || m.state.Raw == nil {
		t.Fatalf("the file was not loaded (last error %q)", m.status.LastErr)
	}
	if v := m.View(); !strings.Contains(v, "binance_archive_FILUSDT-1m-2023-08_head.csv") || !strings.Contains(v, "layout binance-archive") {
		t.Fatalf("no summary of the loaded file:\n%s", v)
	}
	if m.setup.Pane() != 1 {
		t.Fatal("after loading, the form should have the focus")
	}
}
