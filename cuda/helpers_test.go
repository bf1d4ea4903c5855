package cuda

import (
	"compress/gzip"
	"encoding/csv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/reference"
)

// randomBars is a fresh random walk of n one-minute bars: price steps of
// -2..+2 ticks (so unchanged closes, r = 0, and exact indicator ties are
// common, as on minute data), kept above 100 ticks.
func randomBars(rng *rand.Rand, n int, start, tick float64) *engine.Bars {
	b := &engine.Bars{
		Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n),
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	ticks := math.Round(start / tick)
	for i := 0; i < n; i++ {
		prev := ticks
		ticks += float64(rng.IntN(5) - 2)
		if ticks < 100 {
			ticks = 100 + (100 - ticks)
		}
		c := ticks * tick
		o := prev * tick
		b.Time[i] = t0 + int64(i)*int64(time.Minute)
		b.Open[i], b.Close[i] = o, c
		b.High[i] = math.Max(o, c) + tick*float64(rng.IntN(3))
		b.Low[i] = math.Min(o, c) - tick*float64(rng.IntN(3))
		b.Volume[i] = 1 + float64(rng.IntN(1000))
	}
	return b
}

// newRand returns a generator seeded from the clock (fresh inputs every
// run) and logs the seed so a failure can be replayed.
func newRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SWEEPBENCH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("random seed %d (SWEEPBENCH_SEED=%d replays it)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// filBars loads the first n bars of the embedded FIL/USDT one-minute file
// (engine/data/embedded), read straight from the repository so this test
// depends on no loader: timestamp (Unix seconds), open, high, low, close,
// volume. It skips the test when the file is not there.
func filBars(t testing.TB, n int) *engine.Bars {
	var f *os.File
	var err error
	for _, p := range []string{
		"../engine/data/embedded/filusdt_1m_2023-08_2023-11.csv.gz",
		"engine/data/embedded/filusdt_1m_2023-08_2023-11.csv.gz",
	} {
		if f, err = os.Open(p); err == nil {
			break
		}
	}
	if err != nil {
		t.Skipf("FIL data not found: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	cr := csv.NewReader(zr)
	if _, err := cr.Read(); err != nil { // header
		t.Fatal(err)
	}
	b := &engine.Bars{}
	for b.Len() < n {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := strconv.ParseInt(rec[0], 10, 64)
		v := make([]float64, 5)
		for k := range v {
			if v[k], err = strconv.ParseFloat(rec[k+1], 64); err != nil {
				t.Fatalf("FIL line %d: %v", b.Len()+2, err)
			}
		}
		b.Time = append(b.Time, ts*int64(time.Second))
		b.Open = append(b.Open, v[0])
		b.High = append(b.High, v[1])
		b.Low = append(b.Low, v[2])
		b.Close = append(b.Close, v[3])
		b.Volume = append(b.Volume, v[4])
	}
	if b.Len() < n {
		t.Fatalf("FIL data has %d bars, want %d", b.Len(), n)
	}
	return b
}

func mustRange(t testing.TB, name, s string) engine.Range {
	r, err := engine.ParseRange(name, s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func defaultParams() engine.Params {
	return engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600}
}

// relDiff is |a-b|/|b| (|a-b| when b = 0); equal infinities and NaNs are 0.
func relDiff(a, b float64) float64 {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return 0
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return math.Inf(1)
	}
	d := math.Abs(a - b)
	if b != 0 {
		d /= math.Abs(b)
	}
	return d
}

// compareMetrics checks trade counts identical and every metric within tol
// relative (cvarTol for cvar_95, whose sum runs in another order), and
// reports the worst relative difference per metric.
func compareMetrics(t testing.TB, label string, got, want []engine.Metrics, grid engine.Grid, tol, cvarTol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", label, len(got), len(want))
	}
	worst := map[string]float64{}
	bad := 0
	for i := range want {
		g, w := got[i], want[i]
		if g.TotalTrades != w.TotalTrades {
			bad++
			if bad <= 10 {
				t.Errorf("%s combo %d %+v: total_trades %d, want %d", label, i, grid.At(i), g.TotalTrades, w.TotalTrades)
			}
		}
		for _, name := range engine.MetricNames {
			gv, _ := g.Value(name)
			wv, _ := w.Value(name)
			d := relDiff(gv, wv)
			worst[name] = math.Max(worst[name], d)
			lim := tol
			if name == "cvar_95" {
				lim = cvarTol
			}
			if d > lim {
				bad++
				if bad <= 10 {
					t.Errorf("%s combo %d %+v: %s = %v, want %v (rel %.3g > %.1g)", label, i, grid.At(i), name, gv, wv, d, lim)
				}
			}
		}
	}
	trades := 0
	for _, w := range want {
		trades += w.TotalTrades
	}
	t.Logf("%s: %d combos, %d trades in the reference; worst relative difference per metric: %v", label, len(want), trades, worst)
	if bad > 10 {
		t.Errorf("%s: %d differences in all", label, bad)
	}
}

// referenceMetrics runs reference.Backtest (the CPU reference) on every combo.
func referenceMetrics[F engine.Float](t testing.TB, bars *engine.Bars, grid engine.Grid, p engine.Params, form engine.Formulation) []engine.Metrics {
	ind, err := reference.BuildIndicators[F](t.Context(), bars, grid, p.Source, form)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]engine.Metrics, grid.Len())
	var sc reference.Scratch[F]
	for i := range out {
		c := grid.At(i)
		warm := max(engine.HMAWarmup(c.HMA), engine.HMA3Warmup(c.HMA3))
		out[i] = reference.Backtest(ind.H[c.HMA], ind.H3[c.HMA3], ind.R, warm, p, &sc)
	}
	return out
}
