// Package datatest makes the bars tests run on: seeded random walks (fresh
// seeds, logged when a test fails, replayed with SWEEPBENCH_SEED), bars on
// a tick grid with ties, close-only bars, and the embedded FIL/USDT file.
// Every package's tests take their synthetic bars from here, engine's own
// included: it imports engine/data only, so any test can import it.
package datatest

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"sweepbench/engine/data"
)

// SeedEnv names the environment variable that replays a seed: a test that
// failed with "seed 123" runs on the same bars with SWEEPBENCH_SEED=123.
const SeedEnv = "SWEEPBENCH_SEED"

// Seed returns a fresh seed (or the one SWEEPBENCH_SEED gives) and logs it
// when t fails, so the failure can be replayed.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv(SeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", SeedEnv, s)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed %d (%s=%d replays it)", seed, SeedEnv, seed)
		}
	})
	return seed
}

// Seeds returns a fixed seed (1: one case is always the same) and a fresh
// one (Seed).
func Seeds(t testing.TB) []uint64 {
	t.Helper()
	return []uint64{1, Seed(t)}
}

// Rand returns a generator on a fresh seed (Seed).
func Rand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := Seed(t)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// t0 is the first bar's open time of the synthetic bars (Unix seconds);
// bars are one minute apart.
const t0 = 1_700_000_000

// Closes returns n positive prices, a geometric random walk from start
// with per-bar log-volatility vol.
func Closes(rng *rand.Rand, n int, start, vol float64) []float64 {
	x := make([]float64, n)
	v := start
	for i := range x {
		v *= math.Exp(vol * rng.NormFloat64())
		x[i] = v
	}
	return x
}

// AroundCloses builds one-minute bars on the given closes: the open within
// about 0.1% of the close, high and low straddling both by up to 0.2%, so
// hl2, hlc3 and ohlc4 differ from the close.
func AroundCloses(rng *rand.Rand, close []float64) *data.Bars {
	n := len(close)
	b := &data.Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: close, Volume: make([]float64, n)}
	for i, c := range close {
		b.Time[i] = int64(t0+60*i) * 1e9
		b.Open[i] = c * (1 + 0.001*rng.NormFloat64())
		b.High[i] = max(c, b.Open[i]) * (1 + 0.002*rng.Float64())
		b.Low[i] = min(c, b.Open[i]) * (1 - 0.002*rng.Float64())
		b.Volume[i] = 1
	}
	return b
}

// RandomWalk is AroundCloses(rng, Closes(rng, n, start, vol)).
func RandomWalk(rng *rand.Rand, n int, start, vol float64) *data.Bars {
	return AroundCloses(rng, Closes(rng, n, start, vol))
}

// TickWalk returns n one-minute bars whose prices sit on a grid of tick
// from about start: the close moves -2..+2 ticks a bar (kept above 100
// ticks), so unchanged closes (r = 0) and exact indicator ties are common,
// as on minute data; the open is the previous close, high and low 0..2
// ticks outside them.
func TickWalk(rng *rand.Rand, n int, start, tick float64) *data.Bars {
	b := &data.Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	ticks := math.Round(start / tick)
	for i := 0; i < n; i++ {
		prev := ticks
		ticks += float64(rng.IntN(5) - 2)
		if ticks < 100 {
			ticks = 100 + (100 - ticks)
		}
		c, o := ticks*tick, prev*tick
		b.Time[i] = int64(t0+60*i) * 1e9
		b.Open[i], b.Close[i] = o, c
		b.High[i] = math.Max(o, c) + tick*float64(rng.IntN(3))
		b.Low[i] = math.Min(o, c) - tick*float64(rng.IntN(3))
		b.Volume[i] = 1 + float64(rng.IntN(1000))
	}
	return b
}

// Flatten makes bars i with i%every < length flat (open, high, low and close
// at the previous close, r = 0), so that both indicators go flat and tie
// there; it returns b.
func Flatten(b *data.Bars, every, length int) *data.Bars {
	for i := 1; i < b.Len(); i++ {
		if i%every < length {
			c := b.Close[i-1]
			b.Open[i], b.High[i], b.Low[i], b.Close[i] = c, c, c, c
		}
	}
	return b
}

// CloseBars is bars with only Time (one minute apart) and Close set:
// enough for the close source, the bar returns and the parity report.
func CloseBars(close []float64) *data.Bars {
	t := make([]int64, len(close))
	for i := range t {
		t[i] = int64(t0+60*i) * 1e9
	}
	return &data.Bars{Time: t, Close: close}
}

var fil = sync.OnceValues(func() (*data.Dataset, error) {
	return data.Open("embedded:filusdt-1m", data.Options{})
})

// FIL returns the first n bars of the embedded FIL/USDT one-minute file
// (engine/data/embedded), loaded once per test binary.
func FIL(tb testing.TB, n int) *data.Bars {
	tb.Helper()
	ds, err := fil()
	if err != nil {
		tb.Fatalf("open embedded:filusdt-1m: %v", err)
	}
	if ds.Bars.Len() < n {
		tb.Fatalf("embedded:filusdt-1m has %d bars, want %d", ds.Bars.Len(), n)
	}
	b := ds.Bars.Slice(0, n)
	return &b
}

// Spacing is the synthetic bars' spacing, for a data.Info made of them.
const Spacing = time.Minute
