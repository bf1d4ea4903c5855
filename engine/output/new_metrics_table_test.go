package output_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/output"
)

// TestTableAndJSONShowExecutionAndNewMetrics: a report with non-default
// execution options (fill next-open, slippage 0.05%, a 4% risk-free rate)
// states them in the table's head and the JSON's params (fill, slippage,
// risk_free), with the buy-and-hold return (the table in percent, the
// JSON's buy_hold_return as the fraction); the top list shows the profit
// factor, expectancy, SQN and exposure of a combo that has them, and
// "n/a" for a combo whose trade metrics were not computed (a GPU lane's),
// never "nan"; the JSON spells those "nan".
func TestTableAndJSONShowExecutionAndNewMetrics(t *testing.T) {
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 20, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 12, Step: 1}}
	computed := engine.Metrics{TotalReturn: 0.1, Sharpe: 2, TotalTrades: 4, LongBars: 60, ShortBars: 20, FlatBars: 19,
		ProfitFactor: 2.5, Expectancy: 0.025, AvgWin: 0.05, AvgLoss: -0.05, BestTrade: 0.07, WorstTrade: -0.05,
		AvgTradeBars: 20, Exposure: 80.0 / 99, SQN: 1.25, MaxDrawdownBars: 12}
	gpu := engine.Metrics{TotalReturn: 0.05, Sharpe: 1, TotalTrades: 3, LongBars: 30, ShortBars: 30, FlatBars: 39}
	gpu.NoTradeMetrics(100)
	rep := &engine.Report{Grid: g, Backend: "reference", BuyHold: 0.125,
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600, Fill: engine.FillNextOpen, Slippage: 0.0005, RiskFree: 0.04},
		Runs: []*engine.Run{{Backend: "reference", Precision: engine.FP64, Grid: g, Status: engine.StatusComplete,
			Results: []engine.ComboResult{{Index: 0, Combo: g.At(0), Metrics: computed}, {Index: 1, Combo: g.At(1), Metrics: gpu}}}},
		Requested: []engine.Precision{engine.FP64}, Created: time.Unix(0, 0).UTC()}
	var b bytes.Buffer
	if err := output.WriteTable(&b, rep, 10); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	for _, want := range []string{
		"exec    fill next-open; slippage 0.05% per unit of position change; risk-free 4%/year (sharpe, sortino)\n",
		"hold    buy & hold 12.50% (first close to last, no fee)\n",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	var head, row1, row2 []string
	for _, l := range strings.Split(table, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "hma":
			head = f
		case head != nil && len(f) == len(head) && f[0] == "10" && row1 == nil:
			row1 = f
		case head != nil && len(f) == len(head) && f[0] == "20" && row2 == nil:
			row2 = f
		}
	}
	if head == nil || row1 == nil || row2 == nil {
		t.Fatalf("no top list with both combos:\n%s", table)
	}
	cell := func(row []string, col string) string {
		for i, h := range head {
			if h == col {
				return row[i]
			}
		}
		t.Fatalf("no column %s in %q", col, head)
		return ""
	}
	// expectancy and exposure in percent (80/99 = 80.81%), the ratios with
	// three decimals.
	for col, want := range map[string]string{"pf": "2.500", "expect": "2.50", "sqn": "1.250", "expo": "80.81"} {
		if got := cell(row1, col); got != want {
			t.Errorf("combo 10x12 %s: %q, want %q", col, got, want)
		}
	}
	// Not computed: n/a, but the exposure follows from the bar counts (60/99).
	for col, want := range map[string]string{"pf": "n/a", "expect": "n/a", "sqn": "n/a", "expo": "60.61"} {
		if got := cell(row2, col); got != want {
			t.Errorf("combo 20x12 (trade metrics not computed) %s: %q, want %q", col, got, want)
		}
	}

	b.Reset()
	if err := output.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		BuyHold json.RawMessage `json:"buy_hold_return"`
		Params  map[string]any  `json:"params"`
		Runs    []struct {
			Combos []map[string]any `json:"combos"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if string(doc.BuyHold) != "0.125" || doc.Params["fill"] != "next-open" || doc.Params["slippage"] != 0.0005 || doc.Params["risk_free"] != 0.04 {
		t.Errorf("JSON buy_hold_return %s, params %v", doc.BuyHold, doc.Params)
	}
	c1, c2 := doc.Runs[0].Combos[0], doc.Runs[0].Combos[1]
	if c1["profit_factor"] != 2.5 || c1["sqn"] != 1.25 || c1["max_drawdown_bars"] != 12.0 || c2["profit_factor"] != "nan" || c2["exposure"] != 0.6060606060606061 {
		t.Errorf("JSON combos %v\n%v", c1, c2)
	}
	if math.Abs(60.0/99-0.6060606060606061) > 1e-16 {
		t.Fatal("60/99")
	}

	// The defaults: no exec line, no such params.
	rep.Params = engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}
	b.Reset()
	if err := output.WriteTable(&b, rep, 10); err != nil || strings.Contains(b.String(), "exec ") {
		t.Errorf("defaults: an exec line (%v):\n%s", err, b.String())
	}
	b.Reset()
	if err := output.WriteJSON(&b, rep); err != nil || strings.Contains(b.String(), `"fill"`) || strings.Contains(b.String(), `"slippage"`) || strings.Contains(b.String(), `"risk_free"`) {
		t.Errorf("defaults: execution options in the JSON (%v)", err)
	}
}
