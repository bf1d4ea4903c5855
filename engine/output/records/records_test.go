package records

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
	"sweepbench/engine/output"
)

// fourBars is a hand-built combo over 4 one-minute bars: a long entered
// at bar 0's close left by a stop at 99.5 in bar 1, then a short entered
// at bar 2's next open (100.25) open at the end.
func fourBars() (*engine.ComboDetail, *engine.Bars) {
	t0 := int64(1_700_000_000) * 1e9
	b := &engine.Bars{Time: []int64{t0, t0 + 60e9, t0 + 120e9, t0 + 180e9}, Close: []float64{100, 99, 101, 100.5}}
	tr := &engine.Trace{
		Pos:     []int8{1, 0, -1, 0},
		Equity:  []float64{1, 0.995, 0.995, 1.0025},
		Returns: []float64{0, -0.005, 0, 0.0075376884422110},
		Trades: []engine.Trade{
			{Entry: 0, Exit: 1, Side: 1, Return: -0.005, Bars: 1, Reason: engine.ExitStop, EntryPrice: 100, ExitPrice: 99.5},
			{Entry: 3, Exit: 3, Side: -1, Return: 0.0025, Bars: 0, Reason: engine.ExitEnd, EntryPrice: 100.25, ExitPrice: 100.5},
		},
	}
	return &engine.ComboDetail{Precision: engine.FP64, Close: b.Close, H: []float64{math.NaN(), 99.5, 100, 100.25},
		H3: []float64{math.NaN(), math.NaN(), math.Inf(1), 100}, Trace: tr}, b
}

// TestTradesAndBarsText: the CSV and JSON lines of a hand-built combo,
// byte for byte: its fill prices and exit reasons as the trace holds
// them, times in RFC 3339 UTC, drawdown 1 - equity/peak (0.005 after the
// stop, 0 at the new peak), non-finite values inf and nan (JSON strings).
func TestTradesAndBarsText(t *testing.T) {
	d, b := fourBars()
	tt, err := Trades(d, b)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := tt.Write(&got, output.RowsCSV); err != nil {
		t.Fatal(err)
	}
	want := "entry_time,entry_index,entry_price,exit_time,exit_index,exit_price,side,bars_held,return,exit_reason\n" +
		"2023-11-14T22:13:20Z,0,100,2023-11-14T22:14:20Z,1,99.5,long,1,-0.005,stop\n" +
		"2023-11-14T22:16:20Z,3,100.25,2023-11-14T22:16:20Z,3,100.5,short,0,0.0025,end\n"
	if got.String() != want {
		t.Errorf("trades csv:\n%s\nwant:\n%s", got.String(), want)
	}
	bt, err := Bars(d, b)
	if err != nil {
		t.Fatal(err)
	}
	got.Reset()
	if err := bt.Write(&got, output.RowsJSONL); err != nil {
		t.Fatal(err)
	}
	want = `{"time":"2023-11-14T22:13:20Z","index":0,"close":100,"h":"nan","h3":"nan","position":1,"return":0,"equity":1,"drawdown":0}
{"time":"2023-11-14T22:14:20Z","index":1,"close":99,"h":99.5,"h3":"nan","position":0,"return":-0.005,"equity":0.995,"drawdown":0.0050000000000000044}
{"time":"2023-11-14T22:15:20Z","index":2,"close":101,"h":100,"h3":"inf","position":-1,"return":0,"equity":0.995,"drawdown":0.0050000000000000044}
{"time":"2023-11-14T22:16:20Z","index":3,"close":100.5,"h":100.25,"h3":100,"position":0,"return":0.007537688442211,"equity":1.0025,"drawdown":0}
`
	if got.String() != want {
		t.Errorf("bars jsonl:\n%s\nwant:\n%s", got.String(), want)
	}
}

// TestPricesOfThePlainLoop: a trace without fill prices (the plain loop,
// fill close) gets the closes of its entry and exit bars, rounded to
// fp32 in an fp32 run.
func TestPricesOfThePlainLoop(t *testing.T) {
	d, b := fourBars()
	b.Close[0], b.Close[1] = 100.1, 99.3
	d.Trades[0].EntryPrice, d.Trades[0].ExitPrice = 0, 0
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		d.Precision = p
		tt, err := Trades(d, b)
		if err != nil {
			t.Fatal(err)
		}
		e, x := tt.Column("entry_price").Float[0], tt.Column("exit_price").Float[0]
		we, wx := 100.1, 99.3
		if p == engine.FP32 {
			we, wx = float64(float32(100.1)), float64(float32(99.3))
		}
		if e != we || x != wx {
			t.Errorf("%s: prices %v, %v, want %v, %v", p, e, x, we, wx)
		}
		if tt.Column("entry_price").Float[1] != 100.25 {
			t.Errorf("%s: a price the trace holds was replaced", p)
		}
	}
}

// TestSignalColumns: a strategy's lines are named by their labels in
// snake_case; one named like a fixed column (breakout's close) is
// signal_NAME.
func TestSignalColumns(t *testing.T) {
	d, b := fourBars()
	v := []float64{1, 2, 3, 4}
	d.H, d.H3 = nil, nil
	d.Signal = &engine.Signal{Lines: []engine.SignalLine{{Name: "close", Values: v}, {Name: "up entry 20", Values: v}, {Name: "fast EMA 5", Values: v}}}
	bt, err := Bars(d, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"time", "index", "close", "signal_close", "up_entry_20", "fast_ema_5", "position", "return", "equity", "drawdown"}
	if got := bt.Names(); !slices.Equal(got, want) {
		t.Errorf("columns %v, want %v", got, want)
	}
	for s, w := range map[string]string{"+entry": "entry", "z 20": "z_20", "--": "line", "slow  sma--30": "slow_sma_30"} {
		if g := SnakeCase(s); g != w {
			t.Errorf("SnakeCase(%q) = %q, want %q", s, g, w)
		}
	}
	d.Trace.Returns = nil
	if _, err := Bars(d, b); err == nil {
		t.Error("a trace without returns: no error")
	}
}

// TestNoTrades: a combo that never trades writes the header alone (CSV),
// nothing (JSON lines), a Parquet file of the columns and no rows.
func TestNoTrades(t *testing.T) {
	d, b := fourBars()
	d.Trades = nil
	tt, err := Trades(d, b)
	if err != nil || tt.Len() != 0 {
		t.Fatalf("%v, %d rows", err, tt.Len())
	}
	for f, want := range map[output.RowFormat]string{output.RowsCSV: strings.Join(TradeColumns, ",") + "\n", output.RowsJSONL: ""} {
		var got bytes.Buffer
		if err := tt.Write(&got, f); err != nil || got.String() != want {
			t.Errorf("%s: %q (%v), want %q", f, got.String(), err, want)
		}
	}
	var pq bytes.Buffer
	if err := tt.Write(&pq, output.RowsParquet); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(pq.Bytes()), int64(pq.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range pf.Schema().Fields() {
		names = append(names, f.Name())
	}
	if pf.NumRows() != 0 || !slices.Equal(names, TradeColumns) {
		t.Errorf("parquet: %d rows, columns %v", pf.NumRows(), names)
	}
}
