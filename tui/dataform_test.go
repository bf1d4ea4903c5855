package tui

import (
	"strings"
	"testing"

	"sweepbench/tui/components/form"
)

// TestFormLoadsAndAnnualises: the form's LEAN asset and time zone rows
// reach the loader (a change reloads the dataset), and its bars/year row
// reaches the study.
func TestFormLoadsAndAnnualises(t *testing.T) {
	f := smallFlags()
	f.Data, f.Head, f.HMA, f.HMA3 = "../testdata/data/lean_spy_hour_head.csv.gz", 0, "10:30:10", "12:36:12"
	d := newDriver(t, f, 120, 40)
	m := d.m
	if m.state.Raw != nil || !strings.Contains(m.status.LastErr, "give --lean-asset") {
		t.Fatalf("a LEAN file without its folders loaded without a LEAN asset (error %q)", m.status.LastErr)
	}
	// The LEAN asset row is the last: down 13 times from the first, then
	// right picks "equity" after "from the path".
	for range 13 {
		d.key("down")
	}
	d.key("right")
	if v := m.setup.Form().Values()[form.LEANAsset]; v != "equity" {
		t.Fatalf("LEAN asset %q", v)
	}
	if m.state.Raw == nil {
		t.Fatalf("choosing the LEAN asset did not load the file: %q", m.status.LastErr)
	}
	in := m.state.Raw.Info
	if in.PriceScale != 10000 || in.TimeZone != "America/New_York" || m.state.Raw.Bars.Close[0] != 97.03 {
		t.Fatalf("loaded as %s; first close %v", in.ReadAs(), m.state.Raw.Bars.Close[0])
	}
	// The time zone row (one up) reloads with its zone.
	d.key("up")
	d.key(strings.Split("UTC", "")...)
	if m.state.Raw == nil || m.state.Raw.Info.TimeZone != "UTC" || m.state.Raw.Info.First.Hour() != 9 {
		t.Fatalf("time zone %q: raw loaded %v, error %q", m.setup.Form().Values()[form.TZ], m.state.Raw != nil, m.status.LastErr)
	}
	// bars/year: 0 derives (a session calendar: the bars observed a year);
	// a number is used as given.
	s, _, general := m.setup.Build()
	if s == nil {
		t.Fatal(general)
	}
	if obs := m.state.Dataset.Info.ObservedBarsPerYear(); s.Params.BarsPerYear != obs || obs < 1700 || obs > 1800 {
		t.Fatalf("derived bars/year %v, observed %v", s.Params.BarsPerYear, obs)
	}
	d.key("up", "backspace")
	d.key(strings.Split("1764", "")...)
	if s, _, general = m.setup.Build(); s == nil || s.Params.BarsPerYear != 1764 {
		t.Fatalf("bars/year as typed: %v %v", s, general)
	}
}
