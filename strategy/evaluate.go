package strategy

import (
	"fmt"
	"sync"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// Inputs are one dataset's series in the working precision F, each of
// length n: the bars' high, low and close rounded to F, and the swept
// source x (SPEC "Input": close, hl2, hlc3 or ohlc4, evaluated in F as
// kernels.SourceSeries does, so the fp32 path is defined once).
//
// Moves are the source's bar-to-bar moves x64[i] - x64[i-1] computed in
// float64 and rounded to F once (Moves[0] = 0): `rsi`'s direct
// formulation reads them, since the difference of two prices rounded to
// F loses the move's low digits at price scale (a price is the prefix
// sum of its moves: differencing it is the prefix formulation's
// cancellation, docs/SPEC.md "rsi"). In float64 they equal the
// differences of Src bit for bit.
type Inputs[F Float] struct {
	High, Low, Close, Src []F
	Moves                 []F
	Source                engine.Source
}

// NewInputs rounds b's prices to F and builds the source src. Bars without
// highs and lows (closes only) take the close for both.
func NewInputs[F Float](b *engine.Bars, src engine.Source) *Inputs[F] {
	in := &Inputs[F]{
		High:   make([]F, b.Len()),
		Low:    make([]F, b.Len()),
		Close:  kernels.SourceSeries[F](b, engine.SourceClose),
		Src:    kernels.SourceSeries[F](b, src),
		Source: src,
	}
	hi, lo := b.High, b.Low
	if len(hi) != b.Len() || len(lo) != b.Len() {
		hi, lo = b.Close, b.Close // bars of closes only: the close is the bar's range
	}
	for i := range in.High {
		in.High[i], in.Low[i] = F(hi[i]), F(lo[i])
	}
	in.Moves = make([]F, b.Len())
	x64 := kernels.SourceSeries[float64](b, src)
	for i := 1; i < len(x64); i++ {
		in.Moves[i] = F(x64[i] - x64[i-1])
	}
	return in
}

// evaluator is a family's arithmetic, once per precision: it runs the
// family's series and state machine for one combo's values (one per axis
// of the family's grid, Kinds set on its leg axes), writing pos (len n,
// the state after each bar before the mode) and, when margin is not nil,
// each bar's margin (fraction of close), and returns the first valid bar.
// Each family's file defines its evaluator beside its state machine.
//
// sc is the series cache of a Sweep call, or nil (Evaluate): the
// evaluator reads every series it needs through sc.get, which computes it
// when sc is nil and otherwise once per key for the whole sweep.
type evaluator interface {
	eval64(in *Inputs[float64], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float64]) (int, error)
	eval32(in *Inputs[float32], c Combo, f Formulation, pos []State, margin []float64, sc *seriesCache[float32]) (int, error)
}

// seriesKey names one shared series: the family's series name ("ma",
// "zscore", "rsi", "channel"), the source it reads (src: the swept
// source, close, high, low), the kind for a moving average, the length
// and the formulation (Direct for the series without a prefix form, so
// that equal series share one key).
type seriesKey struct {
	name, src string
	kind      Kind
	length    int
	f         Formulation
}

// seriesCache holds the series of one Sweep call, each computed once on
// first use and then read by every combo that needs it, from any worker.
// An entry is one or more series of n values of F (a moving average or a
// channel: one; zscore: the mean and the sd), kept until the Sweep
// returns: the cache grows to the distinct series of the combos swept
// (Sweep's doc counts them).
type seriesCache[F Float] struct {
	mu sync.Mutex
	m  map[seriesKey]*seriesEntry[F]
}

type seriesEntry[F Float] struct {
	once sync.Once
	v    [][]F
	err  error
}

func newSeriesCache[F Float]() *seriesCache[F] {
	return &seriesCache[F]{m: map[seriesKey]*seriesEntry[F]{}}
}

// get is the series of key k: computed by compute when sc is nil, else
// computed once for the sweep (a failed computation's error is kept and
// returned to every reader). The series returned are shared: read only.
func (sc *seriesCache[F]) get(k seriesKey, compute func() ([][]F, error)) ([][]F, error) {
	if sc == nil {
		return compute()
	}
	sc.mu.Lock()
	e := sc.m[k]
	if e == nil {
		e = &seriesEntry[F]{}
		sc.m[k] = e
	}
	sc.mu.Unlock()
	e.once.Do(func() { e.v, e.err = compute() })
	return e.v, e.err
}

// snapshot is every series computed without error so far, by key (the
// slices are the cache's, not copies).
func (sc *seriesCache[F]) snapshot() map[seriesKey][][]F {
	sc.mu.Lock()
	es := make(map[seriesKey]*seriesEntry[F], len(sc.m))
	for k, e := range sc.m {
		es[k] = e
	}
	sc.mu.Unlock()
	out := make(map[seriesKey][][]F, len(es))
	for k, e := range es {
		e.once.Do(func() {}) // waits for one being computed
		if e.err == nil && e.v != nil {
			out[k] = e.v
		}
	}
	return out
}

// len is the number of entries computed or being computed.
func (sc *seriesCache[F]) len() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.m)
}

// Evaluate runs combo c of g over in with formulation f (prefix for the
// fp32 trap; families and kinds without a prefix form ignore it): pos
// (len n) receives the family's state after each bar before the mode
// (long-short; long-only maps -1 to 0 after, SPEC Part 2 "Families"),
// margin (nil or len n) each bar's margin as a fraction of close[i] (SPEC
// computes margins from the fp64 run: pass margin for it); c's stop
// values, if any, are not the family's (the backtest reads them, through
// Grid.Stops). It returns the
// first valid bar. Errors: a *ParamError for a value the family refuses,
// an error for an unknown family or mismatched lengths.
func Evaluate[F Float](g Grid, c Combo, in *Inputs[F], f Formulation, pos []State, margin []float64) (int, error) {
	fam, err := Lookup(g.Family)
	if err != nil {
		return 0, err
	}
	return evaluate(fam, c, in, f, pos, margin, nil)
}

// evaluate is Evaluate for the family fam, reading its series through sc
// (nil: computed for this combo alone).
func evaluate[F Float](fam Family, c Combo, in *Inputs[F], f Formulation, pos []State, margin []float64, sc *seriesCache[F]) (int, error) {
	if fam.eval == nil {
		return 0, fmt.Errorf("strategy %s: no arithmetic", fam.Name)
	}
	// The family reads its own values; the stop axes after them (at most
	// len(StopParams)) are the backtest's (Grid.Stops).
	if len(c.Values) < len(fam.Params) || len(c.Values) > len(fam.Params)+len(StopParams) {
		return 0, fmt.Errorf("strategy %s: combo has %d values for %d parameters", fam.Name, len(c.Values), len(fam.Params))
	}
	if n := len(in.Close); len(pos) != n || (margin != nil && len(margin) != n) {
		return 0, fmt.Errorf("strategy %s: %d bars, pos %d, margin %d", fam.Name, n, len(pos), len(margin))
	}
	switch in := any(in).(type) {
	case *Inputs[float64]:
		return fam.eval.eval64(in, c, f, pos, margin, any(sc).(*seriesCache[float64]))
	case *Inputs[float32]:
		return fam.eval.eval32(in, c, f, pos, margin, any(sc).(*seriesCache[float32]))
	}
	return 0, fmt.Errorf("strategy %s: unsupported precision", fam.Name)
}

// value is the decimal d in F: the nearest F to its decimal text (SPEC
// Part 2 "Parameters and grids": not float32 of the float64).
func value[F Float](d Decimal) F {
	var z F
	if _, ok := any(z).(float32); ok {
		return F(d.Float32())
	}
	return F(d.Float64())
}

// length is the integer value d (a length).
func length(d Decimal) int { return int(d.Int()) }

// leg is one side of a crossover: kind k of length L over the series x,
// named src in the cache (sources built from prices are defined from bar
// 0).
type leg[F Float] struct {
	x   []F
	src string
	k   Kind
	L   int
}

// legs computes the two moving averages of a crossover through sc and
// returns them with their first common valid bar.
func legs[F Float](a, b leg[F], f Formulation, sc *seriesCache[F]) (fa, fb []F, first int, err error) {
	if fa, err = maSeries(a, f, sc); err != nil {
		return nil, nil, 0, err
	}
	if fb, err = maSeries(b, f, sc); err != nil {
		return nil, nil, 0, err
	}
	return fa, fb, max(FirstValid(a.k, a.L, 0), FirstValid(b.k, b.L, 0)), nil
}

// maSeries is leg l's moving average, through sc. The formulation is part
// of the key only for the kinds that have a prefix form.
func maSeries[F Float](l leg[F], f Formulation, sc *seriesCache[F]) ([]F, error) {
	kf := f
	if l.k != SMA && l.k != WMA && l.k != HMA && l.k != HMA3 {
		kf = Direct
	}
	v, err := sc.get(seriesKey{name: "ma", src: l.src, kind: l.k, length: l.L, f: kf}, func() ([][]F, error) {
		out := make([]F, len(l.x))
		if err := MA(l.k, l.x, l.L, 0, f, out); err != nil {
			return nil, err
		}
		return [][]F{out}, nil
	})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}
