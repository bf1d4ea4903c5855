package reference_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// benchSweep runs the default study's grid (20:200:20 x 30:240:30, 80
// combos) over the first 150,000 bars of the embedded FIL/USDT 1m file,
// end to end (indicators built in Prepare every time: no cache), and
// reports combos/s and the prepare share.
func benchSweep(b *testing.B, prec engine.Precision, form engine.Formulation) {
	job := &engine.Job{Bars: datatest.FIL(b, 150000), Grid: engine.Grid{HMA: engine.Range{Start: 20, Stop: 200, Step: 20}, HMA3: engine.Range{Start: 30, Stop: 240, Step: 30}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Precision: prec, WMA: form}
	var combos int
	var prepare float64
	b.ResetTimer()
	for b.Loop() {
		run, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{})
		if err != nil {
			b.Fatal(err)
		}
		combos += len(run.Results)
		prepare += run.Prepare.Seconds()
	}
	b.ReportMetric(float64(combos)/b.Elapsed().Seconds(), "combos/s")
	b.ReportMetric(1000*prepare/float64(b.N), "prepare-ms/op")
}

func BenchmarkReferenceSweepFP64(b *testing.B) { benchSweep(b, engine.FP64, engine.Direct) }
func BenchmarkReferenceSweepFP32(b *testing.B) { benchSweep(b, engine.FP32, engine.Direct) }

// The benchmarks below carry the speed claims; quote them with the machine and date.
// They use the embedded FIL/USDT 1m file where the size matters (150,000
// bars, the default grid) and a seeded random walk elsewhere.

// BenchmarkWMA: one direct WMA over 150,000 bars; ns/term is the cost of one
// multiply-add (n*p terms per call).
func BenchmarkWMA(b *testing.B) {
	const n = 150000
	x64 := datatest.Closes(rand.New(rand.NewPCG(1, 2)), n, 4, 0.001)
	for _, p := range []int{20, 100} {
		b.Run(fmt.Sprintf("fp64/p=%d", p), func(b *testing.B) { benchWMA(b, x64, p) })
		b.Run(fmt.Sprintf("fp32/p=%d", p), func(b *testing.B) { benchWMA(b, toF[float32](x64), p) })
	}
}

func benchWMA[F engine.Float](b *testing.B, x []F, p int) {
	out := make([]F, len(x))
	for b.Loop() {
		reference.WMA(x, p, 0, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)-p+1)/float64(p), "ns/term")
}

// BenchmarkWMAPrefix: the O(n) formulation, for comparison (ns/bar).
func BenchmarkWMAPrefix(b *testing.B) {
	x := datatest.Closes(rand.New(rand.NewPCG(1, 2)), 150000, 4, 0.001)
	out := make([]float64, len(x))
	scratch := make([]float64, 2*(len(x)+1))
	for b.Loop() {
		reference.WMAPrefix(x, 100, 0, out, scratch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/bar")
}

// BenchmarkBacktest: one combo (hma 100, hma3 120) over 150,000 FIL bars.
func BenchmarkBacktest(b *testing.B) {
	bars := datatest.FIL(b, 150000)
	b.Run("fp64", func(b *testing.B) { benchBacktest[float64](b, bars) })
	b.Run("fp32", func(b *testing.B) { benchBacktest[float32](b, bars) })
	b.Run("fp64-blocks16", func(b *testing.B) { benchBacktest[float64](b, bars, 16) })
}

// benchBacktest times one backtest, with per-block statistics over blocks
// blocks when given (BacktestBlocks: the robustness lane's cost).
func benchBacktest[F engine.Float](b *testing.B, bars *engine.Bars, blocks ...int) {
	x := kernels.SourceSeries[F](bars, engine.SourceClose)
	h, h3 := make([]F, len(x)), make([]F, len(x))
	if err := reference.HMA(x, 100, engine.Direct, h); err != nil {
		b.Fatal(err)
	}
	if err := reference.HMA3(x, 120, engine.Direct, h3); err != nil {
		b.Fatal(err)
	}
	r := kernels.BarReturns[F](bars)
	var sc reference.Scratch[F]
	p := engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}
	warm := max(engine.HMAWarmup(100), engine.HMA3Warmup(120))
	var bs *engine.BlockStats
	if len(blocks) > 0 {
		bounds, err := engine.BlockBounds(bars.Len(), blocks[0])
		if err != nil {
			b.Fatal(err)
		}
		bs = engine.NewBlockStats(1, bounds)
	}
	for b.Loop() {
		reference.BacktestBlocks(h, h3, r, warm, p, &sc, bs, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/bar")
}

// BenchmarkBuildIndicators: every series of the default grid (20:200:20 x
// 30:240:30: 10 HMA and 8 HMA3 series) over 150,000 FIL bars, on every core.
func BenchmarkBuildIndicators(b *testing.B) {
	bars := datatest.FIL(b, 150000)
	g := engine.Grid{HMA: engine.Range{Start: 20, Stop: 200, Step: 20}, HMA3: engine.Range{Start: 30, Stop: 240, Step: 30}}
	b.Run("fp64/direct", func(b *testing.B) { benchBuild[float64](b, bars, g, engine.Direct) })
	b.Run("fp32/direct", func(b *testing.B) { benchBuild[float32](b, bars, g, engine.Direct) })
	b.Run("fp32/prefix", func(b *testing.B) { benchBuild[float32](b, bars, g, engine.Prefix) })
}

func benchBuild[F engine.Float](b *testing.B, bars *engine.Bars, g engine.Grid, f engine.Formulation) {
	for b.Loop() {
		if _, err := reference.BuildIndicators[F](context.Background(), bars, g, engine.SourceClose, f); err != nil {
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
	var sc reference.Scratch[float64]
	k := (len(x) - 1) / 20
	for b.Loop() {
		copy(y, x)
		reference.TailSelect(y, k, &sc)
	}
}

// BenchmarkPositionFlips: the parity pass's walk of both precisions' state
// machines (one combo, hma 100 x hma3 120, 150,000 FIL bars), with the AVX2
// scan and with the Go one. The walk it replaced (both machines bar by bar)
// ran at 2.7 ns a bar on one H200-host core.
func BenchmarkPositionFlips(b *testing.B) {
	bars := datatest.FIL(b, 150000)
	x64 := kernels.SourceSeries[float64](bars, engine.SourceClose)
	x32 := kernels.SourceSeries[float32](bars, engine.SourceClose)
	h, h3 := make([]float64, len(x64)), make([]float64, len(x64))
	g, g3 := make([]float32, len(x64)), make([]float32, len(x64))
	for _, e := range []error{reference.HMA(x64, 100, engine.Direct, h), reference.HMA3(x64, 120, engine.Direct, h3),
		reference.HMA(x32, 100, engine.Direct, g), reference.HMA3(x32, 120, engine.Direct, g3)} {
		if e != nil {
			b.Fatal(e)
		}
	}
	warm := max(engine.HMAWarmup(100), engine.HMA3Warmup(120))
	for _, avx := range []bool{true, false} {
		name := "go"
		if avx {
			name = "avx2"
		}
		b.Run(name, func(b *testing.B) {
			if avx && !reference.HasAVX2() {
				b.Skip("no AVX2 on this CPU")
			}
			defer reference.SetAVX2(reference.SetAVX2(avx))
			flips := 0
			for b.Loop() {
				flips = 0
				reference.PositionFlips(h, h3, g, g3, warm, len(h)-1, engine.LongShort, func(int, int8, int8) { flips++ })
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(h)), "ns/bar")
			b.ReportMetric(float64(flips), "flips")
		})
	}
}
