package strategy

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"sync"
	"unsafe"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// The join to the sweep engine: a Grid of a family other than hull is an
// engine.Strategy (engine/strategy.go), registered in init as
// engine.NewStrategy, so that a Spec naming --strategy runs through the
// engine's one study path (Sweep, parity, outputs, the sessions store).
// hull itself stays the engine's own grid (engine.Grid's HMA x HMA3) with
// its GPU kernels; its Family entry here is for `sweepbench strategies`
// and for the tests that check both paths agree.

func init() { engine.NewStrategy = newEngineStrategy }

// engineGrid is a Grid as an engine.Strategy. It is a pointer so that
// engine.Grid stays comparable; its caches hold each job's inputs and
// series, computed once however many combos and goroutines read them.
type engineGrid struct {
	g Grid

	mu   sync.Mutex
	jobs map[jobKey]*jobData
}

// jobKey names one dataset's series in one precision and formulation.
type jobKey struct {
	bars *engine.Bars
	src  engine.Source
	prec engine.Precision
	form Formulation
}

// jobData is one jobKey's inputs, bar returns and series cache; exactly
// one of the precisions' fields is set.
type jobData struct {
	once sync.Once
	in64 *Inputs[float64]
	in32 *Inputs[float32]
	r64  []float64
	r32  []float32
	sc64 *seriesCache[float64]
	sc32 *seriesCache[float32]

	// digests are, by combo index, a digest of the states the sweep's
	// kernel computed (statesDigest; 0: not computed here, e.g. a combo
	// resumed from a session, or a grid with stops, whose positions are
	// not its states): the parity report skips a combo whose states the
	// two precisions' kernels computed alike.
	digestsOnce sync.Once
	digests     []uint64

	// x64 or x32 is the execution options' prices (reference.Exec, no
	// stops: each combo sets its own), built once on first use (exec).
	execOnce sync.Once
	x64      *reference.Exec[float64]
	x32      *reference.Exec[float32]
}

// exec is d's reference.Exec in F (the job's bars' prices rounded to F),
// built on first use and shared (read only; WithStops copies it).
func exec[F Float](d *jobData, bars *engine.Bars) *reference.Exec[F] {
	d.execOnce.Do(func() {
		var z F
		if _, ok := any(z).(float32); ok {
			d.x32 = reference.NewExec[float32](bars)
		} else {
			d.x64 = reference.NewExec[float64](bars)
		}
	})
	var x any = d.x64
	if d.x32 != nil {
		x = d.x32
	}
	return x.(*reference.Exec[F])
}

// needsExec reports whether a study of g with p needs the execution
// options' loop: stops in the grid, or fill next-open (slippage and the
// risk-free rate run in the fast loop).
func needsExec(g Grid, p engine.Params) bool {
	return g.HasStops() || p.Fill == engine.FillNextOpen
}

// statesSeed seeds the states' digests: one per process, so digests are
// compared only within the process that computed them.
var statesSeed = maphash.MakeSeed()

// statesDigest is a 64-bit digest of a combo's states (maphash, never 0).
// Equal states give equal digests; the parity report takes equal digests
// as equal states, which two different state series of one combo would
// break with a probability of about 2^-64.
func statesDigest(pos []State) uint64 {
	if len(pos) == 0 {
		return 1
	}
	return maphash.Bytes(statesSeed, unsafe.Slice((*byte)(unsafe.Pointer(&pos[0])), len(pos))) | 1
}

// digestsOf is d's digests, allocated for the grid's n combos.
func (d *jobData) digestsOf(n int) []uint64 {
	d.digestsOnce.Do(func() { d.digests = make([]uint64, n) })
	return d.digests
}

func newEngineStrategy(family string, params map[string]string, fastBelowSlow bool) (engine.Strategy, error) {
	if family == engine.FamilyHull {
		return nil, &engine.FieldError{Field: engine.FieldStrategy, Value: family, Err: errors.New("hull is the engine's own grid (Spec.HMA, Spec.HMA3)")}
	}
	g, err := NewGrid(family, params, fastBelowSlow)
	if err != nil {
		var pe *ParamError
		if errors.As(err, &pe) {
			field := engine.FieldParams
			switch pe.Param {
			case "strategy":
				field = engine.FieldStrategy
			case "fast-below-slow":
				field = engine.FieldFastBelowSlow
			}
			value := pe.Value
			if field == engine.FieldParams {
				value = pe.Param + "=" + pe.Value
			}
			return nil, &engine.FieldError{Field: field, Value: value, Err: reasonOnly{pe}}
		}
		return nil, err
	}
	return &engineGrid{g: g, jobs: map[jobKey]*jobData{}}, nil
}

// reasonOnly is a *ParamError inside an engine.FieldError, which already
// names the parameter and its value: it reads as the reason alone.
type reasonOnly struct{ pe *ParamError }

func (r reasonOnly) Error() string { return r.pe.Reason }
func (r reasonOnly) Unwrap() error { return r.pe }

// GridOf is the strategy grid s wraps, when s is one of this package's.
func GridOf(s engine.Strategy) (Grid, bool) {
	if eg, ok := s.(*engineGrid); ok {
		return eg.g, true
	}
	return Grid{}, false
}

func (e *engineGrid) Family() string      { return e.g.Family }
func (e *engineGrid) Len() int            { return e.g.Len() }
func (e *engineGrid) FastBelowSlow() bool { return e.g.FastBelowSlow }

// Memory: every family but the crossovers has memory, and so does any
// grid with stops (SPEC Part 2 "Parity for families with memory").
func (e *engineGrid) Memory() bool {
	return e.g.Family != "cross" && e.g.Family != "hull" || e.g.HasStops()
}
func (e *engineGrid) String() string { return e.g.String() }

func (e *engineGrid) Axes() []engine.StrategyAxis {
	out := make([]engine.StrategyAxis, len(e.g.Axes))
	for i, ax := range e.g.Axes {
		a := engine.StrategyAxis{Name: ax.Param.Name, Range: ax.Range.String(), Integer: ax.Param.Kind != DecimalParam}
		if ax.Leg != nil {
			a.Kind, a.Range = string(ax.Leg.Kind), ax.Leg.String()
		}
		a.Values = make([]string, ax.Range.Len())
		for k := range a.Values {
			a.Values[k] = ax.Range.At(k).String()
		}
		out[i] = a
	}
	return out
}

func (e *engineGrid) Point(i int) []engine.ParamValue {
	c := e.g.At(i)
	out := make([]engine.ParamValue, len(c.Values))
	for k, v := range c.Values {
		pv := engine.ParamValue{Name: e.g.Axes[k].Param.Name, Kind: string(c.Kinds[k]), Text: v.String(), Value: v.Float64()}
		if c.Kinds[k] == Price {
			pv.Text, pv.Value = "0", 0
		}
		out[k] = pv
	}
	return out
}

func (e *engineGrid) Coords(i int) []int {
	c := e.g.At(i)
	out := make([]int, len(c.Values))
	for k, v := range c.Values {
		out[k] = e.g.Axes[k].Range.IndexOf(v)
	}
	return out
}

func (e *engineGrid) IndexOf(coords []int) int {
	if len(coords) != len(e.g.Axes) {
		return -1
	}
	c := Combo{Values: make([]Decimal, len(coords))}
	for k, x := range coords {
		r := e.g.Axes[k].Range
		if x < 0 || x >= r.Len() {
			return -1
		}
		c.Values[k] = r.At(x)
	}
	return e.g.Index(c)
}

func (e *engineGrid) Texts() map[string]string {
	m := map[string]string{}
	for _, ax := range e.g.Axes {
		if ax.Leg != nil {
			m[ax.Param.Name] = ax.Leg.String()
		} else {
			m[ax.Param.Name] = ax.Range.String()
		}
	}
	return m
}

// Series counts the distinct series the grid's combos read (strategy.Sweep
// lists them per family) plus the inputs (high, low, close, source,
// moves) and the bar returns, and with stops the six series of the
// execution options' prices (reference.Exec; fill next-open without stops
// builds them too, which this count, without the study's options, leaves
// out).
func (e *engineGrid) Series() int {
	inputs := 6
	if e.g.HasStops() {
		inputs += 6 // the stops' prices (reference.Exec: open, high, low, close, gap, intra)
	}
	lengths := func(names ...string) int {
		seen := map[string]bool{}
		for _, ax := range e.g.Axes {
			for _, nm := range names {
				if ax.Param.Name != nm {
					continue
				}
				for k := range ax.Range.Len() {
					kind := ""
					if ax.Leg != nil {
						kind = string(ax.Leg.Kind)
					}
					seen[kind+" "+ax.Range.At(k).String()] = true
				}
			}
		}
		return len(seen)
	}
	switch e.g.Family {
	case "cross":
		return inputs + lengths("fast", "slow")
	case "zscore":
		return inputs + 3*lengths("length") // mean, sd and z
	case "rsi":
		return inputs + lengths("length")
	case "breakout":
		return inputs + 2*lengths("entry", "exit")
	}
	return inputs
}

// CheckParams: breakout reads high, low and close, whatever the source;
// prefix needs a series that has a prefix form (cross: an sma, wma, hma
// or hma3 leg; zscore; rsi; not breakout, whose channels are exact).
func (e *engineGrid) CheckParams(p engine.Params, form Formulation) error {
	if e.g.Family == "breakout" && p.Source != engine.SourceClose {
		return &engine.FieldError{Field: engine.FieldSource, Value: p.Source.String(),
			Err: errors.New("breakout reads high, low and close; the source does not apply (leave it at close)")}
	}
	if form != Prefix {
		return nil
	}
	switch e.g.Family {
	case "breakout":
		return &engine.FieldError{Field: engine.FieldWMA, Value: form.String(),
			Err: errors.New("breakout has no prefix formulation (its channels are maxima and minima, exact in any precision)")}
	case "cross":
		for _, ax := range e.g.Axes {
			if ax.Leg != nil && hasPrefix(ax.Leg.Kind) {
				return nil
			}
		}
		return &engine.FieldError{Field: engine.FieldWMA, Value: form.String(),
			Err: fmt.Errorf("no leg of %s has a prefix form (sma, wma, hma and hma3 do; ema, dema, tema and price are recursions or prices)", e.g)}
	}
	return nil
}

// hasPrefix reports whether kind k has a prefix formulation.
func hasPrefix(k Kind) bool { return k == SMA || k == WMA || k == HMA || k == HMA3 }

// BarsNeeded is the first valid bar of the grid's longest lengths + 2:
// the warm-ups grow with every length, so the longest combo bounds them.
func (e *engineGrid) BarsNeeded() int {
	last := func(name string) int {
		for _, ax := range e.g.Axes {
			if ax.Param.Name == name {
				return int(ax.Range.Last().Int())
			}
		}
		return 0
	}
	first := 0
	switch e.g.Family {
	case "cross", "hull":
		for _, ax := range e.g.Axes {
			if ax.isStop() {
				continue
			}
			k := Kind("")
			if ax.Leg != nil {
				k = ax.Leg.Kind
			} else if ax.Param.Name == "hma" {
				k = HMA
			} else {
				k = HMA3
			}
			first = max(first, FirstValid(k, int(ax.Range.Last().Int()), 0))
		}
	case "zscore":
		first = last("length") - 1
	case "breakout":
		first = max(last("entry"), last("exit"))
	case "rsi":
		first = last("length")
	}
	return first + 2
}

// data is job's inputs and series cache in precision prec and
// formulation form, built once.
func (e *engineGrid) data(job *engine.Job, prec engine.Precision, form Formulation) *jobData {
	if prec == engine.FP64 {
		form = Direct
	}
	k := jobKey{bars: job.Bars, src: job.Params.Source, prec: prec, form: form}
	e.mu.Lock()
	d := e.jobs[k]
	if d == nil {
		d = &jobData{}
		e.jobs[k] = d
	}
	e.mu.Unlock()
	d.once.Do(func() {
		if prec == engine.FP32 {
			d.in32 = NewInputs[float32](job.Bars, job.Params.Source)
			d.r32 = kernels.BarReturns[float32](job.Bars)
			d.sc32 = newSeriesCache[float32]()
		} else {
			d.in64 = NewInputs[float64](job.Bars, job.Params.Source)
			d.r64 = kernels.BarReturns[float64](job.Bars)
			d.sc64 = newSeriesCache[float64]()
		}
	})
	return d
}

// Prepare is the reference kernel of a strategy grid: Lanes threads, each
// combo's states by its family then reference.BacktestPositions, the
// series shared through the job's cache.
func (e *engineGrid) Prepare(ctx context.Context, job *engine.Job, threads int) (engine.Kernel, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fam, err := Lookup(e.g.Family)
	if err != nil {
		return nil, err
	}
	threads = max(1, threads)
	d := e.data(job, job.Precision, job.WMA)
	dg := d.digestsOf(e.g.Len())
	if e.g.HasStops() {
		dg = nil // the positions are not the states: no digest stands for them
	}
	if job.Precision == engine.FP32 {
		k := &kernel[float32]{e: e, fam: fam, job: job, in: d.in32, r: d.r32, sc: d.sc32, digests: dg, lanes: newLanes[float32](threads, job.Bars.Len())}
		if needsExec(e.g, job.Params) {
			k.x = exec[float32](d, job.Bars)
		}
		return k, nil
	}
	k := &kernel[float64]{e: e, fam: fam, job: job, in: d.in64, r: d.r64, sc: d.sc64, digests: dg, lanes: newLanes[float64](threads, job.Bars.Len())}
	if needsExec(e.g, job.Params) {
		k.x = exec[float64](d, job.Bars)
	}
	return k, nil
}

type lane[F Float] struct {
	pos []State
	scr reference.Scratch[F]
	x   reference.Exec[F] // the kernel's Exec with the combo's stops
}

// comboExec is x (nil: none needed) with combo c's stops, in l's copy.
func (l *lane[F]) comboExec(x *reference.Exec[F], g Grid, c Combo) *reference.Exec[F] {
	if x == nil {
		return nil
	}
	l.x = *x
	l.x.Stops, l.x.Margin = g.Stops(c), nil
	return &l.x
}

func newLanes[F Float](n, bars int) []lane[F] {
	ls := make([]lane[F], n)
	for i := range ls {
		ls[i].pos = make([]State, bars)
	}
	return ls
}

type kernel[F Float] struct {
	e       *engineGrid
	fam     Family
	job     *engine.Job
	in      *Inputs[F]
	r       []F
	sc      *seriesCache[F]
	digests []uint64           // by combo index: statesDigest of what this kernel computed (nil: none kept)
	x       *reference.Exec[F] // the execution options' prices (needsExec), else nil
	lanes   []lane[F]
}

var (
	_ engine.Kernel      = (*kernel[float64])(nil)
	_ engine.BlockKernel = (*kernel[float32])(nil)
)

func (k *kernel[F]) Lanes() int { return len(k.lanes) }

// ChunkSize is the last axis' length: a chunk's combos share the series
// of every other axis.
func (k *kernel[F]) ChunkSize() int {
	if n := len(k.e.g.Axes); n > 0 {
		return max(1, k.e.g.Axes[n-1].Range.Len())
	}
	return 1
}
func (k *kernel[F]) Device() string {
	return fmt.Sprintf("%s (%d threads)", reference.CPUModel(), len(k.lanes))
}
func (k *kernel[F]) Close() error { return nil }

func (k *kernel[F]) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	return k.ComputeBlocks(ctx, lane, first, out, nil)
}

// ComputeBlocks evaluates combos [first, first+len(out)) with each combo's
// per-block statistics when bs is set (engine.BlockKernel), through
// reference.BacktestX or BacktestPositionsX with the job's execution
// options and each combo's stops (the fast loop when neither asks more
// than Part 1's fills at the close).
func (k *kernel[F]) ComputeBlocks(ctx context.Context, lane, first int, out []engine.Metrics, bs *engine.BlockStats) error {
	l := &k.lanes[lane]
	le, fused := k.fam.eval.(legsEvaluator)
	for i := range out {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := k.e.g.At(first + i)
		if fused {
			// A crossover of two series: the backtest loop decides the
			// positions itself (BacktestBlocks(b, a): long while a > b),
			// the metrics bit for bit those of the states' path.
			a, b, fv, err := legsOf(le, k.in, c, k.job.WMA, k.sc)
			if err != nil {
				return err
			}
			out[i] = reference.BacktestX(b, a, k.r, fv, k.job.Params, l.comboExec(k.x, k.e.g, c), &l.scr, bs, i)
			continue
		}
		fv, err := evaluate(k.fam, c, k.in, k.job.WMA, l.pos, nil, k.sc)
		if err != nil {
			return err
		}
		if k.digests != nil {
			k.digests[first+i] = statesDigest(l.pos)
		}
		out[i] = reference.BacktestPositionsX(l.pos, k.r, fv, k.job.Params, l.comboExec(k.x, k.e.g, c), &l.scr, bs, i)
	}
	return nil
}

// legsOf is le's two series in F.
func legsOf[F Float](le legsEvaluator, in *Inputs[F], c Combo, f Formulation, sc *seriesCache[F]) (a, b []F, first int, err error) {
	switch in := any(in).(type) {
	case *Inputs[float64]:
		a, b, first, err := le.legs64(in, c, f, any(sc).(*seriesCache[float64]))
		return any(a).([]F), any(b).([]F), first, err
	case *Inputs[float32]:
		a, b, first, err := le.legs32(in, c, f, any(sc).(*seriesCache[float32]))
		return any(a).([]F), any(b).([]F), first, err
	}
	return nil, nil, 0, fmt.Errorf("strategy: unsupported precision")
}

// Compare is combo i's divergences, test (precision, formulation) against
// fp64 direct, after the mode, over the bars held (pos[n-1] never is).
// With stops the positions compared are those held (the family's states
// through the stops, each precision's trace of
// reference.BacktestPositionsTraceX on its own prices), and a root's
// margin is the smaller of the family's and the stops' (the distance of
// the price compared from its level, Exec.Margin) in fp64.
func (e *engineGrid) Compare(ctx context.Context, job *engine.Job, test engine.Precision, form Formulation, i int, tol float64) ([]engine.StrategyFlip, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fam, err := Lookup(e.g.Family)
	if err != nil {
		return nil, err
	}
	n := job.Bars.Len()
	c := e.g.At(i)
	d64 := e.data(job, engine.FP64, Direct)
	stops := e.g.HasStops()
	if le, ok := fam.eval.(legsEvaluator); ok && test == engine.FP32 && !stops {
		return compareLegs(le, job, c, d64, e.data(job, test, form), form, tol)
	}
	// States both kernels computed alike (their digests equal): no flip.
	// Digests that differ say the raw states differ (the positions after
	// the mode may still agree): the fp64 margins are then read at once.
	// With stops equal states say nothing of the positions (no digests).
	dt := e.data(job, test, form)
	known := stops
	if d64 != dt && !stops {
		g64, gt := d64.digestsOf(e.g.Len()), dt.digestsOf(e.g.Len())
		if g64[i] != 0 && g64[i] == gt[i] {
			return nil, nil
		}
		known = g64[i] != 0 && gt[i] != 0
	}
	buf := compareBufs.Get().(*compareBuf)
	defer compareBufs.Put(buf)
	buf.grow(n)
	p64, m64, pt := buf.p64, buf.m64, buf.pt
	// Without digests, fp64 first without margins: they are read only
	// where the positions differ, and most combos of a direct formulation
	// differ nowhere.
	var m64first []float64
	if known {
		m64first = m64
	}
	f64, err := evaluate(fam, c, d64.in64, Direct, p64, m64first, d64.sc64)
	if err != nil {
		return nil, err
	}
	var ft int
	if test == engine.FP32 {
		ft, err = evaluate(fam, c, dt.in32, form, pt, nil, dt.sc32)
	} else {
		ft, err = evaluate(fam, c, dt.in64, form, pt, nil, dt.sc64)
	}
	if err != nil {
		return nil, err
	}
	if stops {
		x := exec[float64](d64, job.Bars).WithStops(e.g.Stops(c))
		x.Margin = m64
		heldPositions(p64, d64.r64, f64, job.Params, x)
		if test == engine.FP32 {
			heldPositions(pt, dt.r32, ft, job.Params, exec[float32](dt, job.Bars).WithStops(e.g.Stops(c)))
		} else {
			heldPositions(pt, dt.r64, ft, job.Params, exec[float64](dt, job.Bars).WithStops(e.g.Stops(c)))
		}
	} else if job.Params.Mode == engine.LongOnly {
		for b := range p64 {
			p64[b], pt[b] = max(p64[b], 0), max(pt[b], 0)
		}
	}
	held := max(n-1, 0)
	if slices.Equal(p64[:held], pt[:held]) {
		return nil, nil
	}
	if !known {
		if _, err := evaluate(fam, c, d64.in64, Direct, p64, m64, d64.sc64); err != nil {
			return nil, err
		}
		if job.Params.Mode == engine.LongOnly {
			for b := range p64 {
				p64[b] = max(p64[b], 0)
			}
		}
	}
	r := d64.r64
	flip := func(root, bars int, m float64) engine.StrategyFlip {
		f := engine.StrategyFlip{Root: root, Bars: bars, Pos64: p64[root], Pos32: pt[root], Margin: m, Borderline: m < tol}
		for b := root; b <= root+bars && b < held; b++ {
			if b > 0 {
				f.Trades += changed(pt, b) - changed(p64, b)
			}
			if b < root+bars {
				f.DPnLpp += 100 * float64(pt[b]-p64[b]) * r[b+1]
			}
		}
		return f
	}
	var out []engine.StrategyFlip
	if !e.Memory() {
		// Memoryless (SPEC Part 2): each flip bar is judged by its own margin.
		for b := range held {
			if p64[b] != pt[b] {
				out = append(out, flip(b, 1, m64[b]))
			}
		}
		return out, nil
	}
	ds := Divergences(p64[:held], pt[:held], m64[:held], tol)
	if stops {
		inheritStopRoots(ds, p64[:held], pt[:held], tol)
	}
	for _, dv := range ds {
		out = append(out, flip(dv.Root, dv.Bars, dv.Margin))
	}
	return out, nil
}

// inheritStopRoots gives a divergence of a study with stops the root
// margin of the divergence before it when the two precisions come to its
// root holding the same side from trades entered on different bars: the
// entry differs by an earlier divergence, so the stop levels differ by the
// entry prices, not by rounding, and the root's own margin (a price's
// distance from levels that are not the same level) says nothing of the
// precision (docs/SPEC.md "Parity with stops"). p64 and pt are the held
// positions; a trade starts where a run of one non-zero position starts
// (after a stop the position is 0 until the state changes, so a new trade
// always starts a new run).
func inheritStopRoots(ds []Divergence, p64, pt []State, tol float64) {
	if len(ds) < 2 {
		return
	}
	start := func(p []State, i int) int { // the first bar of the run of p[i]
		for i > 0 && p[i-1] == p[i] {
			i--
		}
		return i
	}
	for k := 1; k < len(ds); k++ {
		r := ds[k].Root
		if r == 0 || p64[r-1] != pt[r-1] || p64[r-1] == 0 {
			continue
		}
		if start(p64, r-1) != start(pt, r-1) {
			ds[k].Margin = ds[k-1].Margin
			ds[k].Borderline = ds[k].Margin < tol
		}
	}
}

// heldPositions overwrites st (a family's states) with the positions held after
// the mode and the stops of x: the trace of
// reference.BacktestPositionsTraceX (its Pos; x.Margin, when set, takes
// the stops' margins).
func heldPositions[F Float](st []State, r []F, first int, p engine.Params, x *reference.Exec[F]) {
	_, tr := reference.BacktestPositionsTraceX(st, r, first, p, x)
	copy(st, tr.Pos)
}

// Trace is combo i recomputed alone, through Evaluate and
// reference.BacktestPositionsTraceX with the job's execution options and
// the combo's stops (the sweep's backtest loop: the trades' fill prices
// and exit reasons filled in), with its signal lines (SignalSeries). In
// fp64 the margins are the family's and, where a stop was checked, the
// smaller of that and the stop's (reference.Exec.Margin).
func (e *engineGrid) Trace(ctx context.Context, job *engine.Job, i int) (engine.StrategyTrace, error) {
	if err := ctx.Err(); err != nil {
		return engine.StrategyTrace{}, err
	}
	if i < 0 || i >= e.g.Len() {
		return engine.StrategyTrace{}, fmt.Errorf("strategy %s: combo %d outside the grid's %d", e.g.Family, i, e.g.Len())
	}
	if job.Precision == engine.FP32 {
		return trace[float32](e.g, e.g.At(i), job)
	}
	return trace[float64](e.g, e.g.At(i), job)
}

func trace[F Float](g Grid, c Combo, job *engine.Job) (engine.StrategyTrace, error) {
	in := NewInputs[F](job.Bars, job.Params.Source)
	f := job.WMA
	if job.Precision == engine.FP64 {
		f = Direct
	}
	pos := make([]State, len(in.Close))
	var margin []float64
	if job.Precision == engine.FP64 {
		margin = make([]float64, len(pos))
	}
	first, err := Evaluate(g, c, in, f, pos, margin)
	if err != nil {
		return engine.StrategyTrace{}, err
	}
	x := reference.NewExec[F](job.Bars).WithStops(g.Stops(c))
	x.Margin = margin
	m, tr := reference.BacktestPositionsTraceX(pos, kernels.BarReturns[F](job.Bars), first, job.Params, x)
	sig, err := SignalSeries(g, c, in, f)
	if err != nil {
		return engine.StrategyTrace{}, err
	}
	return engine.StrategyTrace{Metrics: m, Trace: tr, Signal: sig, First: first, Margin: margin}, nil
}

// compareLegs is Compare for a crossover of two series (a memoryless
// family: each flip bar judged by its own margin) against fp32: both
// precisions' states walked side by side (reference.PositionFlips, hull's
// parity walk), and every figure of a flip read off the series: its margin
// |a-b|/close at the bar (as Cross writes it), and the states around it
// (a bar that is no flip holds one state in both precisions, the fp64
// machine's). The flips equal those of the positions path, bar for bar.
func compareLegs(le legsEvaluator, job *engine.Job, c Combo, d64, d32 *jobData, form Formulation, tol float64) ([]engine.StrategyFlip, error) {
	a64, b64, first, err := le.legs64(d64.in64, c, Direct, d64.sc64)
	if err != nil {
		return nil, err
	}
	a32, b32, _, err := le.legs32(d32.in32, c, form, d32.sc32)
	if err != nil {
		return nil, err
	}
	n := job.Bars.Len()
	held := max(n-1, 0)
	type bar struct{ p64, p32 int8 }
	flips := map[int]bar{}
	var order []int
	reference.PositionFlips(b64, a64, b32, a32, first, held, job.Params.Mode, func(i int, p64, p32 int8) {
		flips[i] = bar{p64, p32}
		order = append(order, i)
	})
	if len(order) == 0 {
		return nil, nil
	}
	low := int8(-1)
	if job.Params.Mode == engine.LongOnly {
		low = 0
	}
	// at is the two states after bar k (k >= 0).
	at := func(k int) bar {
		if f, ok := flips[k]; ok {
			return f
		}
		for j := k; j >= max(first, 0); j-- {
			if a64[j] > b64[j] {
				return bar{1, 1}
			} else if a64[j] < b64[j] {
				return bar{low, low}
			}
		}
		return bar{}
	}
	close, r := job.Bars.Close, d64.r64
	out := make([]engine.StrategyFlip, 0, len(order))
	for _, i := range order {
		f := flips[i]
		m := math.Abs(a64[i]-b64[i]) / close[i]
		sf := engine.StrategyFlip{Root: i, Bars: 1, Pos64: f.p64, Pos32: f.p32, Margin: m, Borderline: m < tol,
			DPnLpp: 100 * float64(f.p32-f.p64) * r[i+1]}
		for b := i; b <= i+1 && b < held; b++ {
			if b > 0 {
				prev, cur := at(b-1), at(b)
				sf.Trades += boolInt(cur.p32 != prev.p32) - boolInt(cur.p64 != prev.p64)
			}
		}
		out = append(out, sf)
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// changed is 1 when pos changes at bar b (b >= 1), else 0.
func changed(pos []State, b int) int {
	if pos[b] != pos[b-1] {
		return 1
	}
	return 0
}

// compareBuf is one Compare call's positions and margins, pooled: a
// parity report compares every combo, each over every bar.
type compareBuf struct {
	p64, pt []State
	m64     []float64
}

var compareBufs = sync.Pool{New: func() any { return &compareBuf{} }}

func (b *compareBuf) grow(n int) {
	if cap(b.p64) < n {
		b.p64, b.pt, b.m64 = make([]State, n), make([]State, n), make([]float64, n)
	}
	b.p64, b.pt, b.m64 = b.p64[:n], b.pt[:n], b.m64[:n]
}

// SeriesErrors compares every series the test precision's cache holds for
// job (those the compared combos read: call after Compare) with the fp64
// series of the same name, source, kind and length.
func (e *engineGrid) SeriesErrors(ctx context.Context, job *engine.Job, test engine.Precision, form Formulation) ([]engine.SeriesError, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d64 := e.data(job, engine.FP64, Direct)
	dt := e.data(job, test, form)
	ref := d64.sc64.snapshot()
	var out []engine.SeriesError
	add := func(k seriesKey, tv [][]float64) {
		rk := k
		rk.f = Direct
		rv, ok := ref[rk]
		if !ok || len(rv) != len(tv) {
			return
		}
		for j := range tv {
			name := seriesName(k, j)
			if name == "z" {
				continue // zscore's z is its mean and sd's quotient, kept for the states: SPEC's errors are those of m and sd
			}
			out = append(out, seriesError(name, k.length, rv[j], tv[j], errorScale(name, job.Bars.Close)))
		}
	}
	if test == engine.FP32 {
		for k, v := range dt.sc32.snapshot() {
			tv := make([][]float64, len(v))
			for j, s := range v {
				tv[j] = make([]float64, len(s))
				for b, x := range s {
					tv[j][b] = float64(x)
				}
			}
			add(k, tv)
		}
	} else {
		for k, v := range dt.sc64.snapshot() {
			add(k, v)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Series != out[b].Series {
			return out[a].Series < out[b].Series
		}
		return out[a].Length < out[b].Length
	})
	return out, nil
}

// seriesName names component j of a cached series for the parity
// report: a moving average by its kind ("ema", "sma"; "ema(high)" off the
// swept source), zscore's "mean" and "sd", "rsi", a channel "high"/"low".
func seriesName(k seriesKey, j int) string {
	switch k.name {
	case "ma":
		if k.src != "src" && k.src != "" {
			return fmt.Sprintf("%s(%s)", k.kind, k.src)
		}
		return string(k.kind)
	case "zscore":
		return []string{"mean", "sd", "z"}[min(j, 2)]
	case "channel":
		return "channel " + k.src
	}
	return k.name
}

// errorScale is the denominator of a series' indicator error at each bar,
// nil for SPEC's |x32-x64|/|x64|. SPEC's relative error is meant for
// series at price scale; for a series that approaches 0 within its
// range it measures nothing (rsi 2 near 0, a window's sd on flat prices),
// so sweepbench takes the scale its margin is judged on (docs/SPEC.md
// "Parity for Part 2"): the RSI scale (100) for rsi, the bar's close for
// zscore's sd.
func errorScale(name string, close []float64) func(b int) float64 {
	switch name {
	case "rsi":
		return func(int) float64 { return 100 }
	case "sd":
		return func(b int) float64 { return math.Abs(close[b]) }
	}
	return nil
}

// seriesError is the max relative error of test against ref over the bars
// where ref is defined and not 0 (engine.SeriesError), relative to
// scale(b) when scale is set.
func seriesError(name string, L int, ref, test []float64, scale func(b int) float64) engine.SeriesError {
	se := engine.SeriesError{Series: name, Length: L}
	for b := range ref {
		r, t := ref[b], test[b]
		if math.IsNaN(r) || r == 0 && scale == nil {
			continue
		}
		den := math.Abs(r)
		if scale != nil {
			den = scale(b)
		}
		rel := math.Abs(t-r) / den
		if math.IsNaN(t) {
			rel = math.Inf(1)
		}
		if rel > se.MaxRel {
			se.MaxRel, se.Bar = rel, b
		}
	}
	return se
}
