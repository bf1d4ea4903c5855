package reference_test

import (
	"flag"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
)

// seedFlag replays a failing random test: go test ./engine -run X -seed N.
var seedFlag = flag.Uint64("seed", 0, "seed for the randomised tests (0: a fresh one, logged)")

// testSeeds returns a fixed seed (so one case is always the same) and a fresh
// one (logged, so a failure can be reproduced with -seed).
func testSeeds(t testing.TB) []uint64 {
	t.Helper()
	fresh := *seedFlag
	if fresh == 0 {
		fresh = rand.Uint64()
	}
	t.Logf("seeds: fixed 1, fresh %d (replay with -seed %d)", fresh, fresh)
	return []uint64{1, fresh}
}

// randomWalk returns n positive prices starting at start with per-bar
// log-volatility vol.
func randomWalk(rng *rand.Rand, n int, start, vol float64) []float64 {
	x := make([]float64, n)
	v := start
	for i := range x {
		v *= math.Exp(vol * rng.NormFloat64())
		x[i] = v
	}
	return x
}

// synthBars builds one-minute bars around the close series: high and low
// straddle it, so hl2 differs from close.
func synthBars(rng *rand.Rand, close []float64) *engine.Bars {
	n := len(close)
	b := &engine.Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: close, Volume: make([]float64, n)}
	for i, c := range close {
		b.Time[i] = int64(1_700_000_000+60*i) * 1e9
		b.Open[i] = c * (1 + 0.001*rng.NormFloat64())
		b.High[i] = max(c, b.Open[i]) * (1 + 0.002*rng.Float64())
		b.Low[i] = min(c, b.Open[i]) * (1 - 0.002*rng.Float64())
		b.Volume[i] = 1
	}
	return b
}

// closeBars is bars with only Close (and Time) set: enough for Backtest,
// BarReturns and SourceClose.
func closeBars(close []float64) *engine.Bars {
	t := make([]int64, len(close))
	for i := range t {
		t[i] = int64(1_700_000_000+60*i) * 1e9
	}
	return &engine.Bars{Time: t, Close: close}
}

var filOnce = sync.OnceValues(func() (*data.Dataset, error) {
	return data.Open("embedded:filusdt-1m", data.Options{})
})

// filBars returns the first n bars of the embedded FIL/USDT 1m dataset.
func filBars(tb testing.TB, n int) *engine.Bars {
	tb.Helper()
	ds, err := filOnce()
	if err != nil {
		tb.Fatalf("open embedded:filusdt-1m: %v", err)
	}
	b := ds.Bars.Slice(0, n)
	return &b
}

func toF[F engine.Float](x []float64) []F {
	out := make([]F, len(x))
	for i, v := range x {
		out[i] = F(v)
	}
	return out
}

func precName[F engine.Float]() string {
	var z F
	if _, ok := any(z).(float32); ok {
		return "fp32"
	}
	return "fp64"
}

// unitRoundoff is 2^-53 for float64 and 2^-24 for float32.
func unitRoundoff[F engine.Float]() float64 {
	var z F
	if _, ok := any(z).(float32); ok {
		return 0x1p-24
	}
	return 0x1p-53
}

// sameBits reports whether a and b are the same float (NaNs of any payload
// count as equal: the engine writes only its own NaN).
func sameBits[F engine.Float](a, b F) bool {
	if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) {
		return math.IsNaN(float64(a)) && math.IsNaN(float64(b))
	}
	var z F
	if _, ok := any(z).(float32); ok {
		return math.Float32bits(float32(a)) == math.Float32bits(float32(b))
	}
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b))
}

// near reports whether got is within rel (relative to want) or abs of want;
// infinities must match exactly, NaN matches only NaN.
func near(got, want, rel, abs float64) bool {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		return math.IsNaN(want) && math.IsNaN(got)
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		return got == want
	}
	return math.Abs(got-want) <= max(rel*math.Abs(want), abs)
}
