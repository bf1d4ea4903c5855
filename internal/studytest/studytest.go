// Package studytest holds the helpers the external tests of package engine
// and of its sub-packages (output, shard) share: embedded datasets loaded
// once per test binary, cut to their first bars, and small studies on the
// reference CPU backend.
package studytest

import (
	"fmt"
	"sync"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

var datasets sync.Map // name -> *data.Dataset, loaded once per test binary

// OpenDataset opens dataset name (data.Open), once per test binary.
func OpenDataset(tb testing.TB, name string) *data.Dataset {
	tb.Helper()
	if ds, ok := datasets.Load(name); ok {
		return ds.(*data.Dataset)
	}
	ds, err := data.Open(name, data.Options{})
	if err != nil {
		tb.Fatalf("open %s: %v", name, err)
	}
	datasets.Store(name, ds)
	return ds
}

// Head keeps the first n bars, as `sweepbench run --head n` does.
func Head(ds *data.Dataset, n int) *data.Dataset {
	if n >= ds.Bars.Len() {
		return ds
	}
	out := &data.Dataset{Info: ds.Info, Bars: ds.Bars.Slice(0, n)}
	out.Info.Bars = n
	out.Info.Last = out.Bars.Last()
	out.Info.Name = fmt.Sprintf("%s[:%d]", ds.Info.Name, n)
	return out
}

// MustRange is engine.ParseRange, failing tb on an error.
func MustRange(tb testing.TB, flag, s string) engine.Range {
	tb.Helper()
	r, err := engine.ParseRange(flag, s)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// Study is the grid hma x hma3 over ds at the default fee, long-short on
// the close, fp64 and fp32 with WMA formulation form, on the reference
// backend.
func Study(tb testing.TB, ds *data.Dataset, hma, hma3 string, form engine.Formulation) *engine.Study {
	return &engine.Study{
		Dataset:    ds,
		Grid:       engine.Grid{HMA: MustRange(tb, "--hma", hma), HMA3: MustRange(tb, "--hma3", hma3)},
		Params:     engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: engine.BarsPerYear(ds.Info.MedianSpacing)},
		Precisions: []engine.Precision{engine.FP64, engine.FP32},
		WMA:        form,
		Backend:    reference.New(),
	}
}
