package engine

import "sweepbench/engine/data"

// Bars is the OHLCV type every side speaks; it lives in engine/data with
// the loaders.
type Bars = data.Bars
