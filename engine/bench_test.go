package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Benchmarks carry the speed claims; quote them with the machine and date.
// They use the embedded FIL/USDT 1m file where the size matters (150,000
// bars, the default grid) and a seeded random walk elsewhere.

// BenchmarkWMA: one direct WMA over 150,000 bars; ns/term is the cost of one
// multiply-add (n*p terms per call).
func BenchmarkWMA(b *testing.B) {
	const n = 150000
	x64 := randomWalk(rand.New(rand.NewPCG(1, 2)), n, 4, 0.001)
	for _, p := range []int{20, 100} {
		b.Run(fmt.Sprintf("fp64/p=%d", p), func(b *testing.B) { benchWMA(b, x64, p) })
		b.Run(fmt.Sprintf("fp32/p=%d", p), func(b *testing.B) { benchWMA(b, toF[float32](x64), p) })
	}
}

func benchWMA[F Float](b *testing.B, x []F, p int) {
	out := make([]F, len(x))
	for b.Loop() {
		WMA(x, p, 0, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)-p+1)/float64(p), "ns/term")
}

// BenchmarkWMAPrefix: the O(n) formulation, for comparison (ns/bar).
func BenchmarkWMAPrefix(b *testing.B) {
	x := randomWalk(rand.New(rand.NewPCG(1, 2)), 150000, 4, 0.001)
	out := make([]float64, len(x))
	scratch := make([]float64, 2*(len(x)+1))
	for b.Loop() {
		WMAPrefix(x, 100, 0, out, scratch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/bar")
}

// BenchmarkBacktest: one combo (hma 100, hma3 120) over 150,000 FIL bars.
func BenchmarkBacktest(b *testing.B) {
	bars := filBars(b, 150000)
	b.Run("fp64", func(b *testing.B) { benchBacktest[float64](b, bars) })
	b.Run("fp32", func(b *testing.B) { benchBacktest[float32](b, bars) })
}

func benchBacktest[F Float](b *testing.B, bars *Bars) {
	x := SourceSeries[F](bars, SourceClose)
	h, h3 := make([]F, len(x)), make([]F, len(x))
	if err := HMA(x, 100, Direct, h); err != nil {
		b.Fatal(err)
	}
	if err := HMA3(x, 120, Direct, h3); err != nil {
		b.Fatal(err)
	}
	r := BarReturns[F](bars)
	var sc Scratch[F]
	p := Params{Fee: DefaultFee, BarsPerYear: 525600}
	warm := max(HMAWarmup(100), HMA3Warmup(120))
	for b.Loop() {
		Backtest(h, h3, r, warm, p, &sc)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/bar")
}

// BenchmarkBuildIndicators: every series of the default grid (20:200:20 x
// 30:240:30: 10 HMA and 8 HMA3 series) over 150,000 FIL bars, on every core.
func BenchmarkBuildIndicators(b *testing.B) {
	bars := filBars(b, 150000)
	g := Grid{HMA: Range{20, 200, 20}, HMA3: Range{30, 240, 30}}
	b.Run("fp64/direct", func(b *testing.B) { benchBuild[float64](b, bars, g, Direct) })
	b.Run("fp32/direct", func(b *testing.B) { benchBuild[float32](b, bars, g, Direct) })
	b.Run("fp32/prefix", func(b *testing.B) { benchBuild[float32](b, bars, g, Prefix) })
}

func benchBuild[F Float](b *testing.B, bars *Bars, g Grid, f Formulation) {
	for b.Loop() {
		if _, err := BuildIndicators[F](context.Background(), bars, g, SourceClose, f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.HMA.Len()+g.HMA3.Len())*float64(b.N)/b.Elapsed().Seconds(), "series/s")
}

// BenchmarkTailSelect: VaR's selection over one combo's 150,000 returns.
func BenchmarkTailSelect(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 150000)
	for i := range x {
		x[i] = 0.001 * rng.NormFloat64()
	}
	y := make([]float64, len(x))
	var sc Scratch[float64]
	k := (len(x) - 1) / 20
	for b.Loop() {
		copy(y, x)
		tailSelect(y, k, &sc)
	}
}

func TestSkipNotes(t *testing.T) {
	res := []RungResult{{ID: "M3"}, {ID: "M5", Skipped: "no driver"}, {ID: "M6", Skipped: "no driver"},
		{ID: "M7", Skipped: "no driver"}, {ID: "Metal", Skipped: "macOS only"}}
	got := SkipNotes(res)
	want := []string{"M5, M6, M7 skipped: no driver", "Metal skipped: macOS only"}
	if !slices.Equal(got, want) {
		t.Errorf("SkipNotes = %q, want %q", got, want)
	}
}
