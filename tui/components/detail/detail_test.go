package detail

import (
	"strings"
	"testing"

	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/theme"
)

// TestTradeNumbersWhole (issue 15, defect 1): a combo of 12,345 trades
// lists trade 12,345 as "12345", not clipped to "1...".
func TestTradeNumbersWhole(t *testing.T) {
	trades := make([]engine.Trade, 12345)
	for i := range trades {
		trades[i] = engine.Trade{Entry: 2 * i, Exit: 2*i + 1, Side: 1, Return: 0.001}
	}
	d := &engine.ComboDetail{Combo: engine.Combo{HMA: 10, HMA3: 12}, Precision: engine.FP64, Trace: &engine.Trace{Trades: trades},
		Metrics: engine.Metrics{TotalTrades: len(trades)}}
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true)}
	state := &common.RunState{Selected: 0, Results: &common.Results{}, Inspect: &common.Inspection{Index: 0, Combo: d.Combo, D64: d}}
	m := New(ctx, state)
	m.Reload()
	m.SetSize(40, 20)
	m.Focus(true)
	m.tbl.SetCursor(len(trades) - 1)
	v := m.View()
	if !strings.Contains(strings.Join(strings.Fields(v), " "), "12,345 trades") {
		t.Errorf("the header's trade count is not whole:\n%s", v)
	}
	if !strings.Contains(v, "12345 long") || !strings.Contains(v, "12344 long") {
		t.Fatalf("the last trades' numbers are not whole:\n%s", v)
	}
}
