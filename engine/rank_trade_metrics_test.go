package engine_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"sweepbench/engine"
)

// TestObjectiveProfitFactor: --objective profit_factor --min-trades N
// (engine.ParseObjective) ranks a real study's combos (the reference
// backend, which computes SPEC Part 2's trade metrics) by profit factor,
// highest first, among those with at least N trades: the order an
// independent sort of the results gives. A combo whose trade metrics are
// not computed (NaN, a GPU lane's) ranks after every computed one.
func TestObjectiveProfitFactor(t *testing.T) {
	ds := head(openDataset(t, "embedded:btcusdt-1m"), 4000)
	rep, err := engine.RunStudy(context.Background(), study(t, ds, "10:60:5", "12:60:6", engine.Direct), engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run := rep.Run(engine.FP64)
	const minTrades = 150
	o, err := engine.ParseObjective("profit_factor", minTrades, 0)
	if err != nil || o.Minimise || o.Name() != "profit_factor" {
		t.Fatalf("ParseObjective(profit_factor) = %+v, %v", o, err)
	}
	var want []engine.ComboResult
	excluded := 0
	for _, r := range run.Results {
		if !r.HasTradeMetrics() {
			t.Fatalf("combo %d: the reference backend left the trade metrics not computed", r.Index)
		}
		if r.TotalTrades >= minTrades {
			want = append(want, r)
		} else {
			excluded++
		}
	}
	if len(want) < 10 || excluded == 0 {
		t.Fatalf("%d combos with %d trades or more, %d with fewer: the case tests nothing", len(want), minTrades, excluded)
	}
	slices.SortStableFunc(want, func(a, b engine.ComboResult) int {
		switch {
		case a.ProfitFactor > b.ProfitFactor:
			return -1
		case a.ProfitFactor < b.ProfitFactor:
			return 1
		}
		return a.Index - b.Index
	})
	got := engine.TopBy(run, o, 10)
	if len(got) != 10 {
		t.Fatalf("%d combos ranked, want 10", len(got))
	}
	for i := range got {
		if got[i].Index != want[i].Index || got[i].ProfitFactor != want[i].ProfitFactor {
			t.Errorf("#%d: combo %d (profit factor %v), want %d (%v)", i, got[i].Index, got[i].ProfitFactor, want[i].Index, want[i].ProfitFactor)
		}
		if got[i].TotalTrades < minTrades || !(got[i].ProfitFactor > 0) || math.IsInf(got[i].ProfitFactor, 0) {
			t.Errorf("#%d: combo %d with %d trades, profit factor %v", i, got[i].Index, got[i].TotalTrades, got[i].ProfitFactor)
		}
	}

	// The best half not computed: it ranks last, in grid order.
	lane := *run
	lane.Results = slices.Clone(run.Results)
	var notComputed []int
	for i := range lane.Results {
		r := &lane.Results[i]
		if r.TotalTrades >= minTrades && r.ProfitFactor >= want[len(want)/2].ProfitFactor {
			r.NoTradeMetrics(ds.Bars.Len())
			notComputed = append(notComputed, r.Index)
		}
	}
	all := engine.TopBy(&lane, o, len(lane.Results))
	if len(all) != len(want) {
		t.Fatalf("%d combos ranked, want the %d with %d trades or more", len(all), len(want), minTrades)
	}
	tail := all[len(all)-len(notComputed):]
	for i, r := range tail {
		if r.Index != notComputed[i] || !math.IsNaN(r.ProfitFactor) {
			t.Errorf("not computed #%d: combo %d (profit factor %v), want combo %d, NaN, after every computed one", i, r.Index, r.ProfitFactor, notComputed[i])
		}
	}
	for _, r := range all[:len(all)-len(notComputed)] {
		if math.IsNaN(r.ProfitFactor) {
			t.Errorf("combo %d, not computed, ranked before a computed one", r.Index)
		}
	}
}

// TestMetricSenseOfPart2: SPEC Part 2's metrics rank on their better side:
// max_drawdown_bars lower, avg_trade_bars and exposure either side (no
// side is better), the others higher.
func TestMetricSenseOfPart2(t *testing.T) {
	for name, want := range map[string]engine.Sense{
		"profit_factor": engine.HigherIsBetter, "expectancy": engine.HigherIsBetter, "avg_win": engine.HigherIsBetter,
		"avg_loss": engine.HigherIsBetter, "best_trade": engine.HigherIsBetter, "worst_trade": engine.HigherIsBetter,
		"sqn": engine.HigherIsBetter, "avg_trade_bars": engine.EitherSide, "exposure": engine.EitherSide,
		"max_drawdown_bars": engine.LowerIsBetter,
	} {
		if got := engine.MetricSense(name); got != want {
			t.Errorf("MetricSense(%s) = %v, want %v", name, got, want)
		}
		if o, err := engine.ParseObjective(name, 0, 0); err != nil || o.Minimise != (want == engine.LowerIsBetter) {
			t.Errorf("ParseObjective(%s) = %+v, %v", name, o, err)
		}
	}
}

// TestBuyHoldReturn: close[n-1]/close[0] - 1 of hand-made bars; 0 for one
// bar, NaN for none; and of the embedded BTC/USDT minutes' first 5,000
// bars (0.0712%, what golden_run.json's buy_hold_return holds).
func TestBuyHoldReturn(t *testing.T) {
	for _, c := range []struct {
		close []float64
		want  float64
	}{{[]float64{100, 90, 125}, 0.25}, {[]float64{80, 200, 60}, -0.25}, {[]float64{7}, 0}} {
		b := engine.Bars{Close: c.close}
		if got := engine.BuyHoldReturn(&b); got != c.want {
			t.Errorf("BuyHoldReturn(%v) = %v, want %v", c.close, got, c.want)
		}
	}
	if got := engine.BuyHoldReturn(&engine.Bars{}); !math.IsNaN(got) {
		t.Errorf("no bars: %v, want NaN", got)
	}
	// The file's first close is 105114.88, its 5,000th 105189.77.
	ds := head(openDataset(t, "embedded:btcusdt-1m"), 5000)
	if got, want := engine.BuyHoldReturn(&ds.Bars), 105189.77/105114.88-1; math.Abs(got-want) > 1e-15 {
		t.Errorf("btcusdt[:5000]: %v, want %v", got, want)
	}
}
