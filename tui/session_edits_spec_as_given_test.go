package tui

import (
	"context"
	"testing"

	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

// TestSessionEditsSpecAsGiven (found by a fresh user): a saved session
// opened from the browser fills the form (e) with its Spec as the user
// gave it, bars/year 0 (derived from the data) and backend auto, not the
// values they resolved to (525600, reference); every other field as
// saved. A timeframe changed there then runs with bars per year derived
// from the new bars (30m: 365 x 48 = 17,520), not the 1m study's 525,600.
func TestSessionEditsSpecAsGiven(t *testing.T) {
	st := tempStore(t)
	f := smallFlags()
	f.Backend, f.BarsPerYear = "auto", 0
	f.Fee, f.Mode, f.Source, f.WMA, f.Borderline = 0.001, "long-only", "hl2", "prefix", 2e-5
	f.TZ, f.Blocks, f.WF, f.Objective, f.MinTrades, f.MaxDrawdown, f.From = "UTC", 8, "rolling:4", "sortino", 1, 0.9, "2025-06-02"
	// What a fresh workbench's form shows for these flags: what e must
	// show for their session.
	want := newDriver(t, f, 120, 40).m.setup.Form().Values()
	if want[form.BarsPerYear] != "0" || want[form.Backend] != "auto" {
		t.Fatalf("the flags' form: %v", want)
	}

	d := newStoreDriver(t, storeConfig(f, st), 120, 40)
	d.key("enter")
	if d.m.status.Saved != "session 1" {
		t.Fatalf("saved %q (err %q)", d.m.status.Saved, d.m.status.LastErr)
	}
	ctx := context.Background()
	ss, err := st.Get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ss.Params.BarsPerYear != 525600 || ss.Backend != "reference" || ss.Asked.BarsPerYear != 0 || ss.Asked.Backend != "auto" {
		t.Fatalf("session 1: used %g bars/year on %s, asked %g on %s", ss.Params.BarsPerYear, ss.Backend, ss.Asked.BarsPerYear, ss.Asked.Backend)
	}

	// Another workbench, whose form holds another study (backend
	// reference), opens session 1 and edits it.
	d = newStoreDriver(t, storeConfig(smallFlags(), st), 120, 40)
	m := d.m
	d.key("esc", "S", "enter")
	d.settle()
	if m.screen != common.ResultsScreen || m.status.Saved != "session 1" || m.state.Study == nil {
		t.Fatalf("screen %d, saved %q (err %q)", m.screen, m.status.Saved, m.status.LastErr)
	}
	d.key("e")
	got := m.setup.Form().Values()
	if m.screen != common.SetupScreen || got[form.BarsPerYear] != "0" || got[form.Backend] != "auto" {
		t.Fatalf("screen %d, bars/year %q, backend %q after e", m.screen, got[form.BarsPerYear], got[form.Backend])
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("the form's %s is %q after e, want %q as saved", k, got[k], w)
		}
	}

	// The timeframe to 30m (down moves out of a text field; esc would go
	// back to the results), then run.
	for range 30 {
		if m.setup.Form().Focused() == form.Timeframe {
			break
		}
		d.key("down")
	}
	for range 10 {
		if m.setup.Form().Values()[form.Timeframe] == "30m" {
			break
		}
		d.key("right")
	}
	if v := m.setup.Form().Values(); m.setup.Form().Focused() != form.Timeframe || v[form.Timeframe] != "30m" || v[form.BarsPerYear] != "0" {
		t.Fatalf("focused %q, timeframe %q, bars/year %q", m.setup.Form().Focused(), v[form.Timeframe], v[form.BarsPerYear])
	}
	d.key("enter")
	if m.status.Saved != "session 2" {
		t.Fatalf("saved %q (err %q, warning %q)", m.status.Saved, m.status.LastErr, m.status.Warn)
	}
	ss, err = st.Get(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	const thirtyMinBarsPerYear = 365 * 24 * 2 // a 24/7 calendar of 30-minute bars
	if ss.Spec.Timeframe != "30m" || ss.Params.BarsPerYear != thirtyMinBarsPerYear || ss.Asked.BarsPerYear != 0 || ss.Asked.Backend != "auto" {
		t.Fatalf("session 2: timeframe %q, %g bars/year (want %d), asked %g on %s",
			ss.Spec.Timeframe, ss.Params.BarsPerYear, thirtyMinBarsPerYear, ss.Asked.BarsPerYear, ss.Asked.Backend)
	}
	if r := m.state.Results; r == nil || r.Report == nil || r.Report.Params.BarsPerYear != thirtyMinBarsPerYear {
		t.Fatal("the results on screen are not annualised with 17,520 bars/year")
	}
}
