package engine

// Float is the element type of a code path: float64 for the reference,
// float32 for the path a GPU without fp64 takes. One generic function serves
// both (package reference), so the fp32 path is the fp64 path with another
// type, never a copy.
type Float interface{ ~float32 | ~float64 }

// Indicators holds every series a grid needs in one precision: h per unique
// HMA length, h3 per unique HMA3 length, and the bar returns. Each unique
// length is computed once and shared by all combos that use it; an h3
// series is computed once per p = floor(L/2) and held under both lengths
// of its p (L and HMA3Twin(L), one slice), so that a grid and its Distinct
// grid find every series they need in the same Indicators. The
// Arithmetic (package reference) builds them; a GPU backend may export its
// own (IndicatorDevice); the parity report compares two of them.
type Indicators[F Float] struct {
	H    map[int][]F // HMA(x, Lh), len n, NaN before HMAWarmup(Lh)
	H3   map[int][]F // HMA3(close, L3), len n, NaN before HMA3Warmup(L3)
	R    []F         // bar returns, fraction per bar, r[0] = 0
	Form Formulation
}

// toFloat64 widens a series to float64 (exactly: every float32 is a float64).
func toFloat64[F Float](x []F) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
