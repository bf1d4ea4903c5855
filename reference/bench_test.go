package reference

import (
	"context"
	"sync"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
)

var filOnce = sync.OnceValues(func() (*data.Dataset, error) {
	return data.Open("embedded:filusdt-1m", data.Options{})
})

// benchSweep runs the default study's grid (20:200:20 x 30:240:30, 80
// combos) over the first 150,000 bars of the embedded FIL/USDT 1m file,
// end to end (indicators built in Prepare every time: no cache), and
// reports combos/s and the prepare share.
func benchSweep(b *testing.B, prec engine.Precision, form engine.Formulation) {
	ds, err := filOnce()
	if err != nil {
		b.Fatal(err)
	}
	bars := ds.Bars.Slice(0, 150000)
	job := &engine.Job{Bars: &bars, Grid: engine.Grid{HMA: engine.Range{Start: 20, Stop: 200, Step: 20}, HMA3: engine.Range{Start: 30, Stop: 240, Step: 30}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Precision: prec, WMA: form}
	var combos int
	var prepare float64
	b.ResetTimer()
	for b.Loop() {
		run, err := engine.Sweep(context.Background(), New(), job, engine.SweepOptions{})
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
