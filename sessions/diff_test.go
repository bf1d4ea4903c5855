package sessions_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/sessions"
)

func TestDiff(t *testing.T) {
	ds := btcusdt(t, 5000)
	s := openStore(t, "")
	bg := context.Background()
	base := newStudy(t, ds, "10:60:10", "12:72:12")
	_, a := runSaved(t, s, base, origin(5000), "")
	fee := newStudy(t, ds, "10:60:10", "12:72:12", engine.FP64)
	fee.Params.Fee = 0.001
	_, b := runSaved(t, s, fee, origin(5000), "")
	src := newStudy(t, ds, "10:60:10", "12:72:12", engine.FP64)
	src.Params.Source = engine.SourceHL2
	_, c := runSaved(t, s, src, origin(5000), "")
	other := newStudy(t, ds, "10:50:10", "12:72:12", engine.FP64)
	_, e := runSaved(t, s, other, origin(5000), "")
	shorter := newStudy(t, btcusdt(t, 4000), "10:60:10", "12:72:12", engine.FP64)
	_, w := runSaved(t, s, shorter, origin(4000), "")

	load := func(context.Context, *sessions.Session) (*data.Dataset, error) { return ds, nil }
	ref := func(id int64, p ...engine.Precision) sessions.RunRef {
		if len(p) == 0 {
			return sessions.RunRef{ID: id}
		}
		return sessions.RunRef{ID: id, Precision: p[0], Explicit: true}
	}

	t.Run("own parity", func(t *testing.T) {
		// fp32 against fp64 of one session, recomputed from the store and
		// the data, is the parity report the run saved.
		d, err := s.Diff(bg, ref(a, engine.FP64), ref(a, engine.FP32), load)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Open(bg, a)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d.Parity, rep.Parity) {
			t.Errorf("diff parity:\n got %+v\nwant %+v", d.Parity, rep.Parity)
		}
		if !d.VerdictApplies || d.MetricsOnly || !reflect.DeepEqual(d.Differences, []string{"precision fp64 -> fp32"}) {
			t.Errorf("applies %v, metrics only %v, differences %q", d.VerdictApplies, d.MetricsOnly, d.Differences)
		}
	})

	t.Run("fee", func(t *testing.T) {
		d, err := s.Diff(bg, ref(a), ref(b), load)
		if err != nil {
			t.Fatal(err)
		}
		p := d.Parity
		if d.VerdictApplies || d.MetricsOnly || !reflect.DeepEqual(d.Differences, []string{"fee 0.045% -> 0.1%"}) {
			t.Errorf("applies %v, metrics only %v, differences %q", d.VerdictApplies, d.MetricsOnly, d.Differences)
		}
		// The fee moves no position: same trades, no flips, identical series.
		if p.FlipCount != 0 || p.ShiftedTrades != 0 || p.MaxRelIndicatorError != 0 || p.CombosCompared != base.Grid.Len() {
			t.Errorf("fee diff: %d flips, %d shifted, indicator error %g, %d compared", p.FlipCount, p.ShiftedTrades, p.MaxRelIndicatorError, p.CombosCompared)
		}
		// dPnL per combo, from the two runs' returns.
		for _, cp := range p.Combos {
			ra, rb := d.A.Run.Lookup(cp.Index), d.B.Run.Lookup(cp.Index)
			if want := 100 * (rb.TotalReturn - ra.TotalReturn); cp.DPnLpp != want || !(want < 0) {
				t.Errorf("(hma %d, hma3 %d) dPnL %g pp, want %g (< 0: a higher fee)", cp.HMA, cp.HMA3, cp.DPnLpp, want)
			}
		}
		var out strings.Builder
		if err := d.WriteTable(&out, 5); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "verdict n/a") {
			t.Errorf("table:\n%s", out.String())
		}
		// Its reasons (trial 2, item 7) name the sides A and B, not the
		// precisions of a study's own parity.
		if len(p.Reasons) == 0 {
			t.Fatalf("fee diff: no reasons (max |dPnL| %g pp)", p.MaxAbsDPnLpp)
		}
		for _, r := range p.Reasons {
			if strings.Contains(r, "fp64") || strings.Contains(r, "fp32") || !strings.Contains(r, "% A, ") {
				t.Errorf("reason %q does not name the sides A and B", r)
			}
		}
	})

	t.Run("source", func(t *testing.T) {
		d, err := s.Diff(bg, ref(a), ref(c), load)
		if err != nil {
			t.Fatal(err)
		}
		if !d.MetricsOnly || !strings.Contains(d.Why, "sources differ") || d.Parity.FlipCount != 0 || len(d.Parity.IndicatorErrors) != 0 {
			t.Errorf("metrics only %v (%s), %d flips", d.MetricsOnly, d.Why, d.Parity.FlipCount)
		}
	})

	t.Run("data not loadable", func(t *testing.T) {
		d, err := s.Diff(bg, ref(a), ref(a, engine.FP32), func(context.Context, *sessions.Session) (*data.Dataset, error) {
			return nil, errors.New("no such file")
		})
		if err != nil {
			t.Fatal(err)
		}
		if !d.MetricsOnly || !strings.Contains(d.Why, "no such file") || d.Parity.ShiftedTrades == 0 && d.Parity.MaxAbsDPnLpp == 0 {
			t.Errorf("metrics only %v (%s), parity %+v", d.MetricsOnly, d.Why, d.Parity)
		}
	})

	t.Run("refused", func(t *testing.T) {
		if _, err := s.Diff(bg, ref(a), ref(e), load); err == nil || !strings.Contains(err.Error(), "different grids") {
			t.Errorf("different grids: %v", err)
		}
		// One file, two windows: said so, with each window's bars and
		// times (the one hash, once).
		first := ds.Info.First.UTC().Format("2006-01-02 15:04")
		want := "are on different windows of one file (sha256 " + ds.Info.SHA256[:12]
		_, err := s.Diff(bg, ref(a), ref(w), load)
		if err == nil || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "5000 bars "+first+" .. "+ds.Info.Last.UTC().Format("2006-01-02 15:04")) ||
			!strings.Contains(err.Error(), "4000 bars "+first+" .. ") || strings.Count(err.Error(), ds.Info.SHA256[:12]) != 1 {
			t.Errorf("different windows: %v", err)
		}
		if _, err := s.Diff(bg, ref(b, engine.FP32), ref(a), load); err == nil || !strings.Contains(err.Error(), "no fp32 run") {
			t.Errorf("missing run: %v", err)
		}
		if _, err := s.Diff(bg, ref(999), ref(a), load); !errors.Is(err, sessions.ErrNotFound) {
			t.Errorf("missing session: %v", err)
		}
	})
}

func TestParseRunRef(t *testing.T) {
	for _, c := range []struct {
		in   string
		want sessions.RunRef
		ok   bool
	}{
		{"12", sessions.RunRef{ID: 12}, true},
		{"12:fp32", sessions.RunRef{ID: 12, Precision: engine.FP32, Explicit: true}, true},
		{"3:fp64", sessions.RunRef{ID: 3, Precision: engine.FP64, Explicit: true}, true},
		{"3:both", sessions.RunRef{}, false},
		{"x", sessions.RunRef{}, false},
		{"-1", sessions.RunRef{}, false},
	} {
		got, err := sessions.ParseRunRef(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%q: %+v, %v", c.in, got, err)
		}
	}
}
