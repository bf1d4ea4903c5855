package kernels

import "sweepbench/engine"

// The host's series, as every backend reads them: the CPU reference
// (reference.BuildIndicators) and the GPU kernels (prep_series and the
// Metal indicator build upload these, already rounded to F) take the same
// inputs, so the fp32 path is defined once.

// SourceSeries returns the swept series x in F (SPEC "Input"): close, hl2,
// hlc3 or ohlc4. Each price is rounded to F first and the average evaluated
// in F, left to right, as a GPU holding F prices would.
func SourceSeries[F engine.Float](b *engine.Bars, src engine.Source) []F {
	n := b.Len()
	x := make([]F, n)
	switch src {
	case engine.SourceHL2:
		for i := range x {
			x[i] = (F(b.High[i]) + F(b.Low[i])) / 2
		}
	case engine.SourceHLC3:
		for i := range x {
			x[i] = (F(b.High[i]) + F(b.Low[i]) + F(b.Close[i])) / 3
		}
	case engine.SourceOHLC4:
		for i := range x {
			x[i] = (F(b.Open[i]) + F(b.High[i]) + F(b.Low[i]) + F(b.Close[i])) / 4
		}
	default:
		for i := range x {
			x[i] = F(b.Close[i])
		}
	}
	return x
}

// BarReturns returns r with r[0] = 0 and r[i] = close[i]/close[i-1] - 1 in F
// (fraction per bar), SPEC "Signal, position, fills".
func BarReturns[F engine.Float](b *engine.Bars) []F {
	r := make([]F, b.Len())
	for i := 1; i < len(r); i++ {
		r[i] = F(b.Close[i])/F(b.Close[i-1]) - 1
	}
	return r
}
