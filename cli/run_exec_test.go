package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
	"sweepbench/strategy"
)

// csvRows runs `sweepbench run ARGS --format csv --out F` and returns the
// rows of F as maps from column to text, and the header.
func csvRows(t *testing.T, args ...string) ([]map[string]string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rows.csv")
	if _, _, e := execute(t, append(args, "--format", "csv", "--out", path)...); e != "" {
		t.Fatal(e)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for j, v := range rec {
			row[recs[0][j]] = v
		}
		rows = append(rows, row)
	}
	return rows, recs[0]
}

func csvFloat(t *testing.T, row map[string]string, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[col], 64)
	if err != nil {
		t.Fatalf("column %s: %q: %v", col, row[col], err)
	}
	return v
}

// TestRunStopsNextOpen: `run --strategy cross --fast ema:5:15:5 --slow
// sma:20:40:10 --param stop_loss=0.01:0.03:0.01 --fill next-open` on the
// embedded BTC bars resampled to 1h (721 bars) writes a stop_loss column
// after the legs and 3 x 9 = 27 combos; a stop of 1% moves the combos
// (ema 5 / sma 20: return -10.1% against -3.7% without stops, flat bars
// 93 against 19: a stopped trade waits flat for the next signal, so the
// trade counts stay 49), the widest stop that is never hit gives the run
// without stops bit for bit, and every row's metrics equal a direct
// recomputation (strategy.Evaluate, then reference.BacktestPositionsX
// with the bars' Exec and the combo's stop), whose trace names the
// stopped trades' exit reason "stop" and their exit prices at or beyond
// the stop level.
func TestRunStopsNextOpen(t *testing.T) {
	base := []string{"run", "--data", "embedded:btcusdt-1m", "--timeframe", "1h", "--strategy", "cross", "--fast", "ema:5:15:5",
		"--slow", "sma:20:40:10", "--fill", "next-open", "--backend", "reference", "--precision", "fp64", "--no-save", "-q"}
	rows, head := csvRows(t, append(base, "--param", "stop_loss=0.01:0.03:0.01")...)
	plain, _ := csvRows(t, base...)
	if len(rows) != 27 || len(plain) != 9 {
		t.Fatalf("%d rows with stops, %d without: want 27 and 9", len(rows), len(plain))
	}
	if strings.Join(head[3:9], ",") != "strategy,fast_kind,fast,slow_kind,slow,stop_loss" {
		t.Fatalf("header %v", head)
	}

	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.Timeframe, spec.Backend, spec.Precision = "embedded:btcusdt-1m", 0, "1h", "reference", "fp64"
	spec.Strategy, spec.Fill = "cross", "next-open"
	spec.Params = map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10", "stop_loss": "0.01:0.03:0.01"}
	st, err := spec.Build(backends())
	if err != nil {
		t.Fatal(err)
	}
	g, ok := strategy.GridOf(st.Grid.Strategy)
	if !ok || !st.Grid.Strategy.Memory() || g.Len() != 27 {
		t.Fatalf("grid %v (memory %v)", g, st.Grid.Strategy.Memory())
	}
	bars := &st.Dataset.Bars
	if bars.Len() != 721 {
		t.Fatalf("%d bars, want 721", bars.Len())
	}
	in := strategy.NewInputs[float64](bars, engine.SourceClose)
	r := kernels.BarReturns[float64](bars)
	x := reference.NewExec[float64](bars)
	pos := make([]strategy.State, bars.Len())
	stopped := 0
	for i, row := range rows {
		c := g.At(i)
		if row["fast"] != c.Values[0].String() || row["slow"] != c.Values[1].String() || row["stop_loss"] != c.Values[2].String() {
			t.Fatalf("row %d is %v, combo %v", i, row, c.Values)
		}
		first, err := strategy.Evaluate(g, c, in, strategy.Direct, pos, nil)
		if err != nil {
			t.Fatal(err)
		}
		xc := x.WithStops(g.Stops(c))
		var sc reference.Scratch[float64]
		m := reference.BacktestPositionsX(pos, r, first, st.Params, xc, &sc, nil, 0)
		for _, col := range []string{"total_return", "sharpe", "total_trades", "flat_bars", "profit_factor", "expectancy", "avg_trade_bars"} {
			want, _ := m.Value(col)
			if got := csvFloat(t, row, col); got != want {
				t.Errorf("row %d (%s): %s %v, recomputed %v", i, row["stop_loss"], col, got, want)
			}
		}
		_, tr := reference.BacktestPositionsTraceX(pos, r, first, st.Params, xc)
		for _, td := range tr.Trades {
			if td.Reason != engine.ExitStop {
				continue
			}
			stopped++
			level := td.EntryPrice * (1 - float64(td.Side)*c.Values[2].Float64())
			if td.Side == 1 && td.ExitPrice > level*(1+1e-12) || td.Side == -1 && td.ExitPrice < level*(1-1e-12) {
				t.Errorf("row %d trade %+v: exit %v not beyond the stop level %v", i, td, td.ExitPrice, level)
			}
		}
	}
	if stopped == 0 {
		t.Error("no trade was stopped: the case tests little")
	}
	// ema 5 / sma 20: stop 1% (row 0) against none (plain row 0), stop 3%
	// (row 2, never hit) equal to none.
	if a, b := csvFloat(t, rows[0], "total_return"), csvFloat(t, plain[0], "total_return"); a == b {
		t.Errorf("stop 1%%: return %v, the same as without stops", a)
	}
	if a, b := csvFloat(t, rows[0], "flat_bars"), csvFloat(t, plain[0], "flat_bars"); a != 93 || b != 19 {
		t.Errorf("flat bars %v with a 1%% stop, %v without: want 93 and 19", a, b)
	}
	if a, b := csvFloat(t, rows[0], "total_trades"), csvFloat(t, plain[0], "total_trades"); a != 49 || b != 49 {
		t.Errorf("trades %v with a 1%% stop, %v without: want 49 and 49", a, b)
	}
	for _, col := range []string{"total_return", "sharpe", "flat_bars", "total_trades"} {
		if rows[2][col] != plain[0][col] {
			t.Errorf("stop 3%% (never hit): %s %s, without stops %s", col, rows[2][col], plain[0][col])
		}
	}
}

// TestRunHullNextOpen: hull with --fill next-open, --slippage 0.0005 and
// --risk-free 0.04 on the reference (3,000 bars, hma 20:40:20 x hma3
// 30:60:30, both precisions) writes, for every combo and precision, the
// metrics of reference.BacktestTraceX over the combo's series with the
// bars' Exec (the trace's loop, recomputed here), which differ from the
// fills at the close (the same study with --fill close).
func TestRunHullNextOpen(t *testing.T) {
	base := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "20:40:20", "--hma3", "30:60:30",
		"--slippage", "0.0005", "--risk-free", "0.04", "--backend", "reference", "--no-save", "-q"}
	rows, _ := csvRows(t, append(base, "--fill", "next-open")...)
	closeRows, _ := csvRows(t, base...)
	if len(rows) != 8 || len(closeRows) != 8 {
		t.Fatalf("%d rows next-open, %d close: want 2 precisions x 4 combos", len(rows), len(closeRows))
	}
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.Backend = "embedded:btcusdt-1m", 3000, "20:40:20", "30:60:30", "reference"
	spec.Fill, spec.Slippage, spec.RiskFree = "next-open", 0.0005, 0.04
	st, err := spec.Build(backends())
	if err != nil {
		t.Fatal(err)
	}
	if st.Params.Fill != engine.FillNextOpen || st.Params.Slippage != 0.0005 || st.Params.RiskFree != 0.04 {
		t.Fatalf("params %+v", st.Params)
	}
	bars := &st.Dataset.Bars
	ind64, err := reference.BuildIndicators[float64](t.Context(), bars, st.Grid, engine.SourceClose, engine.Direct)
	if err != nil {
		t.Fatal(err)
	}
	ind32, err := reference.BuildIndicators[float32](t.Context(), bars, st.Grid, engine.SourceClose, engine.Direct)
	if err != nil {
		t.Fatal(err)
	}
	x64, x32 := reference.NewExec[float64](bars), reference.NewExec[float32](bars)
	for k, row := range rows {
		hma, _ := strconv.Atoi(row["hma"])
		hma3, _ := strconv.Atoi(row["hma3"])
		c := engine.Combo{HMA: hma, HMA3: hma3}
		var m engine.Metrics
		var tr *engine.Trace
		switch row["precision"] {
		case "fp64":
			m, tr = reference.BacktestTraceX(ind64.H[hma], ind64.H3[hma3], ind64.R, engine.ComboWarmup(c), st.Params, x64)
		case "fp32":
			m, tr = reference.BacktestTraceX(ind32.H[hma], ind32.H3[hma3], ind32.R, engine.ComboWarmup(c), st.Params, x32)
		default:
			t.Fatalf("row %d: precision %q", k, row["precision"])
		}
		for _, col := range []string{"total_return", "sharpe", "sortino", "max_drawdown", "total_trades", "long_bars", "expectancy"} {
			want, _ := m.Value(col)
			if got := csvFloat(t, row, col); got != want && !(got != got && want != want) {
				t.Errorf("%s hma %d hma3 %d: %s %v, BacktestTraceX %v", row["precision"], hma, hma3, col, got, want)
			}
		}
		if len(tr.Trades) == 0 || tr.Trades[0].EntryPrice != float64(x64.Open[tr.Trades[0].Entry]) && row["precision"] == "fp64" {
			t.Errorf("%s hma %d hma3 %d: first trade %+v: want its entry at the open of its entry bar", row["precision"], hma, hma3, tr.Trades)
		}
		if row["total_return"] == closeRows[k]["total_return"] {
			t.Errorf("%s hma %d hma3 %d: next-open return %s equals the close fill's", row["precision"], hma, hma3, row["total_return"])
		}
	}
}

// TestExecErrorsPhrased: the execution options' refusals read as the
// flags: a stop_loss not above 0 or not below 1, a take_profit of 0, a
// stop on hull (which names the cross grid that takes it), a --fill or a
// --slippage out of range, and fill next-open on bars without opens
// (which names the dataset).
func TestExecErrorsPhrased(t *testing.T) {
	cross := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "500", "--strategy", "cross", "--fast", "ema:5:10:5",
		"--slow", "sma:20", "--backend", "reference", "--no-save", "-q"}
	hull := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "500", "--hma", "20", "--hma3", "30",
		"--backend", "reference", "--no-save", "-q"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{append(cross, "--param", "stop_loss=0"), []string{`--param "stop_loss=0"`, "0 is not above 0: want stop_loss > 0"}},
		{append(cross, "--param", "stop_loss=1.5"), []string{`--param "stop_loss=1.5"`, "1.5 is not below 1: want 0 < stop_loss < 1"}},
		{append(cross, "--param", "trail=0.5:1:0.25"), []string{`--param "trail=0.5:1:0.25"`, "1 is not below 1: want 0 < trail < 1"}},
		{append(cross, "--param", "take_profit=0"), []string{`--param "take_profit=0"`, "0 is not above 0: want take_profit > 0"}},
		{append(cross, "--param", "stop=0.01"), []string{`--param "stop=0.01"`, "unknown parameter of cross (its parameters: fast, slow; and the stops stop_loss, take_profit, trail)"}},
		{append(hull, "--param", "stop_loss=0.02"), []string{`--param "stop_loss=0.02"`, "hull takes no stops", "--strategy cross --fast hma3:RANGE --slow hma:RANGE"}},
		{append(hull, "--fill", "tomorrow"), []string{"--fill", "want close or next-open"}},
		{append(hull, "--slippage", "1.5"), []string{"--slippage", "want a fraction per unit of position change in [0, 1)"}},
		{[]string{"bench", "--data", "embedded:btcusdt-1m", "--head", "500", "--fill", "next-open", "-q"}, []string{"--fill next-open / --risk-free 0", "bench's ladder times Part 1's kernels"}},
		{[]string{"bench", "--data", "embedded:btcusdt-1m", "--head", "500", "--risk-free", "0.04", "-q"}, []string{"--fill close / --risk-free 0.04"}},
	} {
		_, _, e := execute(t, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(e, w) {
				t.Errorf("%v:\n%s\nlacks %q", tc.args[len(tc.args)-2:], e, w)
			}
		}
	}

	// Bars of closes only (no loader gives them; a program may).
	ds := &data.Dataset{Info: data.Info{Name: "closes.csv"}}
	for i := range 300 {
		ds.Bars.Time = append(ds.Bars.Time, int64(i)*60_000_000_000)
		ds.Bars.Close = append(ds.Bars.Close, 100+float64(i%7))
	}
	spec := engine.DefaultSpec()
	spec.HMA, spec.HMA3, spec.Backend, spec.Fill, spec.BarsPerYear = "20", "30", "reference", "next-open", 525600
	_, err := spec.Study(ds, backends())
	var fe *engine.FieldError
	if !errors.As(err, &fe) || fe.Field != engine.FieldFill {
		t.Fatalf("closes only, next-open: %v", err)
	}
	if msg := phrase(err); !strings.Contains(msg, "--fill") || !strings.Contains(msg, "closes.csv has no open prices") {
		t.Errorf("closes only, next-open: %q", msg)
	}
	spec.Fill = "close"
	if _, err := spec.Study(ds, backends()); err != nil {
		t.Errorf("closes only, close: %v", err)
	}
}

// gpuStub is a GPU backend that computes nothing: a study that reaches
// its Prepare fails, so a study that completes ran on the fallback.
type gpuStub struct{}

func (gpuStub) Name() string                      { return "cuda" }
func (gpuStub) Available() error                  { return nil }
func (gpuStub) Devices() ([]engine.Device, error) { return []engine.Device{{Name: "stub"}}, nil }
func (gpuStub) Prepare(context.Context, *engine.Job) (engine.Kernel, error) {
	return nil, errors.New("the stub GPU computes nothing")
}

// TestGPUFallsBackForExecOptions: on a GPU backend, a hull study with fill
// next-open runs every lane on the reference, with the note "cuda has no
// fill next-open kernel yet: every lane runs on reference" (as for a
// strategy family), and gives the reference's metrics; slippage, a
// risk-free rate and a trade metric for objective stay on the GPU (no
// note: the kernels keep the trade accumulators and the rate per bar).
func TestGPUFallsBackForExecOptions(t *testing.T) {
	reg := &engine.Registry{}
	reg.Register(gpuStub{})
	reg.Register(reference.New())
	refOnly := &engine.Registry{}
	refOnly.Register(reference.New())
	for _, tc := range []struct {
		set  func(*engine.Spec)
		note string
	}{
		{func(s *engine.Spec) { s.Fill = "next-open" }, "cuda has no fill next-open kernel yet: every lane runs on reference"},
		{func(s *engine.Spec) { s.RiskFree = 0.04 }, ""},
		{func(s *engine.Spec) { s.Objective = "profit_factor" }, ""},
		{func(s *engine.Spec) { s.Slippage = 0.0005 }, ""},
	} {
		spec := engine.DefaultSpec()
		spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.Backend = "embedded:btcusdt-1m", 2000, "20:40:20", "30", "cuda"
		tc.set(&spec)
		st, err := spec.Build(reg)
		if err != nil {
			t.Fatal(err)
		}
		if tc.note == "" {
			if strings.Contains(st.Note, "every lane runs on") || st.OnReference() {
				t.Errorf("%+v: note %q, on the reference %v: want the GPU", spec, st.Note, st.OnReference())
			}
			continue
		}
		if !strings.Contains(st.Note, tc.note) || !st.OnReference() {
			t.Errorf("note %q lacks %q (on the reference: %v)", st.Note, tc.note, st.OnReference())
		}
		rep, err := engine.RunStudy(context.Background(), st, engine.StudyOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.note, err)
		}
		spec.Backend = "reference"
		ref, err := spec.Build(refOnly)
		if err != nil {
			t.Fatal(err)
		}
		want, err := engine.RunStudy(context.Background(), ref, engine.StudyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
			got, w := rep.Run(p), want.Run(p)
			if got == nil || w == nil || len(got.Results) != 2 || len(w.Results) != 2 {
				t.Fatalf("%s %s: runs %v %v", tc.note, p, got, w)
			}
			for i := range got.Results {
				if a, b := got.Results[i].Metrics, w.Results[i].Metrics; a.TotalReturn != b.TotalReturn || a.Sharpe != b.Sharpe || a.TotalTrades != b.TotalTrades {
					t.Errorf("%s %s combo %d: %+v, the reference's %+v", tc.note, p, i, a, b)
				}
			}
		}
	}
}

// TestSessionsListShowsExecution: two saved sessions of one grid that
// differ only in their execution options are told apart by `sessions ls`'s
// settings column (fill, slippage, risk-free), and the Part 1 one shows
// none of them.
func TestSessionsListShowsExecution(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	base := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "2000", "--hma", "20", "--hma3", "30",
		"--backend", "reference", "-q", "--db", db}
	for _, extra := range [][]string{nil, {"--fill", "next-open", "--slippage", "0.001", "--risk-free", "0.04"}} {
		if _, _, e := execute(t, append(base, extra...)...); e != "" {
			t.Fatal(e)
		}
	}
	ls, _, e := execute(t, "sessions", "ls", "--db", db)
	if e != "" {
		t.Fatal(e)
	}
	lines := strings.Split(strings.TrimSpace(ls), "\n")
	if len(lines) != 3 {
		t.Fatalf("sessions ls:\n%s", ls)
	}
	var exec, plain string
	for _, l := range lines[1:] {
		if strings.HasPrefix(strings.TrimSpace(l), "2 ") {
			exec = l
		} else {
			plain = l
		}
	}
	if !strings.Contains(exec, "fill next-open, slippage 0.1%, risk-free 4%") {
		t.Errorf("session 2's settings lack its execution options:\n%s", exec)
	}
	if strings.Contains(plain, "fill") || strings.Contains(plain, "slippage") || strings.Contains(plain, "risk-free") {
		t.Errorf("session 1 (Part 1) names execution options:\n%s", plain)
	}
}
