package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"sweepbench/engine/data"
)

// realisticMetrics are n combos' metrics as a run over bars bars gives
// them: every one of the 24 finite (the GPU lanes compute the trade
// metrics too after issue 29, so no metric is NaN to skip), the ratios
// and fractions spread over full-width doubles, the counts (trades, bar
// counts, max_drawdown_bars) small integers that tie often, as they do.
func realisticMetrics(rng *rand.Rand, n, bars int) []Metrics {
	out := make([]Metrics, n)
	for i := range out {
		trades := 1 + rng.IntN(3000)
		wins := rng.IntN(trades + 1)
		long := rng.IntN(bars / 2)
		short := rng.IntN(bars / 2)
		tr := rng.NormFloat64() * 0.4
		cagr := tr * 2.5
		mdd := 0.01 + 0.9*rng.Float64()
		exp := tr / float64(trades)
		out[i] = Metrics{TotalReturn: tr, CAGR: cagr, Sharpe: rng.NormFloat64(), Sortino: 1.4 * rng.NormFloat64(),
			MaxDrawdown: mdd, Calmar: cagr / mdd, WinRate: float64(wins) / float64(trades), TotalTrades: trades,
			VaR95: -0.01 * rng.Float64(), CVaR95: -0.02 * rng.Float64(), Omega: math.Exp(0.1 * rng.NormFloat64()),
			LongBars: long, ShortBars: short, FlatBars: bars - 1 - long - short,
			ProfitFactor: math.Exp(0.2 * rng.NormFloat64()), Expectancy: exp, AvgWin: 0.01 * rng.Float64(), AvgLoss: -0.01 * rng.Float64(),
			BestTrade: 0.1 * rng.Float64(), WorstTrade: -0.1 * rng.Float64(), AvgTradeBars: float64(long+short) / float64(trades),
			Exposure: float64(long+short) / float64(bars-1), SQN: 3 * rng.NormFloat64(), MaxDrawdownBars: float64(rng.IntN(bars))}
	}
	return out
}

// benchGrid is a grid of n x n combos shaped as the 10^8 device grid
// (hma 2:10001 x hma3 6:10005: step 1, so half its combos are HMA3 twins).
func benchGrid(n int) Grid {
	return Grid{HMA: Range{Start: 2, Stop: n + 1, Step: 1}, HMA3: Range{Start: 6, Stop: n + 5, Step: 1}}
}

// benchChunks are grid g's results in chunks of chunk combos, in grid
// order, as one GPU lane's sweep hands them to the keeper.
func benchChunks(g Grid, chunk int) [][]ComboResult {
	ms := realisticMetrics(rand.New(rand.NewPCG(29, 4)), g.Len(), 20000)
	var out [][]ComboResult
	for lo := 0; lo < g.Len(); lo += chunk {
		c := make([]ComboResult, min(chunk, g.Len()-lo))
		for i := range c {
			c[i] = ComboResult{Index: lo + i, Combo: g.At(lo + i), Metrics: ms[lo+i]}
		}
		out = append(out, c)
	}
	return out
}

// BenchmarkSummaryRows is the cost per result of what a study's keeper
// does with each result it is handed (keeper.add, chunks of 2^18 combos
// in grid order, as Sweep's sink hands one GPU lane's): "summary", a
// summarising study (the workbench's: StudyOptions.Summary with the
// defaults, the best 100 by Sharpe); "keep", the `run` table's (the best
// 2 x --top 3 by Sharpe, no summary). 10^6 realistic results (every
// metric finite), on 1000 x 1000 combos (cells of 4 x 4) and on cells of
// 40 x 40 (summary-cells40: as the 10^8 grid's); ns/row is the time per
// result (the keeper's
// construction untimed), allocs/op those of one run's 10^6 results.
func BenchmarkSummaryRows(b *testing.B) {
	square := benchGrid(1000)
	// 2560 x 400 combos capped at 64 x 10 cells: cells of 40 x 40 combos,
	// those of the 10^8 grid (10^4 x 10^4 under the default 256 x 256).
	wide := Grid{HMA: Range{Start: 2, Stop: 2561, Step: 1}, HMA3: Range{Start: 6, Stop: 405, Step: 1}}
	chunksOf := map[Grid][][]ComboResult{square: benchChunks(square, 1<<18), wide: benchChunks(wide, 1<<18)}
	for _, c := range []struct {
		name    string
		g       Grid
		k       int
		summary bool
		opt     SummaryOptions
	}{{"summary", square, DefaultKeep, true, SummaryOptions{}}, {"summary-cells40", wide, DefaultKeep, true, SummaryOptions{MaxRows: 64, MaxCols: 10}},
		{"keep", square, 6, false, SummaryOptions{}}} {
		g, chunks := c.g, chunksOf[c.g]
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				// The keeper's construction (the heatmaps' 48 MB) is
				// not per row: untimed.
				b.StopTimer()
				kp := &keeper{best: NewTop(Objective{}, c.k)}
				if c.summary {
					kp.sum = newSummariser(g, FP32, Objective{}, c.opt)
				}
				b.StartTimer()
				for _, ch := range chunks {
					kp.add(ch)
				}
				if c.summary && kp.summary().Count != g.Len() {
					b.Fatal("count")
				}
			}
			perRow(b, g.Len())
		})
	}
}

// perRow reports ns/row for n rows an op (the op's time is hidden: it is
// n rows').
func perRow(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
	b.ReportMetric(0, "ns/op")
}

// poolBackend is a backend whose kernel copies each combo's metrics from
// a pool of realistic ones (metrics[index mod len]): what a GPU lane's
// Compute leaves in out once its download is finished, at the cost of a
// copy, so that a sweep through it times the host's work per combo.
type poolBackend struct {
	lanes, chunk int
	pool         []Metrics
}

func (p *poolBackend) Name() string               { return "pool" }
func (p *poolBackend) Available() error           { return nil }
func (p *poolBackend) Devices() ([]Device, error) { return []Device{{Name: "pool"}}, nil }
func (p *poolBackend) Prepare(context.Context, *Job) (Kernel, error) {
	return poolKernel{p}, nil
}

type poolKernel struct{ p *poolBackend }

func (k poolKernel) Lanes() int     { return k.p.lanes }
func (k poolKernel) ChunkSize() int { return k.p.chunk }
func (k poolKernel) Device() string { return "pool" }
func (k poolKernel) Close() error   { return nil }
func (k poolKernel) Compute(_ context.Context, _, first int, out []Metrics) error {
	n := len(k.p.pool)
	for i := range out {
		out[i] = k.p.pool[(first+i)%n]
	}
	return nil
}

// BenchmarkStudyRows is the host's cost per combo of the whole study
// path (RunStudy: Sweep's labelling, the sink, the keeper, the best so
// far) on one lane of 2^18 computed combos a chunk (the CUDA backend's
// chunk on one GPU), fp32 only, with a kernel that only copies metrics
// (poolBackend): "table", `run --no-save --top 3` (StudyOptions.Discard,
// Keep 6, no summary: the 10^8 device command); "summary", the
// workbench's (Discard and a summary). 2000 x 2000 combos (half of them
// HMA3 twins); ns/row per combo of the grid.
func BenchmarkStudyRows(b *testing.B) {
	g := benchGrid(2000)
	be := &poolBackend{lanes: 1, chunk: 1 << 18, pool: realisticMetrics(rand.New(rand.NewPCG(29, 5)), 1<<16, 20000)}
	bars := closeBars(randomWalk(rand.New(rand.NewPCG(1, 2)), BarsNeeded(Combo{HMA: g.HMA.Last(), HMA3: g.HMA3.Last()}), 100, 0.01))
	s := &Study{Dataset: &data.Dataset{Bars: *bars, Info: data.Info{Name: "synthetic", Bars: bars.Len()}},
		Grid: g, Params: Params{Fee: DefaultFee, BarsPerYear: 525600}, Precisions: []Precision{FP32}, Backend: be}
	for _, c := range []struct {
		name    string
		summary bool
	}{{"table", false}, {"summary", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				opt := StudyOptions{Discard: true, Keep: 6}
				if c.summary {
					opt.Summary = &SummaryOptions{}
				}
				rep, err := RunStudy(context.Background(), s, opt)
				if err != nil || rep.Runs[0].Computed != g.Len() {
					b.Fatal(err)
				}
			}
			perRow(b, g.Len())
		})
	}
}

// TestMetricAtOrder: metricAt(m, i) is Metrics.Value of MetricNames[i]
// for every metric (each set to a distinct value), and 0 out of range.
func TestMetricAtOrder(t *testing.T) {
	var m Metrics
	for i, name := range MetricNames {
		m.SetValue(name, float64(i+1))
	}
	for i, name := range MetricNames {
		if v, _ := m.Value(name); metricAt(&m, i) != v || v != float64(i+1) {
			t.Errorf("metricAt %d = %v, want %s = %v", i, metricAt(&m, i), name, v)
		}
	}
	if metricAt(&m, -1) != 0 || metricAt(&m, NumMetrics) != 0 {
		t.Error("out of range: want 0")
	}
}
