// Package data loads OHLCV bars from the file layouts quants download
// (generic CSV, Binance archive CSV, freqtrade JSON, Binance REST klines
// JSON, QuantConnect LEAN CSV with LEAN's folder conventions, Parquet,
// Arrow IPC / Feather v2; gzip or zip of any of them; a folder or glob of
// them as one dataset), validates them per SPEC ("Input files") as they
// stream within Limits, resamples them, and serves the embedded datasets
// (shipped pre-parsed). What it parses it keeps in a cache (CacheDir) in
// its parsed form (parsed.go), read back instead of parsing the same
// bytes again.
// Its errors are *Error (and *LimitError), every outside string through
// Sanitize; it imports nothing of the engine or the front ends.
package data

import "time"

// Bars is a column-major OHLCV series. All slices have the same length n.
// Time holds each bar's open time as Unix nanoseconds, UTC, strictly
// increasing. Prices are finite and > 0 with High >= Low; Volume is >= 0.
type Bars struct {
	Time   []int64
	Open   []float64
	High   []float64
	Low    []float64
	Close  []float64
	Volume []float64
}

// Len returns the number of bars.
func (b *Bars) Len() int { return len(b.Close) }

// Slice returns the bars [lo, hi) sharing the underlying arrays.
func (b *Bars) Slice(lo, hi int) Bars {
	return Bars{
		Time: b.Time[lo:hi], Open: b.Open[lo:hi], High: b.High[lo:hi],
		Low: b.Low[lo:hi], Close: b.Close[lo:hi], Volume: b.Volume[lo:hi],
	}
}

// First returns the first bar's open time (zero Time when empty).
func (b *Bars) First() time.Time {
	if len(b.Time) == 0 {
		return time.Time{}
	}
	return time.Unix(0, b.Time[0]).UTC()
}

// Last returns the last bar's open time (zero Time when empty).
func (b *Bars) Last() time.Time {
	if len(b.Time) == 0 {
		return time.Time{}
	}
	return time.Unix(0, b.Time[len(b.Time)-1]).UTC()
}
