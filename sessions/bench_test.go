package sessions_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// BenchmarkSave measures saving results: one op is one combo, committed in
// batches of DefaultBatchRows.
func BenchmarkSave(b *testing.B) {
	st := newStudy(b, btcusdt(b, 2000), "10:1000:1", "12:1000:1", engine.FP64)
	s := openStore(b, "")
	w, err := begin(context.Background(), s, st, origin(2000), "")
	if err != nil {
		b.Fatal(err)
	}
	rs := make([]engine.ComboResult, 64)
	b.ResetTimer()
	for i := 0; i < b.N; i += len(rs) {
		for j := range rs {
			rs[j] = engine.ComboResult{Index: i + j, Combo: st.Grid.At(i + j), Metrics: engine.Metrics{TotalReturn: 0.1, Sharpe: float64(j), TotalTrades: 100}}
		}
		if err := w.Save(engine.FP64, rs); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}

// fastBackend is a backend whose kernel fills every combo's metrics from
// its index at once (no bars are read): a sweep as fast as Sweep itself,
// so that what a study costs beyond it is saving. With perCombo set, each
// chunk also takes perCombo per combo of sleep: a device computing at
// that rate while the host's cores are free (a GPU), which the committer
// may use.
type fastBackend struct {
	lanes, chunk int
	perCombo     time.Duration
}

var _ engine.Backend = (*fastBackend)(nil)

func (f *fastBackend) Name() string                    { return "fast" }
func (f *fastBackend) Available() error                { return nil }
func (*fastBackend) Devices() ([]engine.Device, error) { return []engine.Device{{Name: "fast"}}, nil }
func (f *fastBackend) Prepare(context.Context, *engine.Job) (engine.Kernel, error) {
	return fastKernel{f}, nil
}

type fastKernel struct{ f *fastBackend }

var _ engine.Kernel = fastKernel{}

func (k fastKernel) Lanes() int     { return k.f.lanes }
func (k fastKernel) ChunkSize() int { return k.f.chunk }
func (k fastKernel) Device() string { return "fast" }
func (k fastKernel) Close() error   { return nil }

func (k fastKernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	if k.f.perCombo > 0 {
		time.Sleep(time.Duration(len(out)) * k.f.perCombo)
	}
	for i := range out {
		x := uint64(first+i) * 0x9e3779b97f4a7c15 // distinct, full-width doubles
		u := float64(x>>11) / (1 << 53)
		out[i] = engine.Metrics{TotalReturn: u - 0.5, CAGR: 2*u - 1, Sharpe: 4*u - 2, Sortino: 5 * u, MaxDrawdown: u / 2,
			Calmar: 3 * u, WinRate: u, TotalTrades: int(x >> 54), VaR95: -u / 100, CVaR95: -u / 50, Omega: 1 + u,
			LongBars: int(x >> 52), ShortBars: int(x >> 53), FlatBars: 7}
	}
	return ctx.Err()
}

// BenchmarkStudySaving is the wall time of a 1,000 x 1,000 study (10^6
// combos, fp64) on fastBackend, end to end as `sweepbench run` computes
// it (sessions.RunStudy), without saving (--no-save) and with it. One op
// is one study. The cases:
//
//   - fast/*: the fake fills metrics as fast as Sweep takes them (on
//     every core): the study is all saving, the worst case.
//   - device/*: a device computing 100,000 combos/s with the cores idle
//     (a GPU-like rate): saving overlaps the sweep.
//   - gpu/*: the same at 500,000 combos/s: with the grid's HMA3 aliases
//     (step 1: each computed combo stands for two), 10^6 results a second
//     to save, an H200's rate.
//   - save-only: the same 10^6 rows through Writer.Save and Finish with
//     no sweep: the saving alone. A writer that saved inside the sweep
//     would cost about no-save + save-only.
func BenchmarkStudySaving(b *testing.B) {
	const hma, hma3 = "10:1009:1", "12:1011:1" // 1,000 x 1,000
	ds := btcusdt(b, 5000)
	study := func(be engine.Backend) *engine.Study {
		st := newStudy(b, ds, hma, hma3, engine.FP64)
		st.Backend = be
		if st.Grid.Len() != 1_000_000 {
			b.Fatalf("%d combos", st.Grid.Len())
		}
		return st
	}
	cases := []struct {
		name string
		be   *fastBackend
	}{
		{"fast", &fastBackend{lanes: runtime.NumCPU(), chunk: 4096}},
		{"device", &fastBackend{lanes: 1, chunk: 16384, perCombo: 10 * time.Microsecond}},
		{"gpu", &fastBackend{lanes: 1, chunk: 16384, perCombo: 2 * time.Microsecond}},
	}
	for _, c := range cases {
		for _, save := range []bool{false, true} {
			name := c.name + "/no-save"
			if save {
				name = c.name + "/save"
			}
			b.Run(name, func(b *testing.B) {
				var cpu time.Duration
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					st := study(c.be)
					var s *sessions.Store
					if save {
						var err error
						if s, err = sessions.Open(filepath.Join(b.TempDir(), "sessions.db")); err != nil {
							b.Fatal(err)
						}
					}
					runtime.GC()
					cpu0 := cpuTime()
					b.StartTimer()
					rep, rec, err := sessions.RunStudy(context.Background(), s, st, engine.StudyOptions{}, sessions.RecordOptions{})
					b.StopTimer()
					cpu += cpuTime() - cpu0
					if err != nil || rec.Err != nil || !rep.Complete() {
						b.Fatal(err, rec.Err)
					}
					if s != nil {
						s.Close()
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/combo")
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
	b.Run("save-only", func(b *testing.B) {
		st := study(cases[0].be)
		rep, err := engine.RunStudy(context.Background(), st, engine.StudyOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rows := rep.Runs[0].Results
		var cpu time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s, err := sessions.Open(filepath.Join(b.TempDir(), "sessions.db"))
			if err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			cpu0 := cpuTime()
			b.StartTimer()
			w, err := s.Begin(context.Background(), st)
			if err != nil {
				b.Fatal(err)
			}
			for lo := 0; lo < len(rows); lo += 4096 {
				if err := w.Save(engine.FP64, rows[lo:min(lo+4096, len(rows))]); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Finish(rep, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			cpu += cpuTime() - cpu0
			s.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/combo")
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	})
}

// BenchmarkSink204800 is the saving of a 320 x 320 study in both
// precisions and its parity report of 102,400 combos: the rows and report
// of one reference study on 600 bars, computed once. One op is a fresh
// store (opened, as `run` opens it, outside the timer), Begin, every chunk
// through Writer.Save, Finish, then Close. The cases:
//
//   - chunks: 204,800 results in chunks of 16,384, fp64 then fp32, then a
//     Flush before Finish (the committer kept up).
//   - gpu: each lane's 102,400 results in one chunk, as the H200 hands
//     them over (cuda's chunk is the whole grid up to 2^18 combos),
//     gpuLane apart (a lane's time on the device, the host's cores idle),
//     and Finish at once after the fp32 lane's chunk (a parity pass that
//     takes no time: the worst case).
//
// Their metrics:
//
//   - cpu-s/op: the process's CPU for the op (the committer and digest
//     goroutines included).
//   - tail-s/op: what the study, and then the process, wait for once the
//     sweep is done, the part of saving on the critical path of a GPU
//     study: gpu, from the fp32 lane's chunk handed to Save to Close's
//     return; chunks, Finish and Close after a Flush committed every
//     batch.
func BenchmarkSink204800(b *testing.B) {
	st := newStudy(b, btcusdt(b, 600), "10:329:1", "12:331:1")
	if st.Grid.Len() != 102_400 {
		b.Fatalf("%d combos", st.Grid.Len())
	}
	rep, err := engine.RunStudy(context.Background(), st, engine.StudyOptions{})
	if err != nil || rep.Parity == nil || len(rep.Parity.Combos) != 102_400 {
		b.Fatal("no parity report of 102,400 combos: ", err)
	}
	const gpuLane = 200 * time.Millisecond
	for _, c := range []struct {
		name  string
		chunk int
		gap   time.Duration // before each lane's first chunk
		flush bool
	}{
		{"chunks", 16384, 0, true},
		{"gpu", 102_400, gpuLane, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cpu, tail time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := sessions.Open(filepath.Join(b.TempDir(), "sessions.db"))
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				cpu0 := cpuTime()
				b.StartTimer()
				w, err := s.Begin(context.Background(), st)
				if err != nil {
					b.Fatal(err)
				}
				var t0 time.Time
				for _, run := range rep.Runs {
					time.Sleep(c.gap)
					t0 = time.Now()
					rows := run.Results
					for lo := 0; lo < len(rows); lo += c.chunk {
						if err := w.Save(run.Precision, rows[lo:min(lo+c.chunk, len(rows))]); err != nil {
							b.Fatal(err)
						}
					}
				}
				if c.flush {
					if err := w.Flush(); err != nil {
						b.Fatal(err)
					}
					t0 = time.Now()
				}
				if err := w.Finish(rep, nil); err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				tail += time.Since(t0)
				b.StopTimer()
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(tail.Seconds()/float64(b.N), "tail-s/op")
		})
	}
}
