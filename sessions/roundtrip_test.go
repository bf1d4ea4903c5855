package sessions_test

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/sessions"
)

// sameFloat is bit equality, except that every NaN equals every NaN.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

func compareRuns(t *testing.T, want, got *engine.Run) {
	t.Helper()
	if got.Precision != want.Precision || got.Status != want.Status || got.Backend != want.Backend ||
		got.Device != want.Device || got.WMA != want.WMA || got.Prepare != want.Prepare || got.Elapsed != want.Elapsed {
		t.Errorf("%s run: got %+v, want %+v", want.Precision, *got, *want)
	}
	if len(got.Results) != len(want.Results) {
		t.Fatalf("%s run: %d results, want %d", want.Precision, len(got.Results), len(want.Results))
	}
	for i := range want.Results {
		w, g := &want.Results[i], &got.Results[i]
		if g.Index != w.Index || g.Combo != w.Combo {
			t.Fatalf("%s result %d: combo %d %+v, want %d %+v", want.Precision, i, g.Index, g.Combo, w.Index, w.Combo)
		}
		for _, name := range engine.MetricNames {
			wv, _ := w.Value(name)
			gv, _ := g.Value(name)
			if !sameFloat(wv, gv) {
				t.Errorf("%s (hma %d, hma3 %d) %s: got %v (%#x), want %v (%#x)", want.Precision, w.HMA, w.HMA3, name,
					gv, math.Float64bits(gv), wv, math.Float64bits(wv))
			}
		}
	}
}

var createdRE = regexp.MustCompile(`"created": "[^"]*"`)

// TestRoundTrip saves a real study (btcusdt 5,000 bars, fp64 and fp32 on
// the reference backend) and reads it back: every metric of every combo
// bit for bit, the parity report, and the three outputs of `run`.
func TestRoundTrip(t *testing.T) {
	ds := btcusdt(t, 5000)
	st := newStudy(t, ds, "10:60:10", "12:96:12")
	s := openStore(t, "")
	want, id := runSaved(t, s, st, origin(5000), "auto: using reference (CPU)")
	if want.Parity == nil {
		t.Fatal("no parity report")
	}

	got, err := s.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(got.Runs))
	}
	for i := range want.Runs {
		compareRuns(t, want.Runs[i], got.Runs[i])
	}
	if got.Grid != want.Grid || got.Params != want.Params || got.WMA != want.WMA || got.Backend != want.Backend || got.Note != want.Note {
		t.Errorf("study: got %+v %+v, want %+v %+v", got.Grid, got.Params, want.Grid, want.Params)
	}
	if got.Dataset.SHA256 != ds.Info.SHA256 || got.Dataset.Bars != 5000 || !got.Dataset.First.Equal(ds.Info.First) || !got.Dataset.Last.Equal(ds.Info.Last) {
		t.Errorf("dataset: got %+v, want %+v", got.Dataset, ds.Info)
	}

	// The outputs of `run` are the same, byte for byte (the JSON but for
	// the creation time, which is the session's). The time a live run
	// waited for the store (Run.Saving: a note in its table when large,
	// as a loaded machine can make it) is not saved: compare without it.
	for _, r := range want.Runs {
		r.Saving = 0
	}
	var a, b bytes.Buffer
	for _, f := range []struct {
		name  string
		write func(*engine.Report, *bytes.Buffer) error
	}{
		{"table", func(r *engine.Report, w *bytes.Buffer) error { return output.WriteTable(w, r, 10) }},
		{"csv", func(r *engine.Report, w *bytes.Buffer) error { return output.WriteCSV(w, r) }},
		{"json", func(r *engine.Report, w *bytes.Buffer) error { return output.WriteJSON(w, r) }},
	} {
		a.Reset()
		b.Reset()
		if err := f.write(want, &a); err != nil {
			t.Fatal(err)
		}
		if err := f.write(got, &b); err != nil {
			t.Fatal(err)
		}
		wa, wb := createdRE.ReplaceAll(a.Bytes(), nil), createdRE.ReplaceAll(b.Bytes(), nil)
		if !bytes.Equal(wa, wb) {
			t.Errorf("%s differs after reload:\n--- saved\n%s\n--- reloaded\n%s", f.name, wa, wb)
		}
	}

	// The listing speaks of the study.
	list, err := s.List(context.Background(), sessions.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != id || list[0].Status != engine.StatusComplete {
		t.Fatalf("list: %+v", list)
	}
	best := engine.TopBySharpe(want.Runs[0], 1)[0]
	sh, c, p, ok := list[0].Best()
	if !ok || !sameFloat(sh, best.Sharpe) || c != best.Combo || p != engine.FP64 {
		t.Errorf("best: %v %+v %v %v, want %v %+v", sh, c, p, ok, best.Sharpe, best.Combo)
	}
	if done, total := list[0].Done(); done != total || total != 2*st.Grid.Len() {
		t.Errorf("done %d of %d, want %d", done, total, 2*st.Grid.Len())
	}
}

// TestNonFinitePreserved saves the values SPEC allows to be non-finite
// (an overflowing cagr, sortino and omega without a loss, a NaN) and a
// negative zero, and reads them back.
func TestNonFinitePreserved(t *testing.T) {
	ds := btcusdt(t, 2000)
	st := newStudy(t, ds, "10:20:10", "12:24:12", engine.FP64)
	s := openStore(t, "")
	ctx := context.Background()
	w, err := begin(ctx, s, st, origin(2000), "")
	if err != nil {
		t.Fatal(err)
	}
	specials := []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), math.SmallestNonzeroFloat64, math.MaxFloat64}
	var rs []engine.ComboResult
	for i := 0; i < st.Grid.Len(); i++ {
		r := engine.ComboResult{Index: i, Combo: st.Grid.At(i)}
		for j, name := range engine.MetricNames {
			v := specials[(i+j)%len(specials)]
			switch name {
			case "total_trades", "long_bars", "short_bars", "flat_bars":
				v = float64(1000*i + j)
			}
			r.SetValue(name, v)
		}
		rs = append(rs, r)
	}
	if err := w.Save(engine.FP64, rs); err != nil {
		t.Fatal(err)
	}
	run := &engine.Run{Backend: "reference", Precision: engine.FP64, Grid: st.Grid, Status: engine.StatusComplete, Results: rs}
	if err := w.Finish(&engine.Report{Runs: []*engine.Run{run}}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Open(ctx, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	compareRuns(t, run, got.Runs[0])
}

// TestSelectionSettings: what a session asked of its selection, in the
// words sessions ls and the browser list it with; nothing for defaults.
func TestSelectionSettings(t *testing.T) {
	var ss sessions.Session
	if got := sessions.SelectionSettings(&ss); got != "" {
		t.Errorf("defaults: %q, want nothing", got)
	}
	ss.Spec.Objective, ss.Spec.MinTrades, ss.Spec.MaxDrawdown, ss.Spec.Blocks, ss.Spec.WF = "sortino", 400, 0.3, 16, "rolling:8"
	if got, want := sessions.SelectionSettings(&ss), ", objective sortino, min trades 400, max drawdown 30%, blocks 16, wf rolling:8"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
