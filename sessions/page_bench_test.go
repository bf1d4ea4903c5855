package sessions_test

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// peakHeap runs f and returns the most heap its objects took above what
// they took before (sampled every 200 us: a peak between samples may be
// missed by a little) and what stays live after it (after a collection).
// f runs with the collector at GOGC=5, so that the peak is what f holds at
// once, not the garbage the pacer lets pile up (which grows with the whole
// process's heap, whatever f holds): a measurement, slower than f is.
func peakHeap(f func()) (peak, live uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	base := read()
	done, top := make(chan struct{}), make(chan uint64)
	go func() {
		m := base
		for {
			m = max(m, read())
			select {
			case <-done:
				top <- m
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	f()
	close(done)
	m := max(<-top, read())
	runtime.GC()
	return m - base, max(read(), base) - base
}

// BenchmarkReadSaved is the memory of reading a saved fp64 run of 10^5
// (250 x 400) and 10^6 (1,000 x 1,000) combos, saved by a study on
// fastBackend: peak-MB is the most heap above the start while the
// operation runs, live-MB what it holds after (what a front end keeps).
//
//   - summary: OpenSummary with the default options (top 100 per list,
//     heatmaps capped at 256 x 256 cells), every batch read once;
//   - reader: OpenRunReader, every batch read once to verify it;
//   - top100: RunReader.Top, the best 100 by sortino under a filter, one
//     pass over the batches;
//   - window: RunReader.Window of 16 x 16 combos mid-grid;
//   - full: Open, every result in memory (export, diff, resume), for
//     comparison.
func BenchmarkReadSaved(b *testing.B) {
	for _, c := range []struct{ name, hma, hma3 string }{
		{"1e5", "10:259:1", "12:411:1"},
		{"1e6", "10:1009:1", "12:1011:1"},
	} {
		st := newStudy(b, btcusdt(b, 5000), c.hma, c.hma3, engine.FP64)
		st.Backend = &fastBackend{lanes: runtime.NumCPU(), chunk: 4096}
		s := openStore(b, "")
		_, rec, err := sessions.RunStudy(context.Background(), s, st, engine.StudyOptions{Discard: true}, sessions.RecordOptions{})
		if err != nil || rec.Err != nil {
			b.Fatal(err, rec.Err)
		}
		id, bg := rec.ID, context.Background()
		r, err := s.OpenRunReader(bg, id, engine.FP64)
		if err != nil {
			b.Fatal(err)
		}
		g := st.Grid
		ops := []struct {
			name string
			f    func() (any, error)
		}{
			{"summary", func() (any, error) { return s.OpenSummary(bg, id, engine.SummaryOptions{}) }},
			{"reader", func() (any, error) { return s.OpenRunReader(bg, id, engine.FP64) }},
			{"top100", func() (any, error) {
				return r.Top(bg, sessions.TopQuery{Objective: engine.Objective{Metric: "sortino"}, N: 100,
					Filter: func(c *engine.ComboResult) bool { return c.TotalTrades >= 100 }})
			}},
			{"window", func() (any, error) {
				r0, c0 := g.HMA.Len()/2, g.HMA3.Len()/2
				return r.Window(bg, r0, r0+16, c0, c0+16)
			}},
			{"full", func() (any, error) { return s.Open(bg, id) }},
		}
		for _, op := range ops {
			b.Run(c.name+"/"+op.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := op.f(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				var held any
				peak, live := peakHeap(func() {
					var err error
					if held, err = op.f(); err != nil {
						b.Fatal(err)
					}
				})
				runtime.KeepAlive(held)
				b.ReportMetric(float64(peak)/1e6, "peak-MB")
				b.ReportMetric(float64(live)/1e6, "live-MB")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.Len()), "ns/combo")
			})
		}
	}
}
