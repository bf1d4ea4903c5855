package bench

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"time"

	"sweepbench/engine"
)

// RungFunc computes every combo of job by one method and returns the run
// (Results in grid order) and the part of the time spent on indicators.
type RungFunc func(ctx context.Context, job *engine.Job) (run *engine.Run, indicators time.Duration, err error)

// Rung is one method of the ladder.
type Rung struct {
	ID        string           // "M0".."M7"
	Method    string           // what it does, in a few words
	Precision engine.Precision // of its results
	// Sample, when > 0, times only this many combos spread uniformly over
	// the grid and extrapolates (for the naive baseline); parity then covers
	// the sampled combos only.
	Sample int
	Run    RungFunc
	Skip   string // non-empty: not run, and why (no GPU, not on macOS, ...)
	// SameAs names a rung whose results this one must equal bit for bit
	// (the same kernel on fewer GPUs); RungResult.Mismatches counts combos
	// that differ in any metric.
	SameAs string
}

// RungResult is one row of the ladder.
type RungResult struct {
	ID, Method   string
	Precision    engine.Precision
	Skipped      string
	Combos       int           // combos timed
	Extrapolated bool          // timed on a sample; CombosPerS and Wall scaled to the grid
	Wall         time.Duration // end to end for the whole grid (extrapolated when sampled)
	Indicators   time.Duration // of which indicators (extrapolated when sampled)
	CombosPerS   float64
	SpeedupVsM0  float64 // 0 when M0 did not run
	SpeedupVsM3  float64 // 0 when M3 did not run
	Repeats      int
	Parity       *RungParity // against M2 (M3 when M2 did not run); nil for the reference itself
	SameAs       string      // the rung it must equal bit for bit, if any
	Mismatches   int         // combos whose metrics differ from SameAs's (-1: SameAs did not run)
	Err          string
}

// RungParity is the trade-count parity of a rung against M2.
type RungParity struct {
	Against       string         // "M2", or "M3" (the same code on all cores) when M2 did not run
	Compared      int            // combos compared
	ShiftedTrades int            // sum |dn|
	MaxAbsDn      int            // max |dn|
	MaxAbsDPnLpp  float64        // max |dPnL| in percentage points
	Verdict       engine.Verdict // pass or collapse (SPEC rules on dn and dPnL; flips and indicator errors are the run report's business)
	Note          string
}

// BenchOptions configure RunLadder.
type BenchOptions struct {
	Repeat   int                     // timed repetitions, best kept (default 3)
	Progress func(id, status string) // optional: called as each rung starts and ends
	// OnResult, when set, receives each rung's row as soon as it is timed
	// (speedups and parity are filled in only in RunLadder's final result,
	// once every rung has run).
	OnResult func(RungResult)
}

// RunLadder runs the rungs in order on job's bars and grid. Each rung gets
// one untimed warm-up run (kernel load, JIT, first-touch memory) and then
// Repeat timed runs; the best wall time is kept. Speedups are ratios of
// wall times measured in this one process.
func RunLadder(ctx context.Context, base *engine.Job, rungs []Rung, opt BenchOptions) ([]RungResult, error) {
	if err := base.Validate(); err != nil {
		return nil, err
	}
	if opt.Repeat <= 0 {
		opt.Repeat = 3
	}
	var out []RungResult
	runs := map[string]*engine.Run{}
	for _, r := range rungs {
		res := RungResult{ID: r.ID, Method: r.Method, Precision: r.Precision, Skipped: r.Skip, SameAs: r.SameAs}
		if r.Skip != "" {
			out = append(out, res)
			continue
		}
		if opt.Progress != nil {
			opt.Progress(r.ID, "running")
		}
		job := *base
		job.Precision = r.Precision
		job.Cache = nil
		total := base.Grid.Len()
		var sample []int
		if r.Sample > 0 && r.Sample < total {
			for i := 0; i < r.Sample; i++ {
				sample = append(sample, int(float64(i)*float64(total-1)/float64(max(r.Sample-1, 1))+0.5))
			}
		}
		var best *engine.Run
		var bestInd time.Duration
		var err error
		for rep := 0; rep <= opt.Repeat && err == nil; rep++ {
			var run *engine.Run
			var ind time.Duration
			if sample != nil {
				run, ind, err = runSample(ctx, &job, r.Run, sample)
			} else {
				run, ind, err = r.Run(ctx, &job)
			}
			if err != nil {
				break
			}
			if rep == 0 {
				continue // warm-up
			}
			if best == nil || run.Elapsed < best.Elapsed {
				best, bestInd = run, ind
			}
		}
		if err != nil {
			res.Err = err.Error()
			out = append(out, res)
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			continue
		}
		res.Repeats = opt.Repeat
		res.Combos = len(best.Results)
		scale := 1.0
		if sample != nil {
			res.Extrapolated = true
			scale = float64(total) / float64(len(sample))
		}
		res.Wall = time.Duration(float64(best.Elapsed) * scale)
		res.Indicators = time.Duration(float64(bestInd) * scale)
		if res.Wall > 0 {
			res.CombosPerS = float64(total) / res.Wall.Seconds()
		}
		runs[r.ID] = best
		out = append(out, res)
		if opt.OnResult != nil {
			opt.OnResult(res)
		}
		if opt.Progress != nil {
			opt.Progress(r.ID, "done")
		}
	}
	wall := func(id string) time.Duration {
		for i := range out {
			if out[i].ID == id && out[i].Skipped == "" && out[i].Err == "" {
				return out[i].Wall
			}
		}
		return 0
	}
	m0, m3 := wall("M0"), wall("M3")
	refID := "M2"
	if runs[refID] == nil {
		refID = "M3" // bit-identical to M2: the same code on all cores
	}
	ref := runs[refID]
	for i := range out {
		r := &out[i]
		if runs[r.ID] == nil || r.Wall <= 0 {
			continue
		}
		if m0 > 0 {
			r.SpeedupVsM0 = m0.Seconds() / r.Wall.Seconds()
		}
		if m3 > 0 {
			r.SpeedupVsM3 = m3.Seconds() / r.Wall.Seconds()
		}
		if ref != nil && r.ID != refID {
			r.Parity = rungParity(ref, runs[r.ID])
			r.Parity.Against = refID
		}
		if r.SameAs != "" {
			r.Mismatches = -1
			if same := runs[r.SameAs]; same != nil {
				r.Mismatches = mismatches(same, runs[r.ID])
			}
		}
	}
	return out, nil
}

// runSample times fn on a sampled sub-grid: each sampled combo as its own
// one-combo job, results re-indexed to the full grid.
func runSample(ctx context.Context, job *engine.Job, fn RungFunc, sample []int) (*engine.Run, time.Duration, error) {
	start := time.Now()
	run := &engine.Run{Precision: job.Precision, WMA: job.WMA, Grid: job.Grid, Status: engine.StatusComplete}
	var ind time.Duration
	for _, idx := range sample {
		c := job.Grid.At(idx)
		one := *job
		one.Grid = engine.Grid{HMA: engine.Range{Start: c.HMA, Stop: c.HMA, Step: 1}, HMA3: engine.Range{Start: c.HMA3, Stop: c.HMA3, Step: 1}}
		r, d, err := fn(ctx, &one)
		if err != nil {
			return nil, 0, err
		}
		ind += d
		for _, res := range r.Results {
			res.Index = idx
			run.Results = append(run.Results, res)
		}
		run.Backend, run.Device = r.Backend, r.Device
	}
	run.Elapsed = time.Since(start)
	return run, ind, nil
}

// mismatches counts the combos of b whose metrics are not bit-identical to
// a's (NaN equal to NaN), plus combos missing from either.
func mismatches(a, b *engine.Run) int {
	n := abs(len(a.Results) - len(b.Results))
	for i := range b.Results {
		x := a.Lookup(b.Results[i].Index)
		if x == nil {
			n++
			continue
		}
		for _, name := range engine.MetricNames {
			u, _ := x.Value(name)
			v, _ := b.Results[i].Value(name)
			if math.Float64bits(u) != math.Float64bits(v) && !(math.IsNaN(u) && math.IsNaN(v)) {
				n++
				break
			}
		}
	}
	return n
}

func rungParity(ref, test *engine.Run) *RungParity {
	p := &RungParity{Verdict: engine.VerdictPass}
	for i := range test.Results {
		t := &test.Results[i]
		r := ref.Lookup(t.Index)
		if r == nil {
			continue
		}
		p.Compared++
		dn := t.TotalTrades - r.TotalTrades
		p.ShiftedTrades += abs(dn)
		p.MaxAbsDn = max(p.MaxAbsDn, abs(dn))
		d := math.Abs(100 * (t.TotalReturn - r.TotalReturn))
		if gtNaN(d, p.MaxAbsDPnLpp) {
			p.MaxAbsDPnLpp = d
		}
		if float64(abs(dn)) > math.Max(0.01*float64(r.TotalTrades), 2) {
			p.Verdict = engine.VerdictCollapse
		}
	}
	if !(p.MaxAbsDPnLpp <= engine.MaxDPnLpp) {
		p.Verdict = engine.VerdictCollapse
	}
	return p
}

// RungNaive is M0: every combo recomputes its own WMAs by the direct
// O(n*p) sum, scalar, serial: the pandas-like baseline, run by the
// registered Arithmetic (NaiveSweep).
func RungNaive(ctx context.Context, job *engine.Job) (*engine.Run, time.Duration, error) {
	a, err := engine.CPU()
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	ms, ind, err := a.NaiveSweep(ctx, job)
	if err != nil {
		return nil, 0, err
	}
	run := &engine.Run{Backend: "reference", Device: "1 CPU thread", Precision: engine.FP64, WMA: engine.Direct, Grid: job.Grid, Status: engine.StatusComplete,
		Results: make([]engine.ComboResult, len(ms))}
	for i, m := range ms {
		run.Results[i] = engine.ComboResult{Index: i, Combo: job.Grid.At(i), Metrics: m}
	}
	run.Elapsed = time.Since(start)
	return run, ind, nil
}

// RungDeviceIndicators is M5: fp32 indicators from the device, trades and
// metrics on the CPU in fp64 from those series (widened exactly), on every
// core (the registered Arithmetic's BacktestSeries64).
func RungDeviceIndicators(dev engine.IndicatorDevice, name string) RungFunc {
	return func(ctx context.Context, job *engine.Job) (*engine.Run, time.Duration, error) {
		a, err := engine.CPU()
		if err != nil {
			return nil, 0, err
		}
		start := time.Now()
		j := *job
		j.Precision, j.WMA = engine.FP32, engine.Direct
		ind32, err := dev.Indicators32(ctx, &j)
		if err != nil {
			return nil, 0, err
		}
		indTime := time.Since(start)
		h := map[int][]float64{}
		for L, s := range ind32.H {
			h[L] = toFloat64(s)
		}
		// An h3 is held under both lengths of its p, one slice: widened once.
		h3 := map[int][]float64{}
		widened := map[*float32][]float64{}
		for L, s := range ind32.H3 {
			if len(s) == 0 {
				h3[L] = nil
				continue
			}
			w, ok := widened[&s[0]]
			if !ok {
				w = toFloat64(s)
				widened[&s[0]] = w
			}
			h3[L] = w
		}
		ms, err := a.BacktestSeries64(ctx, job, h, h3)
		if err != nil {
			return nil, 0, err
		}
		run := &engine.Run{Backend: name, Device: fmt.Sprintf("%s + %d CPU threads", name, runtime.GOMAXPROCS(0)),
			Precision: engine.FP32, WMA: engine.Direct, Grid: job.Grid, Status: engine.StatusComplete,
			Results: make([]engine.ComboResult, len(ms))}
		for i, m := range ms {
			run.Results[i] = engine.ComboResult{Index: i, Combo: job.Grid.At(i), Metrics: m}
		}
		run.Elapsed = time.Since(start)
		return run, indTime, nil
	}
}

// SkipNotes says why rungs were skipped, one line per reason, rungs with
// the same reason together ("M5, M6, M7 skipped: CUDA driver not found
// ..."), in ladder order.
func SkipNotes(res []RungResult) []string {
	var reasons []string
	ids := map[string][]string{}
	for _, r := range res {
		if r.Skipped == "" {
			continue
		}
		if _, ok := ids[r.Skipped]; !ok {
			reasons = append(reasons, r.Skipped)
		}
		ids[r.Skipped] = append(ids[r.Skipped], r.ID)
	}
	out := make([]string, len(reasons))
	for i, why := range reasons {
		out[i] = strings.Join(ids[why], ", ") + " skipped: " + why
	}
	return out
}
