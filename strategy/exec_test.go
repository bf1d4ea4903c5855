package strategy

import (
	"context"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// heldOf is combo c's positions held (after the mode and the stops) in
// precision F and formulation f, recomputed: Evaluate, then
// reference.BacktestPositionsTraceX with the bars' Exec and c's stops;
// margin (fp64 only, else nil) receives the family's margins, each bar a
// stop was checked at the smaller of that and the stop's.
func heldOf[F Float](t *testing.T, g Grid, c Combo, bars *engine.Bars, f Formulation, p engine.Params, margin []float64) ([]State, engine.Metrics) {
	t.Helper()
	in := NewInputs[F](bars, p.Source)
	st := make([]State, bars.Len())
	first, err := Evaluate(g, c, in, f, st, margin)
	if err != nil {
		t.Fatal(err)
	}
	x := reference.NewExec[F](bars).WithStops(g.Stops(c))
	x.Margin = margin
	m, tr := reference.BacktestPositionsTraceX(st, kernels.BarReturns[F](bars), first, p, x)
	return tr.Pos, m
}

// TestEngineStudyStops: a cross study with stops (stop_loss 0.002:0.004:0.002,
// take_profit 0.004) and fill next-open, run through the engine's study
// path on 20,000 bars of btcusdt-1m in both precisions (direct, and the
// prefix trap), has memory and 4 x 2 = 8 combos (the stops axes after the
// legs, in Columns and Label), gives Sweep's metrics bit for bit (with the
// bars' Exec), and its parity verdict is computed on the held positions:
// each combo's flip bars and non-borderline divergences are those of
// Divergences over the positions recomputed in each precision (heldOf),
// with the roots' margins the smaller of the family's and the stops'. The
// prefix trap collapses; direct does not.
func TestEngineStudyStops(t *testing.T) {
	reg := &engine.Registry{}
	reg.Register(reference.New())
	params := map[string]string{"fast": "sma:10:20:10", "slow": "sma:50:60:10", "stop_loss": "0.002:0.004:0.002", "take_profit": "0.004"}
	for _, form := range []Formulation{Direct, Prefix} {
		spec := engine.DefaultSpec()
		spec.Data, spec.Head, spec.Backend = "embedded:btcusdt-1m", 20000, "reference"
		spec.Strategy, spec.Params, spec.Fill, spec.WMA = "cross", params, "next-open", form.String()
		st, err := spec.Build(reg)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := engine.RunStudy(context.Background(), st, engine.StudyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g, _ := GridOf(st.Grid.Strategy)
		if !st.Grid.Strategy.Memory() || g.Len() != 8 || !g.HasStops() {
			t.Fatalf("grid %s: %d combos, memory %v", g, g.Len(), st.Grid.Strategy.Memory())
		}
		cols := st.Grid.Columns()
		if len(cols) != 6 || cols[4] != "stop_loss" || cols[5] != "take_profit" {
			t.Errorf("columns %v", cols)
		}
		if l := st.Grid.Label(1); l != "fast sma 10, slow sma 50, stop_loss 0.004, take_profit 0.004" {
			t.Errorf("label %q", l)
		}
		bars, p := &st.Dataset.Bars, st.Params
		for _, prec := range []engine.Precision{engine.FP64, engine.FP32} {
			want := make([]engine.Metrics, g.Len())
			if prec == engine.FP64 {
				err = Sweep(context.Background(), g, NewInputs[float64](bars, p.Source), kernels.BarReturns[float64](bars), reference.NewExec[float64](bars), Direct, p, 0, want, 2)
			} else {
				err = Sweep(context.Background(), g, NewInputs[float32](bars, p.Source), kernels.BarReturns[float32](bars), reference.NewExec[float32](bars), form, p, 0, want, 2)
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rep.Run(prec).Results {
				if why, same := sameMetrics(r.Metrics, want[i]); !same {
					t.Fatalf("%s %s combo %d: %s", form, prec, i, why)
				}
			}
		}
		par := rep.Parity
		if par == nil || len(par.Combos) != g.Len() {
			t.Fatalf("%s: parity %+v", form, par)
		}
		nb := bars.Len()
		for _, cp := range par.Combos {
			c := g.At(cp.Index)
			m64 := make([]float64, nb)
			p64, r64 := heldOf[float64](t, g, c, bars, Direct, p, m64)
			p32, r32 := heldOf[float32](t, g, c, bars, form, p, nil)
			if cp.Trades64 != r64.TotalTrades || cp.Trades32 != r32.TotalTrades {
				t.Errorf("%s combo %d: trades %d/%d, recomputed %d/%d", form, cp.Index, cp.Trades64, cp.Trades32, r64.TotalTrades, r32.TotalTrades)
			}
			held := nb - 1
			flips, nonBorder := 0, 0
			ds := Divergences(p64[:held], p32[:held], m64[:held], par.Tolerance)
			inheritStopRoots(ds, p64[:held], p32[:held], par.Tolerance) // TestInheritStopRoots
			for _, d := range ds {
				flips += d.Bars
				if !d.Borderline {
					nonBorder++
				}
			}
			if cp.Flips != flips || cp.NonBorderline != nonBorder {
				t.Errorf("%s combo %d (%s): parity %d flip bars, %d non-borderline; the held positions give %d, %d",
					form, cp.Index, cp.Label(), cp.Flips, cp.NonBorderline, flips, nonBorder)
			}
		}
		wantVerdict := engine.VerdictPass
		if form == Prefix {
			wantVerdict = engine.VerdictCollapse
		}
		if par.Verdict != wantVerdict {
			t.Errorf("%s: verdict %s (%v), want %s", form, par.Verdict, par.Reasons, wantVerdict)
		}
		t.Logf("%s: verdict %s, %d flip bars (%d non-borderline), %d sensitive", form, par.Verdict, par.FlipCount, par.NonBorderlineFlips, par.Sensitive)
	}
}

// TestInheritStopRoots: positions of a study with stops, by hand. The
// first divergence (bar 2: fp64 still long, fp32 already short, margin
// 1e-7, borderline) makes the shorts enter on different bars (fp32 at 2,
// fp64 at 3); both are short at bar 5, and at bar 6 fp64 is stopped (0)
// while fp32 holds: the stop levels differ by the entry prices, so the
// second divergence takes the first's margin (borderline) instead of its
// own 3e-4. A third divergence after both went flat (bar 8, no trade held
// before it) keeps its own margin; the fourth (bar 12) comes after longs
// entered on different bars (8 and 9, the third divergence) and inherits
// the third's.
func TestInheritStopRoots(t *testing.T) {
	//            0  1  2   3   4   5   6   7  8  9  10  11  12  13
	p64 := []State{0, 1, 1, -1, -1, -1, 0, 0, 0, 1, 1, 1, 1, 0}
	pt := []State{0, 1, -1, -1, -1, -1, -1, 0, 1, 1, 1, 1, 0, 0}
	margin := []float64{0, 0, 1e-7, 0, 0, 0, 3e-4, 0, 2e-4, 0, 0, 0, 5e-4, 0}
	ds := Divergences(p64, pt, margin, 1e-5)
	if len(ds) != 4 {
		t.Fatalf("divergences %+v, want 4", ds)
	}
	inheritStopRoots(ds, p64, pt, 1e-5)
	want := []Divergence{
		{Root: 2, Bars: 1, Margin: 1e-7, Borderline: true},
		{Root: 6, Bars: 1, Margin: 1e-7, Borderline: true}, // inherited from bar 2
		{Root: 8, Bars: 1, Margin: 2e-4, Borderline: false},
		// bar 12: both long since bar 9 in fp64 and 8 in fp32: entered on
		// different bars (the bar-8 divergence), so inherited from it.
		{Root: 12, Bars: 1, Margin: 2e-4, Borderline: false},
	}
	for k := range want {
		if ds[k] != want[k] {
			t.Errorf("divergence %d: %+v, want %+v", k, ds[k], want[k])
		}
	}
}
