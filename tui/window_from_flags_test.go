package tui

import (
	"testing"
)

// TestWindowFromFlags: `tui --from --to` sweeps the window: the dataset the
// form describes holds only the bars in it.
func TestWindowFromFlags(t *testing.T) {
	f := smallFlags()
	f.Head = 0
	f.From, f.To = "2025-06-05", "2025-06-05"
	d := newDriver(t, f, 120, 40)
	d.m.setup.Validate()
	ds := d.m.state.Dataset
	if ds == nil {
		t.Fatalf("no dataset (last error %q)", d.m.status.LastErr)
	}
	first, last := ds.Info.First.UTC().Format("2006-01-02 15:04"), ds.Info.Last.UTC().Format("2006-01-02 15:04")
	if first != "2025-06-05 00:00" || last != "2025-06-05 23:59" {
		t.Errorf("the form's dataset runs %s .. %s, want the day 2025-06-05", first, last)
	}
}
