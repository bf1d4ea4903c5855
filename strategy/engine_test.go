package strategy

import (
	"context"
	"math"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// TestEngineStudyIsSweep: a strategy study run through the engine's one
// study path (Spec.Build, RunStudy on the reference backend) gives, combo
// for combo and bit for bit, the metrics of Sweep over the same bars in
// both precisions, and its parity report counts, per combo, the bars and
// the non-borderline flips that an independent walk of Evaluate's two
// position series finds: every differing bar judged by its own margin for
// cross (memoryless), Divergences' roots for the families with memory.
func TestEngineStudyIsSweep(t *testing.T) {
	reg := &engine.Registry{}
	reg.Register(reference.New())
	for _, tc := range sweepCases {
		if tc.family == "hull" {
			continue
		}
		spec := engine.DefaultSpec()
		spec.Data, spec.Head, spec.Backend = "embedded:btcusdt-1m", 6000, "reference"
		spec.Strategy, spec.Params, spec.FastBelowSlow, spec.WMA = tc.family, tc.params, tc.fastBelowSlow, tc.f.String()
		st, err := spec.Build(reg)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.family, tc.params, err)
		}
		rep, err := engine.RunStudy(context.Background(), st, engine.StudyOptions{})
		if err != nil {
			t.Fatalf("%s: %v", st.Grid.Text(), err)
		}
		g, ok := GridOf(st.Grid.Strategy)
		if !ok || g.Family != tc.family {
			t.Fatalf("%s: the study's grid is not the family's (%v)", st.Grid.Text(), ok)
		}
		bars := &st.Dataset.Bars
		p := st.Params
		n := g.Len()
		for _, prec := range []engine.Precision{engine.FP64, engine.FP32} {
			run := rep.Run(prec)
			if run == nil || !run.Complete() || len(run.Results) != n {
				t.Fatalf("%s %s: run %+v", g, prec, run)
			}
			want := make([]engine.Metrics, n)
			if prec == engine.FP64 {
				err = Sweep(context.Background(), g, NewInputs[float64](bars, p.Source), kernels.BarReturns[float64](bars), nil, Direct, p, 0, want, 2)
			} else {
				err = Sweep(context.Background(), g, NewInputs[float32](bars, p.Source), kernels.BarReturns[float32](bars), nil, tc.f, p, 0, want, 2)
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range run.Results {
				if r.Index != i {
					t.Fatalf("%s %s: result %d has index %d", g, prec, i, r.Index)
				}
				if why, same := sameMetrics(r.Metrics, want[i]); !same {
					t.Fatalf("%s %s combo %d (%s): %s", g, prec, i, st.Grid.Label(i), why)
				}
			}
		}
		par := rep.Parity
		if par == nil || len(par.Combos) != n {
			t.Fatalf("%s: parity %+v", g, par)
		}
		in64, in32 := NewInputs[float64](bars, p.Source), NewInputs[float32](bars, p.Source)
		nb := bars.Len()
		memory := tc.family != "cross"
		listed := map[[2]int]engine.Flip{}
		for _, f := range par.Flips {
			listed[[2]int{f.Index, f.Bar}] = f
		}
		r64 := kernels.BarReturns[float64](bars)
		checked := 0
		// moved is what the divergence [root, root+n) moved, recomputed:
		// position changes over [root, root+n] and the additive return.
		moved := func(p64, p32 []State, root, n int) (trades int, dpnl float64) {
			for b := root; b <= root+n && b < len(p64)-1; b++ {
				if b > 0 && p32[b] != p32[b-1] {
					trades++
				}
				if b > 0 && p64[b] != p64[b-1] {
					trades--
				}
				if b < root+n {
					dpnl += 100 * float64(p32[b]-p64[b]) * r64[b+1]
				}
			}
			return trades, dpnl
		}
		for k, cp := range par.Combos {
			c := g.At(cp.Index)
			p64, p32, m64 := make([]State, nb), make([]State, nb), make([]float64, nb)
			if _, err := Evaluate(g, c, in64, Direct, p64, m64); err != nil {
				t.Fatal(err)
			}
			if _, err := Evaluate(g, c, in32, tc.f, p32, nil); err != nil {
				t.Fatal(err)
			}
			held := nb - 1
			bars, nonBorder := 0, 0
			if memory {
				for _, d := range Divergences(p64[:held], p32[:held], m64[:held], par.Tolerance) {
					bars += d.Bars
					if !d.Borderline {
						nonBorder++
					}
					if f, ok := listed[[2]int{cp.Index, d.Root}]; ok {
						tr, dp := moved(p64, p32, d.Root, d.Bars)
						if f.Bars != d.Bars || f.Trades != tr || math.Abs(f.DPnLpp-dp) > 1e-12 {
							t.Errorf("%s combo %d divergence at %d: listed %d bars, trades %+d, dPnL %g pp; recomputed %d, %+d, %g",
								g, cp.Index, d.Root, f.Bars, f.Trades, f.DPnLpp, d.Bars, tr, dp)
						}
						checked++
					}
				}
			} else {
				for b := range held {
					if p64[b] != p32[b] {
						bars++
						if !(m64[b] < par.Tolerance) {
							nonBorder++
						}
						if f, ok := listed[[2]int{cp.Index, b}]; ok {
							tr, dp := moved(p64, p32, b, 1)
							if f.Bars != 1 || f.Trades != tr || f.DPnLpp != dp || f.Margin != m64[b] || f.Pos64 != p64[b] || f.Pos32 != p32[b] {
								t.Errorf("%s combo %d flip at %d: listed %+v; recomputed trades %+d, dPnL %g, margin %g, pos %d/%d",
									g, cp.Index, b, f, tr, dp, m64[b], p64[b], p32[b])
							}
							checked++
						}
					}
				}
			}
			if cp.Flips != bars || cp.NonBorderline != nonBorder {
				t.Errorf("%s combo %d (%s): parity %d flip bars, %d non-borderline; the positions give %d, %d",
					g, k, cp.Label(), cp.Flips, cp.NonBorderline, bars, nonBorder)
			}
			if cp.Label() != st.Grid.Label(cp.Index) || cp.Label() == "" {
				t.Errorf("combo %d labelled %q, want %q", cp.Index, cp.Label(), st.Grid.Label(cp.Index))
			}
		}
		if par.FlipCount > 0 && checked == 0 {
			t.Errorf("%s: no listed divergence was checked", g)
		}
		t.Logf("%s (%s): %d combos, verdict %s, %d flips (%d non-borderline), %d sensitive", g, tc.f, n, par.Verdict, par.FlipCount, par.NonBorderlineFlips, par.Sensitive)
	}
}

// TestEngineStrategyPoint: the engine's view of a grid (Point, Coords,
// IndexOf, Columns, Label) names the combos Grid.At gives.
func TestEngineStrategyPoint(t *testing.T) {
	s, err := engine.NewStrategy("cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:10:30:10"}, true)
	if err != nil {
		t.Fatal(err)
	}
	g := engine.Grid{Strategy: s}
	// fast 5, 10, 15 x slow 10, 20, 30 with fast < slow: (5,10) (5,20)
	// (5,30) (10,20) (10,30) (15,20) (15,30).
	want := [][2]string{{"5", "10"}, {"5", "20"}, {"5", "30"}, {"10", "20"}, {"10", "30"}, {"15", "20"}, {"15", "30"}}
	if g.Len() != len(want) {
		t.Fatalf("%d combos, want %d", g.Len(), len(want))
	}
	if cols := g.Columns(); len(cols) != 4 || cols[0] != "fast_kind" || cols[1] != "fast" || cols[2] != "slow_kind" || cols[3] != "slow" {
		t.Errorf("columns %v", cols)
	}
	for i, w := range want {
		pt := g.Point(i)
		if len(pt) != 2 || pt[0].Kind != "ema" || pt[0].Text != w[0] || pt[1].Kind != "sma" || pt[1].Text != w[1] {
			t.Errorf("combo %d: %+v, want fast ema %s, slow sma %s", i, pt, w[0], w[1])
		}
		if got := g.Label(i); got != "fast ema "+w[0]+", slow sma "+w[1] {
			t.Errorf("combo %d label %q", i, got)
		}
		if j := s.IndexOf(s.Coords(i)); j != i {
			t.Errorf("IndexOf(Coords(%d)) = %d", i, j)
		}
	}
	if j := s.IndexOf([]int{1, 0}); j != -1 { // (10, 10): dropped
		t.Errorf("IndexOf of a dropped combo = %d, want -1", j)
	}
	if need := s.BarsNeeded(); need != 30+2-1 {
		t.Errorf("BarsNeeded %d, want 31 (sma 30's first valid bar 29, + 2)", need)
	}
	if _, err := engine.NewStrategy("zscore", map[string]string{"length": "1:5"}, false); err == nil {
		t.Error("length 1 accepted")
	} else if fe := engine.FieldErrors(err); len(fe) != 1 || fe[0].Field != engine.FieldParams || fe[0].Value != "length=1:5" {
		t.Errorf("error %v: want a FieldError of --param length=1:5", err)
	}
}

// TestBreakoutRefusesSource: breakout reads high, low and close, so a
// Spec with another source is refused before anything runs, naming the
// field.
func TestBreakoutRefusesSource(t *testing.T) {
	spec := engine.DefaultSpec()
	spec.Strategy, spec.Source = "breakout", "hl2"
	_, err := spec.Parse()
	fe := engine.FieldErrors(err)
	if len(fe) != 1 || fe[0].Field != engine.FieldSource || fe[0].Value != "hl2" {
		t.Fatalf("error %v: want one FieldError of source hl2", err)
	}
	spec.Source = "close"
	if _, err := spec.Parse(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// TestInputsOfClosesOnly: bars holding only closes (no highs, lows) give
// inputs whose high and low are the close, and a breakout study over them
// runs (before, NewInputs indexed the missing highs and panicked).
func TestInputsOfClosesOnly(t *testing.T) {
	closes := []float64{10, 11, 12, 11, 10, 9, 10, 11, 12, 13, 12, 11}
	b := datatest.CloseBars(closes)
	in := NewInputs[float32](b, engine.SourceClose)
	for i, c := range closes {
		if in.High[i] != float32(c) || in.Low[i] != float32(c) {
			t.Fatalf("bar %d: high %v low %v, want the close %v", i, in.High[i], in.Low[i], c)
		}
	}
	g, err := NewGrid("breakout", map[string]string{"entry": "2", "exit": "1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	pos := make([]State, len(closes))
	if _, err := Evaluate(g, g.At(0), in, Direct, pos, nil); err != nil {
		t.Fatal(err)
	}
	// Bar 2 closes at 12 above max(10, 11): long; bar 4 closes at 10 below
	// the previous bar's low 11 (exit 1) and below min(12, 11) (entry 2):
	// out and short.
	if pos[2] != 1 || pos[4] != -1 {
		t.Errorf("positions %v: want +1 at bar 2, -1 at bar 4", pos)
	}
}

// TestInspectIndexIsTheRun: engine.InspectIndex recomputes a strategy
// combo with the metrics its study's run holds, bit for bit, its trade
// list agreeing with its trade count, its label, and its signal lines;
// for hull it is InspectCombo's.
func TestInspectIndexIsTheRun(t *testing.T) {
	reg := &engine.Registry{}
	reg.Register(reference.New())
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.Backend = "embedded:btcusdt-1m", 6000, "reference"
	spec.Strategy, spec.Params = "zscore", map[string]string{"length": "10:30:10", "entry": "1.5:2.5:0.5", "exit": "0:1:0.5"}
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(context.Background(), st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, prec := range []engine.Precision{engine.FP64, engine.FP32} {
		for _, i := range []int{0, 13, st.Grid.Len() - 1} {
			d, err := engine.InspectIndex(context.Background(), &st.Dataset.Bars, st.Grid, i, st.Params, prec, st.WMA)
			if err != nil {
				t.Fatal(err)
			}
			want := rep.Run(prec).Results[i].Metrics
			if why, same := sameMetrics(d.Metrics, want); !same {
				t.Errorf("%s combo %d: %s", prec, i, why)
			}
			if len(d.Trades) != d.TotalTrades || d.Label != st.Grid.Label(i) || d.Signal == nil || d.Signal.Scale != "z" || len(d.Signal.Levels) != 4 {
				t.Errorf("%s combo %d: %d trades listed for %d, label %q, signal %+v", prec, i, len(d.Trades), d.TotalTrades, d.Label, d.Signal)
			}
		}
	}
	if _, err := engine.InspectIndex(context.Background(), &st.Dataset.Bars, st.Grid, st.Grid.Len(), st.Params, engine.FP64, st.WMA); err == nil {
		t.Error("an index past the grid was inspected")
	}
}

// TestStrategySeriesCount: the memory forecast's series of a grid are
// the distinct series its sweep caches (counted by the cache itself) plus
// the six inputs.
func TestStrategySeriesCount(t *testing.T) {
	bars := btcBars(t)
	for _, tc := range sweepCases {
		if tc.family == "hull" {
			continue
		}
		s, err := engine.NewStrategy(tc.family, tc.params, tc.fastBelowSlow)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := GridOf(s)
		sc := newSeriesCache[float64]()
		in := NewInputs[float64](bars, engine.SourceClose)
		pos := make([]State, bars.Len())
		fam, _ := Lookup(g.Family)
		for i := range g.Len() {
			if _, err := evaluate(fam, g.At(i), in, Direct, pos, nil, sc); err != nil {
				t.Fatal(err)
			}
		}
		// zscore keeps mean and sd under one key; breakout one channel a key.
		cached := 0
		for _, v := range sc.snapshot() {
			cached += len(v)
		}
		if got := s.Series(); got != cached+6 {
			t.Errorf("%s: Series %d, the cache holds %d series (+6 inputs)", g, got, cached)
		}
	}
}

// TestPrefixNeedsAPrefixForm: --formulation prefix is refused, naming the
// field, where no series of the grid has a prefix form (breakout; a cross
// of recursions), and taken where one has.
func TestPrefixNeedsAPrefixForm(t *testing.T) {
	cases := []struct {
		family string
		params map[string]string
		ok     bool
	}{
		{"breakout", nil, false},
		{"cross", map[string]string{"fast": "ema:5:10:5", "slow": "tema:20:30:10"}, false},
		{"cross", map[string]string{"fast": "ema:5:10:5", "slow": "sma:20:30:10"}, true},
		{"zscore", nil, true},
		{"rsi", nil, true},
	}
	for _, tc := range cases {
		spec := engine.DefaultSpec()
		spec.Strategy, spec.Params, spec.WMA = tc.family, tc.params, "prefix"
		_, err := spec.Parse()
		if tc.ok {
			if err != nil {
				t.Errorf("%s %v prefix: %v", tc.family, tc.params, err)
			}
			continue
		}
		fe := engine.FieldErrors(err)
		if len(fe) != 1 || fe[0].Field != engine.FieldWMA || fe[0].Value != "prefix" {
			t.Errorf("%s %v prefix: error %v, want one FieldError of the formulation", tc.family, tc.params, err)
		}
	}
}
