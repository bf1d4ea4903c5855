package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
)

// benchReport is a hand-built report the size of the device run:
// a 320 x 320 hull grid (102,400 combos), handReport's.
func benchReport() *engine.Report {
	return handReport(engine.Grid{HMA: engine.Range{Start: 2, Stop: 321, Step: 1}, HMA3: engine.Range{Start: 2, Stop: 321, Step: 1}})
}

// handReport is a report on grid g built by hand: an fp64 and an fp32 run
// of full-precision metrics (random, every digit significant; one combo
// in 64 with nan and +inf trade metrics as a GPU lane leaves them, one in
// 97 with -inf and -0), and a parity report with one row per combo (one
// in 50 with trades_fp64 0: rel_dn +inf) and MaxFlipsListed flips.
func handReport(g engine.Grid) *engine.Report {
	rng := rand.New(rand.NewPCG(29, 29))
	n := g.Len()
	rep := &engine.Report{Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Backend: "cuda",
		Requested: []engine.Precision{engine.FP64, engine.FP32}, BuyHold: 0.25, Created: time.Unix(1e9, 0).UTC()}
	for _, p := range rep.Requested {
		run := &engine.Run{Backend: "cuda", Device: "NVIDIA H200", Precision: p, Grid: g, Status: engine.StatusComplete,
			Elapsed: time.Second, Results: make([]engine.ComboResult, n)}
		for i := range run.Results {
			m := engine.Metrics{TotalReturn: rng.NormFloat64(), CAGR: rng.NormFloat64(), Sharpe: 3 * rng.NormFloat64(),
				Sortino: 4 * rng.NormFloat64(), MaxDrawdown: rng.Float64(), Calmar: rng.NormFloat64(), WinRate: rng.Float64(),
				TotalTrades: rng.IntN(5000), VaR95: -rng.Float64() / 100, CVaR95: -rng.Float64() / 50, Omega: rng.Float64() * 2,
				LongBars: rng.IntN(75000), ShortBars: rng.IntN(75000), FlatBars: rng.IntN(1000),
				ProfitFactor: rng.Float64() * 2, Expectancy: rng.NormFloat64() / 1000, AvgWin: rng.Float64() / 100, AvgLoss: -rng.Float64() / 100,
				BestTrade: rng.Float64() / 10, WorstTrade: -rng.Float64() / 10, AvgTradeBars: rng.Float64() * 100, Exposure: rng.Float64(),
				SQN: rng.NormFloat64() * 5, MaxDrawdownBars: float64(rng.IntN(150000))}
			if i%64 == 0 {
				m.ProfitFactor, m.Expectancy, m.SQN = math.NaN(), math.NaN(), math.Inf(1)
			}
			if i%97 == 1 {
				m.Calmar, m.MaxDrawdown = math.Inf(-1), math.Copysign(0, -1)
			}
			run.Results[i] = engine.ComboResult{Index: i, Combo: g.At(i), Metrics: m}
		}
		rep.Runs = append(rep.Runs, run)
	}
	par := &engine.Parity{Verdict: engine.VerdictPass, Reasons: []string{}, Tolerance: engine.DefaultBorderline, CombosCompared: n,
		Combos: make([]engine.ComboParity, n)}
	for i := range par.Combos {
		t64 := rep.Runs[0].Results[i].TotalTrades
		par.Combos[i] = engine.ComboParity{Index: i, Combo: g.At(i), Trades64: t64, Trades32: t64 + rng.IntN(3) - 1,
			RelDn: rng.Float64() / 100, DPnLpp: rng.NormFloat64() / 10, RelDPnL: rng.Float64() / 100, Flips: rng.IntN(10),
			MaxFlipMargin: rng.Float64() / 1e5}
		if i%50 == 3 {
			par.Combos[i].Trades64, par.Combos[i].RelDn = 0, math.Inf(1)
		}
	}
	for i := range min(engine.MaxFlipsListed, 3*n) {
		c := rng.IntN(n)
		par.Flips = append(par.Flips, engine.Flip{Index: c, Combo: g.At(c), Bar: rng.IntN(150000), Time: int64(1.7e18) + int64(i)*60e9,
			Pos64: 1, Pos32: -1, Margin: rng.Float64() / 1e5, Borderline: i%2 == 0})
	}
	rep.Parity, rep.ParityOf = par, "fp32 vs fp64"
	return rep
}

// BenchmarkReportWriters writes benchReport (204,800 rows) as the JSON
// report and as JSON lines, to io.Discard: the cost of the encoding alone.
//
//	go test ./engine/output -run '^$' -bench ReportWriters -benchmem -cpuprofile cpu.out
func BenchmarkReportWriters(b *testing.B) {
	rep := benchReport()
	for _, c := range []struct {
		name  string
		write func(io.Writer, *engine.Report) error
	}{{"json", WriteJSON}, {"jsonl", WriteJSONL}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.write(io.Discard, rep); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWriteJSONRowsAreTheEncoders: the JSON report's rows, which WriteJSON
// writes by hand (jsonFields), are byte for byte what encoding/json makes
// of the report's types (MarshalReport, indented), for hand-built reports
// of hull grids and of crossover and z-score grids (legs of two kinds, a
// price leg, decimal thresholds) whose metrics and parity figures hold
// nan, +inf, -inf and -0; the 40 x 40 grid's rows (1,600, over
// rowsPerPiece) are formatted on 4 goroutines, the others' on one.
func TestWriteJSONRowsAreTheEncoders(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	grids := map[string]engine.Grid{"hull": {HMA: engine.Range{Start: 4, Stop: 10, Step: 2}, HMA3: engine.Range{Start: 5, Stop: 45, Step: 5}},
		"hull 40x40": {HMA: engine.Range{Start: 2, Stop: 41, Step: 1}, HMA3: engine.Range{Start: 2, Stop: 41, Step: 1}}}
	for name, params := range map[string]map[string]string{
		"cross":       {"fast": "ema:5:50:5", "slow": "sma:20:200:20"},
		"cross price": {"fast": "price", "slow": "wma:10:300:10"},
		"zscore":      {"length": "10:50:10", "entry": "1:3:0.5", "exit": "0.5"},
	} {
		st, err := engine.NewStrategy(strings.Fields(name)[0], params, false)
		if err != nil {
			t.Fatal(err)
		}
		grids[name] = engine.Grid{Strategy: st}
	}
	for name, g := range grids {
		t.Run(name, func(t *testing.T) {
			rep := handReport(g)
			if len(rep.Runs[0].Results) < 20 {
				t.Fatalf("grid of %d combos", len(rep.Runs[0].Results))
			}
			var got bytes.Buffer
			if err := WriteJSON(&got, rep); err != nil {
				t.Fatal(err)
			}
			one, err := MarshalReport(rep)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Indent(&want, one, "", "  "); err != nil {
				t.Fatal(err)
			}
			want.WriteByte('\n')
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				at := firstDiffAt(got.Bytes(), want.Bytes())
				t.Fatalf("WriteJSON differs from MarshalReport indented at byte %d: %q\nwant %q", at,
					got.Bytes()[max(0, at-80):min(got.Len(), at+80)], want.Bytes()[max(0, at-80):min(want.Len(), at+80)])
			}
			for _, w := range []string{`"sqn": "inf"`, `"profit_factor": "nan"`, `"calmar": "-inf"`, `"max_drawdown": -0,`, `"rel_dn": "inf"`} {
				if !strings.Contains(got.String(), w) {
					t.Errorf("no %s in the report", w)
				}
			}
		})
	}
}

// failAfter fails every write once n bytes have been written.
type failAfter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failAfter) Write(b []byte) (int, error) {
	if f.n < len(b) {
		k := max(f.n, 0)
		f.n = -1
		return k, errDiskFull
	}
	f.n -= len(b)
	return len(b), nil
}

// TestWriteJSONStopsOnWriteError: a write that fails in the combos (rows
// formatted on 4 goroutines) or in the parity rows ends WriteJSON with the
// writer's error, whatever the point.
func TestWriteJSONStopsOnWriteError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rep := handReport(engine.Grid{HMA: engine.Range{Start: 2, Stop: 61, Step: 1}, HMA3: engine.Range{Start: 2, Stop: 61, Step: 1}})
	var all bytes.Buffer
	if err := WriteJSON(&all, rep); err != nil {
		t.Fatal(err)
	}
	parity := bytes.Index(all.Bytes(), []byte(`"parity": {`))
	for _, at := range []int{0, 300 << 10, all.Len() / 3, parity + 1000, all.Len() - 10} {
		if err := WriteJSON(&failAfter{at}, rep); !errors.Is(err, errDiskFull) {
			t.Errorf("failing after %d of %d bytes: %v, want %v", at, all.Len(), err, errDiskFull)
		}
	}
}
