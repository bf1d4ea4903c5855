package conformance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
	"sweepbench/strategy"
)

// strategyCase is one grid of a family of SPEC Part 2 other than hull
// (hull is every other case of the suite) on fresh bars.
type strategyCase struct {
	name          string
	family        string
	params        map[string]string
	fastBelowSlow bool
	bars          *engine.Bars
	p             engine.Params
	form          engine.Formulation
}

// strategyCases are the families' grids the suite runs on every backend:
// each family once, at minute-like ticks with ties (close, long-short) or
// at FIL-like prices (another source, long-only), and the two trap
// formulations (prefix sma of cross, prefix variance of zscore), whose
// fp32 is the same ruin on every backend. Small grids: every combo is
// checked by hand.
func strategyCases(rng *rand.Rand, n int) []strategyCase {
	p := engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600}
	lo := p
	lo.Mode, lo.Source = engine.LongOnly, engine.SourceHLC3
	ticks := func() *engine.Bars { return datatest.TickWalk(rng, n, 100, 0.01) }
	walk := func() *engine.Bars { return datatest.RandomWalk(rng, n, 30000, 0.002) }
	return []strategyCase{
		{"cross ema x sma", "cross", map[string]string{"fast": "ema:3:15:4", "slow": "sma:10:40:10"}, false, ticks(), p, engine.Direct},
		{"cross fast below slow prefix", "cross", map[string]string{"fast": "sma:5:35:10", "slow": "sma:10:40:10"}, true, walk(), lo, engine.Prefix},
		{"cross price x hma", "cross", map[string]string{"fast": "price", "slow": "hma:8:24:8"}, false, walk(), p, engine.Direct},
		{"zscore", "zscore", map[string]string{"length": "10:30:10", "entry": "1.5:2.5:0.5", "exit": "0:0.5:0.5"}, false, ticks(), p, engine.Direct},
		{"zscore prefix long-only", "zscore", map[string]string{"length": "10:30:10", "entry": "1:2:1", "exit": "0"}, false, walk(), lo, engine.Prefix},
		{"breakout", "breakout", map[string]string{"entry": "10:30:10", "exit": "5:15:5"}, false, ticks(), p, engine.Direct},
		{"breakout long-only", "breakout", map[string]string{"entry": "20", "exit": "10:40:15"}, false, walk(), engine.Params{Fee: engine.DefaultFee, Mode: engine.LongOnly, Source: engine.SourceClose, BarsPerYear: 525600}, engine.Direct},
		{"rsi", "rsi", map[string]string{"length": "7:21:7", "lower": "25:35:5", "upper": "70"}, false, ticks(), p, engine.Direct},
		{"rsi long-only", "rsi", map[string]string{"length": "14", "lower": "30", "upper": "65:75:5"}, false, walk(), lo, engine.Direct},
	}
}

// testStrategies: every family of SPEC Part 2 runs as a study on b, both
// precisions. A GPU backend that takes a strategy's pairs of series
// (engine.PairRunner: CUDA's kernels for cross, zscore, rsi and breakout
// without stops and with fill close) runs the lanes itself, without a
// note; on any other backend each lane runs on the study's fallback, the
// CPU reference, and the study's note says so ("metal has no cross kernel
// yet: every lane runs on reference"); the reference runs them itself.
// Either way the metrics are, combo by combo
// (by index), bit for bit those worked out here from the family's
// positions (strategy.Evaluate, then reference.BacktestPositions), and
// the parity report's flips are the divergences recomputed here.
func testStrategies(t *testing.T, b engine.Backend, n int) {
	for _, c := range strategyCases(datatest.Rand(t), n) {
		t.Run(c.name, func(t *testing.T) { testStrategy(t, b, c) })
	}
}

func testStrategy(t *testing.T, b engine.Backend, c strategyCase) {
	st, err := engine.NewStrategy(c.family, c.params, c.fastBelowSlow)
	if err != nil {
		t.Fatalf("%s %v: %v", c.family, c.params, err)
	}
	grid := engine.Grid{Strategy: st}
	sg, err := strategy.NewGrid(c.family, c.params, c.fastBelowSlow)
	if err != nil {
		t.Fatal(err)
	}
	if grid.Len() != sg.Len() || grid.Len() < 1 {
		t.Fatalf("%s: the engine's grid has %d combos, strategy.NewGrid's %d", grid.Text(), grid.Len(), sg.Len())
	}
	// The reference computes strategy grids itself; any other backend's
	// lanes go to the fallback.
	var fallback engine.Backend = reference.New()
	if b.Name() == "reference" {
		fallback = b
	}
	ds := &data.Dataset{Bars: *c.bars, Info: data.Info{Name: "conformance", Bars: c.bars.Len(), MedianSpacing: datatest.Spacing}}
	s := &engine.Study{Dataset: ds, Grid: grid, Params: c.p, Precisions: []engine.Precision{engine.FP64, engine.FP32},
		WMA: c.form, Backend: b, Fallback: fallback}
	if err := s.Validate(); err != nil {
		t.Fatalf("%s: %v", grid.Text(), err)
	}
	// A grid whose combos run from pairs of series (engine.PairStrategy)
	// runs on a GPU backend that takes them (engine.PairRunner): no note,
	// the lanes on b.
	ps, isPair := st.(engine.PairStrategy)
	pr, runsPairs := b.(engine.PairRunner)
	onB := b.Name() == "reference" || isPair && runsPairs && pr.RunsPairs() && ps.PairsOK(c.p)
	lanes := "reference"
	if onB {
		lanes = b.Name()
	}
	note := s.FallbackNote()
	if onB && note != "" {
		t.Errorf("%s runs %s itself, yet the fallback note says %q", b.Name(), c.family, note)
	} else if want := fmt.Sprintf("%s has no %s kernel%s yet: every lane runs on reference", b.Name(), c.family, pairsWithout(b, c)); !onB && note != want {
		t.Errorf("fallback note %q, want %q", note, want)
	}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatalf("%s on %s: %v", grid.Text(), b.Name(), err)
	}
	if !rep.Complete() || rep.Parity == nil {
		t.Fatalf("%s on %s: complete %v, parity %v", grid.Text(), b.Name(), rep.Complete(), rep.Parity != nil)
	}

	in64 := strategy.NewInputs[float64](c.bars, c.p.Source)
	in32 := strategy.NewInputs[float32](c.bars, c.p.Source)
	r64, r32 := kernels.BarReturns[float64](c.bars), kernels.BarReturns[float32](c.bars)
	nb := c.bars.Len()
	p64, p32, m64 := make([]strategy.State, nb), make([]strategy.State, nb), make([]float64, nb)
	var sc64 reference.Scratch[float64]
	var sc32 reference.Scratch[float32]
	run64, run32 := rep.Run(engine.FP64), rep.Run(engine.FP32)
	for _, run := range []*engine.Run{run64, run32} {
		if run.Backend != lanes {
			t.Errorf("%s lane ran on %q, want %s", run.Precision, run.Backend, lanes)
		}
		if len(run.Results) != grid.Len() {
			t.Fatalf("%s lane: %d results, want %d", run.Precision, len(run.Results), grid.Len())
		}
	}
	flips, nonBorderline, trades := 0, 0, 0
	for i := 0; i < grid.Len(); i++ {
		label := grid.Label(i)
		// The engine's combo i is strategy's combo i: the same parameters.
		if got, want := label, engine.PointLabel(st.Point(i)); got != want {
			t.Fatalf("combo %d: label %q, point %q", i, got, want)
		}
		combo := sg.At(i)
		if idx := st.IndexOf(st.Coords(i)); idx != i {
			t.Fatalf("combo %d (%s): IndexOf(Coords) = %d", i, label, idx)
		}
		f64, err := strategy.Evaluate(sg, combo, in64, strategy.Direct, p64, m64)
		if err != nil {
			t.Fatalf("%s fp64: %v", label, err)
		}
		f32, err := strategy.Evaluate(sg, combo, in32, c.form, p32, nil)
		if err != nil {
			t.Fatalf("%s fp32: %v", label, err)
		}
		want64 := reference.BacktestPositions(p64, r64, f64, c.p, &sc64)
		want32 := reference.BacktestPositions(p32, r32, f32, c.p, &sc32)
		trades += want64.TotalTrades
		for _, lane := range []struct {
			run  *engine.Run
			want engine.Metrics
		}{{run64, want64}, {run32, want32}} {
			r := lane.run.Results[i]
			if r.Index != i || r.Combo != (engine.Combo{}) {
				t.Fatalf("%s lane: result %d is index %d combo %+v, want index %d and the zero Combo", lane.run.Precision, i, r.Index, r.Combo, i)
			}
			got := r.Metrics
			if lanes != "reference" && math.Abs(got.CVaR95-lane.want.CVaR95) <= 1e-3*math.Abs(lane.want.CVaR95) {
				// A GPU kernel sums CVaR's tail in its buffer's order (as
				// for hull: the conformance suite's CVaR tolerance).
				got.CVaR95 = lane.want.CVaR95
			}
			if name, same := SameMetrics(got, lane.want); !same {
				got, _ := r.Metrics.Value(name)
				want, _ := lane.want.Value(name)
				t.Errorf("%s lane on %s, combo %d (%s): %s = %v, by hand %v", lane.run.Precision, b.Name(), i, label, name, got, want)
			}
		}
		// Parity after the mode, over the bars held (the last bar's state
		// opens nothing).
		if c.p.Mode == engine.LongOnly {
			for k := range p64 {
				p64[k], p32[k] = max(p64[k], 0), max(p32[k], 0)
			}
		}
		cp := judge(c.family, p64, p32, m64, rep.Parity.Tolerance)
		flips += cp.FlipBars
		nonBorderline += cp.NonBorderline
		if k := comboParity(rep.Parity, i); k == nil {
			t.Errorf("parity: combo %d (%s) not compared", i, label)
		} else if k.Flips != cp.FlipBars || k.NonBorderline != cp.NonBorderline || k.Label() != label {
			t.Errorf("parity combo %d %q: %d bars apart, %d non-borderline; recomputed (%s) %d, %d",
				i, k.Label(), k.Flips, k.NonBorderline, label, cp.FlipBars, cp.NonBorderline)
		}
	}
	t.Logf("%s on %s (lanes on %s): %d combos, %d fp64 trades; %d bars apart, %d non-borderline; verdict %s",
		grid.Text(), b.Name(), run64.Backend, grid.Len(), trades, flips, nonBorderline, rep.Parity.Verdict)
	if trades == 0 {
		t.Errorf("%s: no trade in the whole grid: the case checks nothing", grid.Text())
	}
	if rep.Parity.FlipCount != flips || rep.Parity.NonBorderlineFlips != nonBorderline {
		t.Errorf("parity: %d flips, %d non-borderline; recomputed %d, %d", rep.Parity.FlipCount, rep.Parity.NonBorderlineFlips, flips, nonBorderline)
	}
	for _, f := range rep.Parity.Flips {
		if f.Name == "" || !strings.Contains(f.Label(), " ") {
			t.Errorf("flip at bar %d of combo %d without the combo's label (%q)", f.Bar, f.Index, f.Label())
			break
		}
	}
}

// judge is one combo's parity by SPEC Part 2, recomputed from its fp64
// and fp32 positions (after the mode) and fp64 margins over the bars held
// (the last bar's state opens nothing): cross is memoryless, each bar
// apart a flip judged by its own margin (Part 1); the families with
// memory are judged by divergences, each by its root's margin.
func judge(family string, p64, p32 []strategy.State, m64 []float64, tol float64) strategy.ComboParity {
	held := len(p64) - 1
	if family != "cross" {
		return strategy.JudgeCombo(strategy.Divergences(p64[:held], p32[:held], m64[:held], tol))
	}
	var cp strategy.ComboParity
	for b := range held {
		if p64[b] != p32[b] {
			cp.FlipBars++
			cp.Divergences++
			if !(m64[b] < tol) {
				cp.NonBorderline++
			}
		}
	}
	cp.Collapsed = cp.NonBorderline > 0
	return cp
}

// comboParity is the parity row of combo index in p, or nil.
func comboParity(p *engine.Parity, index int) *engine.ComboParity {
	for k := range p.Combos {
		if p.Combos[k].Index == index {
			return &p.Combos[k]
		}
	}
	return nil
}

// pairsWithout is what the fallback note names as keeping case c off a
// backend that takes pairs (engine.Study's wording): " with
// --fast-below-slow" (the only such option among strategyCases); "" on a
// backend that takes none.
func pairsWithout(b engine.Backend, c strategyCase) string {
	if pr, ok := b.(engine.PairRunner); ok && pr.RunsPairs() && c.fastBelowSlow {
		return " with --fast-below-slow"
	}
	return ""
}
