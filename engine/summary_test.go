package engine_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"testing"
	"time"
	"unsafe"

	"sweepbench/engine"
)

// handGrid is a 5 x 7 grid (HMA 2..6, HMA3 6..12) and its Sharpe values by
// hand, NaN for a combo whose value is NaN.
var handGrid = engine.Grid{HMA: engine.Range{Start: 2, Stop: 6, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 12, Step: 1}}

var handSharpe = [5][7]float64{
	{1, -2, 3, 0.5, 4, -1, 7},
	{2, 5, math.NaN(), 6, 0, 2, -3},
	{-4, 8, 1, 1, 9, 3, 0},
	{0, 0, 2, -6, 5, 5, 10},
	{3, 1, 4, 2, -1, 7, -2.5},
}

// handResults are handGrid's combos with handSharpe, offered in reverse
// grid order (the summary must not depend on order but for the mean's
// rounding, which these sums of halves do not meet).
func handResults() []engine.ComboResult {
	var rs []engine.ComboResult
	for i := handGrid.Len() - 1; i >= 0; i-- {
		v := handSharpe[i/7][i%7]
		rs = append(rs, engine.ComboResult{Index: i, Combo: handGrid.At(i), Metrics: engine.Metrics{Sharpe: v, TotalTrades: i % 4}})
	}
	return rs
}

// TestHeatmapBlocksByHand: the 5 x 7 grid capped at 2 x 3 cells is 2 x 3
// blocks of 3 x 3 combos (the last row of blocks 2 HMA lengths tall, the
// last column 1 HMA3 length wide); each block's max, min, mean and count
// worked out by hand from handSharpe, the NaN left out of its block.
// Under a cap of 8 x 8 every cell is its combo.
func TestHeatmapBlocksByHand(t *testing.T) {
	sm := engine.NewSummariser(handGrid, engine.FP64, engine.Objective{}, engine.SummaryOptions{K: 3, MaxRows: 2, MaxCols: 3}, nil)
	sm.Add(handResults())
	run := &engine.Run{Grid: handGrid, Precision: engine.FP64, Status: engine.StatusComplete}
	sm.Keep(run)
	h := run.Summary.Heatmap("sharpe")
	if h.Rows != 2 || h.Cols != 3 || h.BlockRows != 3 || h.BlockCols != 3 || h.Full() {
		t.Fatalf("cells %d x %d of blocks %d x %d, want 2 x 3 of 3 x 3", h.Rows, h.Cols, h.BlockRows, h.BlockCols)
	}
	want := [2][3]engine.Cell{
		// rows 0-2: cols 0-2 (the NaN at (1, 2) left out), 3-5, 6
		{{Max: 8, Min: -4, Mean: 14.0 / 8, N: 8}, {Max: 9, Min: -1, Mean: 24.5 / 9, N: 9}, {Max: 7, Min: -3, Mean: 4.0 / 3, N: 3}},
		// rows 3-4
		{{Max: 4, Min: 0, Mean: 10.0 / 6, N: 6}, {Max: 7, Min: -6, Mean: 2, N: 6}, {Max: 10, Min: -2.5, Mean: 3.75, N: 2}},
	}
	spans := [2][3][4]int{{{0, 3, 0, 3}, {0, 3, 3, 6}, {0, 3, 6, 7}}, {{3, 5, 0, 3}, {3, 5, 3, 6}, {3, 5, 6, 7}}}
	for r := range want {
		for c := range want[r] {
			if got := h.Cell(r, c); got != want[r][c] {
				t.Errorf("cell (%d, %d): %+v, want %+v", r, c, got, want[r][c])
			}
			r0, r1, c0, c1 := h.Span(r, c)
			if got := [4]int{r0, r1, c0, c1}; got != spans[r][c] {
				t.Errorf("cell (%d, %d) spans %v, want %v", r, c, got, spans[r][c])
			}
		}
	}
	if r, c := h.CellOf(handGrid.Index(4, 6)); r != 1 || c != 2 {
		t.Errorf("combo (4, 6) in cell (%d, %d), want (1, 2)", r, c)
	}
	// The top 3 by Sharpe: 10 at (3, 6), 9 at (2, 4), 8 at (2, 1).
	for _, c := range []struct {
		minimise bool
		want     []int
	}{{false, []int{handGrid.Index(3, 6), handGrid.Index(2, 4), handGrid.Index(2, 1)}}} {
		got, ok := run.Summary.Top("sharpe", c.minimise)
		if !ok || len(got) != 3 || got[0].Index != c.want[0] || got[1].Index != c.want[1] || got[2].Index != c.want[2] {
			t.Errorf("top sharpe (minimise %v): %v, want indices %v", c.minimise, got, c.want)
		}
	}
	if _, ok := run.Summary.Top("sharpe", true); ok {
		t.Error("sharpe has a better side: no lowest list expected")
	}
	// total_trades (i % 4) has no better side: both lists, ties by grid
	// order: the highest are 3 at indices 3, 7, 11; the lowest 0 at 0, 4, 8.
	for _, c := range []struct {
		minimise bool
		want     [3]int
	}{{false, [3]int{3, 7, 11}}, {true, [3]int{0, 4, 8}}} {
		got, ok := run.Summary.Top("total_trades", c.minimise)
		if !ok || len(got) != 3 || [3]int{got[0].Index, got[1].Index, got[2].Index} != c.want {
			t.Errorf("top total_trades (minimise %v): %v, want indices %v", c.minimise, got, c.want)
		}
	}
	if run.Summary.Count != 35 || run.Computed != 35 || !run.Kept || len(run.Results) != 3 {
		t.Errorf("count %d, computed %d, kept %v, %d results: want 35, 35, kept, the 3 best", run.Summary.Count, run.Computed, run.Kept, len(run.Results))
	}

	full := engine.NewSummariser(handGrid, engine.FP64, engine.Objective{}, engine.SummaryOptions{MaxRows: 8, MaxCols: 8}, nil)
	full.Add(handResults())
	fr := &engine.Run{Grid: handGrid}
	full.Keep(fr)
	fh := fr.Summary.Heatmap("sharpe")
	if !fh.Full() || fh.Rows != 5 || fh.Cols != 7 {
		t.Fatalf("full resolution: %d x %d cells of %d x %d", fh.Rows, fh.Cols, fh.BlockRows, fh.BlockCols)
	}
	for r := range handSharpe {
		for c, v := range handSharpe[r] {
			got := fh.Cell(r, c)
			if math.IsNaN(v) {
				if got.N != 0 || !math.IsNaN(got.Mean) {
					t.Errorf("cell (%d, %d): %+v, want none", r, c, got)
				}
				continue
			}
			if got != (engine.Cell{Max: v, Min: v, Mean: v, N: 1}) {
				t.Errorf("cell (%d, %d): %+v, want %v", r, c, got, v)
			}
		}
	}
}

// synthetic fills combos [first, first+len(out)) of a grid with distinct
// pseudo-random metrics (full-width doubles, counts with ties).
func synthetic(g engine.Grid, first, n int) []engine.ComboResult {
	out := make([]engine.ComboResult, n)
	for i := range out {
		ix := first + i
		x := uint64(ix) * 0x9e3779b97f4a7c15
		u := float64(x>>11) / (1 << 53)
		out[i] = engine.ComboResult{Index: ix, Combo: g.At(ix), Metrics: engine.Metrics{TotalReturn: u - 0.5, CAGR: 2*u - 1, Sharpe: 4*u - 2,
			Sortino: 5 * u, MaxDrawdown: u / 2, Calmar: 3 * u, WinRate: u, TotalTrades: int(x >> 58), VaR95: -u / 100, CVaR95: -u / 50,
			Omega: 1 + u, LongBars: int(x >> 56), ShortBars: int(x >> 57), FlatBars: 7}}
	}
	return out
}

// summaryOf summarises n x n synthetic combos, chunk by chunk.
func summaryOf(n int, opt engine.SummaryOptions) *engine.Summary {
	g := engine.Grid{HMA: engine.Range{Start: 2, Stop: n + 1, Step: 1}, HMA3: engine.Range{Start: 6, Stop: n + 5, Step: 1}}
	sm := engine.NewSummariser(g, engine.FP64, engine.Objective{}, opt, nil)
	for lo := 0; lo < g.Len(); lo += 4096 {
		sm.Add(synthetic(g, lo, min(4096, g.Len()-lo)))
	}
	run := &engine.Run{Grid: g}
	sm.Keep(run)
	return run.Summary
}

// TestSummaryBounded: the summary of 10^6 combos holds what the summary of
// 10^4 does, within the cells' rounding (a cap of 64 x 64: blocks of 2 x 2
// give 50 x 50 cells, of 16 x 16 63 x 63), never more than the bound its
// options set: per metric 64 x 64 cells of 32 bytes, and K results per
// list and for the study's best.
func TestSummaryBounded(t *testing.T) {
	opt := engine.SummaryOptions{K: 50, MaxRows: 64, MaxCols: 64}
	small, large := summaryOf(100, opt), summaryOf(1000, opt)
	lists := len(large.Lists) + 1
	bound := int64(len(engine.MetricNames)*64*64*32) + int64(lists*opt.K)*int64(unsafe.Sizeof(engine.ComboResult{}))
	sb, lb := small.Bytes(), large.Bytes()
	t.Logf("summary of 10^4 combos: %d bytes; of 10^6: %d bytes; bound %d", sb, lb, bound)
	if small.Count != 10_000 || large.Count != 1_000_000 {
		t.Fatalf("counts %d, %d", small.Count, large.Count)
	}
	if lb > bound || sb > bound || lb > 2*sb {
		t.Errorf("summary bytes: 10^4 combos %d, 10^6 combos %d: want both under %d and the same order", sb, lb, bound)
	}
	if h := large.Heatmap("omega"); h.Rows != 63 || h.Cols != 63 || h.BlockRows != 16 {
		t.Errorf("10^6 combos: %d x %d cells of %d, want 63 x 63 of 16 x 16", h.Rows, h.Cols, h.BlockRows)
	}
	if len(large.Lists) != len(engine.MetricNames)+6 {
		t.Errorf("%d lists, want one per metric and a second for each of the 4 counts, avg_trade_bars and exposure", len(large.Lists))
	}
}

// ranked is an independent ranking of rs by metric (larger first, or
// smaller when minimise; NaN last; ties by grid index), as the engine's
// top lists promise: a stable sort of everything.
func ranked(rs []engine.ComboResult, metric string, minimise bool, k int) []engine.ComboResult {
	out := append([]engine.ComboResult(nil), rs...)
	sort.SliceStable(out, func(a, b int) bool {
		x, _ := out[a].Metrics.Value(metric)
		y, _ := out[b].Metrics.Value(metric)
		if math.IsNaN(x) || math.IsNaN(y) {
			return !math.IsNaN(x) && math.IsNaN(y)
		}
		if x != y {
			return x > y != minimise
		}
		return false // stable: grid order, rs being in grid order
	})
	return out[:min(k, len(out))]
}

// checkSummary compares s with an independent computation over every
// result of the run (rs, in grid order): every top list against ranked,
// every cell's max, min and count exactly and its mean within rounding.
func checkSummary(t *testing.T, what string, s *engine.Summary, rs []engine.ComboResult, opt engine.SummaryOptions) {
	t.Helper()
	if s == nil {
		t.Fatalf("%s: no summary", what)
	}
	if s.Count != len(rs) {
		t.Errorf("%s: count %d, want %d", what, s.Count, len(rs))
	}
	for _, name := range engine.MetricNames {
		sides := []bool{false}
		switch engine.MetricSense(name) {
		case engine.LowerIsBetter: // max_drawdown, max_drawdown_bars
			sides = []bool{true}
		case engine.EitherSide: // the 4 counts, avg_trade_bars, exposure
			sides = []bool{false, true}
		}
		for _, minimise := range sides {
			got, ok := s.Top(name, minimise)
			want := ranked(rs, name, minimise, opt.K)
			if !ok || len(got) != len(want) {
				t.Errorf("%s: %s (minimise %v): %d combos, want %d", what, name, minimise, len(got), len(want))
				continue
			}
			for i := range want {
				if !sameResult(got[i], want[i]) {
					t.Errorf("%s: %s (minimise %v) #%d: combo %d, want %d", what, name, minimise, i, got[i].Index, want[i].Index)
					break
				}
			}
		}
		h := s.Heatmap(name)
		g := s.Grid
		for r := 0; r < h.Rows; r++ {
			for c := 0; c < h.Cols; c++ {
				want := engine.Cell{Max: math.Inf(-1), Min: math.Inf(1)}
				sum := 0.0
				r0, r1, c0, c1 := r*h.BlockRows, min((r+1)*h.BlockRows, g.HMA.Len()), c*h.BlockCols, min((c+1)*h.BlockCols, g.HMA3.Len())
				for gr := r0; gr < r1; gr++ {
					for gc := c0; gc < c1; gc++ {
						i := sort.Search(len(rs), func(k int) bool { return rs[k].Index >= g.Index(gr, gc) })
						if i == len(rs) || rs[i].Index != g.Index(gr, gc) {
							continue
						}
						v, _ := rs[i].Metrics.Value(name)
						if math.IsNaN(v) {
							continue
						}
						want.N++
						want.Max, want.Min, sum = math.Max(want.Max, v), math.Min(want.Min, v), sum+v
					}
				}
				got := h.Cell(r, c)
				if want.N == 0 {
					if got.N != 0 || !math.IsNaN(got.Max) {
						t.Errorf("%s: %s cell (%d, %d): %+v, want none", what, name, r, c, got)
					}
					continue
				}
				want.Mean = sum / float64(want.N)
				if got.N != want.N || got.Max != want.Max || got.Min != want.Min || !near(got.Mean, want.Mean) {
					t.Errorf("%s: %s cell (%d, %d): %+v, want %+v", what, name, r, c, got, want)
				}
			}
		}
	}
}

// sameResult compares two results, a NaN metric equal to a NaN.
func sameResult(a, b engine.ComboResult) bool { return a == b || fmt.Sprint(a) == fmt.Sprint(b) }

// near: equal within the rounding of a mean summed in another order.
func near(a, b float64) bool {
	if a == b || math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// TestStudySummary: a study asked for summaries builds, per run, the
// summary an independent computation over its every result gives (the
// full report of the same study): untiled keeping every result, untiled
// discarding them (StudyOptions.Discard), and tiled discarding them; the
// reduced heatmaps (3 x 4 cells of blocks of 3 x 8 combos of the 7 x 29
// grid) and the full ones; and the study's own best is its top list.
func TestStudySummary(t *testing.T) {
	ctx := context.Background()
	full, err := engine.RunStudy(ctx, tiledStudy(t), engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []engine.SummaryOptions{{K: 7, MaxRows: 3, MaxCols: 4}, {K: 300}} {
		for _, c := range []struct {
			name    string
			discard bool
			budget  string
		}{{"kept", false, ""}, {"discarded", true, ""}, {"tiled", true, fmt.Sprint(10 * 48000)}} {
			t.Run(fmt.Sprintf("%s/K%d", c.name, opt.K), func(t *testing.T) {
				if c.budget != "" {
					t.Setenv(engine.SeriesBudgetEnv, c.budget)
				}
				o := opt
				rep, err := engine.RunStudy(ctx, tiledStudy(t), engine.StudyOptions{Discard: c.discard, Keep: 5, Summary: &o})
				if err != nil {
					t.Fatal(err)
				}
				for _, run := range rep.Runs {
					fr := full.Run(run.Precision)
					checkSummary(t, run.Precision.String(), run.Summary, fr.Results, opt)
					if h := run.Summary.Heatmap("sharpe"); opt.MaxRows == 3 && (h.Rows != 3 || h.Cols != 4 || h.BlockRows != 3 || h.BlockCols != 8) {
						t.Errorf("%d x %d cells of %d x %d", h.Rows, h.Cols, h.BlockRows, h.BlockCols)
					}
					best := ranked(fr.Results, "sharpe", false, 5)
					if len(run.Summary.Best) != 5 || run.Summary.Best[0] != best[0] || run.Summary.Best[4] != best[4] {
						t.Errorf("%s: best %v, want %v", run.Precision, run.Summary.Best, best)
					}
					if c.discard != run.Kept {
						t.Errorf("%s: kept %v", run.Precision, run.Kept)
					}
				}
				if rep.Parity == nil || rep.Parity.Counts().Combos != nil || rep.Parity.Counts().FlipCount != full.Parity.FlipCount {
					t.Error("parity counts")
				}
			})
		}
	}
}

// peakHeap runs f and returns the most heap its objects took above what
// they took before (sampled every 200 us, so a peak between samples may be
// missed by a little) and what stays live after it (after a collection).
// f runs with the collector at GOGC=5, so that the peak is what f holds at
// once, not the garbage the pacer lets pile up (which grows with the whole
// process's heap, whatever f holds): a measurement, slower than f is.
func peakHeap(f func()) (peak, live uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	base := read()
	done, top := make(chan struct{}), make(chan uint64)
	go func() {
		m := base
		for {
			m = max(m, read())
			select {
			case <-done:
				top <- m
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	f()
	close(done)
	m := max(<-top, read())
	runtime.GC()
	return m - base, read() - min(base, read())
}

// BenchmarkSummary is the memory of building a run's summary (the default
// options: top 100 per list, heatmaps capped at 256 x 256 cells) from
// synthetic chunks of 4,096 combos, as RunStudy's keeper receives them:
// peak-MB is the most heap above the start while it runs (the chunks
// themselves included, one at a time), live-MB what the summary holds
// after (Summary.Bytes in summary-MB). One op is one run's summary.
func BenchmarkSummary(b *testing.B) {
	for _, c := range []struct {
		name       string
		rows, cols int
	}{{"1e5", 250, 400}, {"1e6", 1000, 1000}} {
		b.Run(c.name, func(b *testing.B) {
			g := engine.Grid{HMA: engine.Range{Start: 2, Stop: c.rows + 1, Step: 1}, HMA3: engine.Range{Start: 6, Stop: c.cols + 5, Step: 1}}
			build := func() *engine.Summary {
				sm := engine.NewSummariser(g, engine.FP64, engine.Objective{}, engine.SummaryOptions{}, nil)
				for lo := 0; lo < g.Len(); lo += 4096 {
					sm.Add(synthetic(g, lo, min(4096, g.Len()-lo)))
				}
				run := &engine.Run{Grid: g}
				sm.Keep(run)
				return run.Summary
			}
			for i := 0; i < b.N; i++ {
				build()
			}
			b.StopTimer()
			var held *engine.Summary
			peak, live := peakHeap(func() { held = build() })
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
			b.ReportMetric(float64(live)/1e6, "live-MB")
			b.ReportMetric(float64(held.Bytes())/1e6, "summary-MB")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.Len()), "ns/combo")
			runtime.KeepAlive(held)
		})
	}
}

// TestMetricValuesOrder: the summary's one-call read of a combo's metrics
// gives what Metrics.Value gives for each name, in MetricNames order.
func TestMetricValuesOrder(t *testing.T) {
	m := engine.Metrics{TotalReturn: 1, CAGR: 2, Sharpe: 3, Sortino: 4, MaxDrawdown: 5, Calmar: 6, WinRate: 7, TotalTrades: 8,
		VaR95: 9, CVaR95: 10, Omega: 11, LongBars: 12, ShortBars: 13, FlatBars: 14}
	got := engine.MetricValues(&m)
	if len(got) != len(engine.MetricNames) {
		t.Fatalf("%d values, %d metrics", len(got), len(engine.MetricNames))
	}
	for i, name := range engine.MetricNames {
		if v, _ := m.Value(name); got[i] != v {
			t.Errorf("value %d: %v, want %s = %v", i, got[i], name, v)
		}
	}
}
