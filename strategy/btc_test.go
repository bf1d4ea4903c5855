package strategy

import (
	"sync"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
)

var btc struct {
	once sync.Once
	bars *engine.Bars
	err  error
}

// btcBars is the embedded btcusdt-1m dataset (43,208 one-minute bars of
// June 2025, prices ~100,000), loaded once for every test of the package.
func btcBars(tb testing.TB) *engine.Bars {
	tb.Helper()
	btc.once.Do(func() {
		ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
		if err != nil {
			btc.err = err
			return
		}
		btc.bars = &ds.Bars
	})
	if btc.err != nil {
		tb.Fatalf("open embedded:btcusdt-1m: %v", btc.err)
	}
	return btc.bars
}
