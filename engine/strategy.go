package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// Strategies other than hull (SPEC Part 2). A study's grid is hull's two
// integer ranges (Grid.HMA x Grid.HMA3, the engine's own arithmetic and
// every GPU kernel) or, when Grid.Strategy is set, the N-dimensional grid
// of another family, which package strategy builds, computes and compares.
// engine reaches it only through the Strategy interface, and builds one
// from a Spec through NewStrategy, which package strategy registers in its
// init (as package reference registers the CPU arithmetic): engine never
// imports strategy.
//
// A combo of a strategy grid is its index: ComboResult.Combo is zero, and
// every front end reads its parameters with Grid.Point(index).

// Strategy is the grid of one strategy family other than hull, and what
// the engine asks of its arithmetic. Implementations are immutable and
// safe for concurrent use.
type Strategy interface {
	// Family is the family's name: cross, zscore, breakout, rsi.
	Family() string
	// Len is the number of combos (after --fast-below-slow, if given).
	Len() int
	// Axes are the grid's dimensions in the family's order of parameters,
	// the last varying fastest (combo index = row-major over Axes).
	Axes() []StrategyAxis
	// Point is combo i's parameter values, one per axis, in axis order.
	Point(i int) []ParamValue
	// Coords is combo i's index along each axis.
	Coords(i int) []int
	// IndexOf is the combo at those axis indices, or -1 when the grid holds
	// none there (--fast-below-slow drops it, an index off its axis).
	IndexOf(coords []int) int
	// Texts are the grid's parameters as a Spec holds them (name -> range
	// text, a leg "KIND:RANGE"), from which NewStrategy rebuilds it.
	Texts() map[string]string
	// FastBelowSlow is the crossover restriction (SPEC Part 2).
	FastBelowSlow() bool
	// Memory reports whether the family has memory (SPEC Part 2 "Parity
	// for families with memory": zscore, breakout, rsi): its divergences
	// are judged by their root bar, and a combo moved past the per-combo
	// limits only by borderline ones is sensitive, not a collapse. A
	// memoryless family (cross) lists each flip bar with its own margin.
	Memory() bool
	// CheckParams refuses the study parameters and the fp32 formulation
	// the family cannot use (a *FieldError: breakout reads high, low and
	// close, so a --source other than close; prefix where no series the
	// grid reads has a prefix form).
	CheckParams(p Params, form Formulation) error
	// Series is how many series of n values a study of the grid holds in
	// one precision at its peak (the memory forecast): every distinct
	// series its combos read (the sweep's cache keeps them for the
	// parity report) plus its inputs and the bar returns.
	Series() int
	// BarsNeeded is the bars the grid's longest combo needs: its first
	// valid bar + 2 (SPEC "How many bars are enough", per family).
	BarsNeeded() int
	// String names the grid: "fast ema:5:50:5 x slow sma:20:200:10".
	String() string
	// Prepare readies job (whose Grid.Strategy is this grid) on the CPU in
	// job.Precision and job.WMA (the formulation), on threads cores: the
	// reference backend's kernel for a strategy grid.
	Prepare(ctx context.Context, job *Job, threads int) (Kernel, error)
	// Compare computes, for combo i of job's grid, the divergences of the
	// positions (after the mode) of the test precision and formulation
	// (test.Precision, test.WMA) against fp64 direct, each judged by its
	// root bar's fp64 margin against tol (SPEC Part 2 "Parity for
	// families with memory"). Safe to call from many goroutines: the
	// series are computed once per job (keyed by precision and
	// formulation).
	Compare(ctx context.Context, job *Job, test Precision, form Formulation, i int, tol float64) ([]StrategyFlip, error)
	// Trace recomputes combo i of job in job.Precision and job.WMA through
	// the sweep's code path (its metrics equal the sweep's bit for bit),
	// with the bar-by-bar record and what its state machine compared.
	Trace(ctx context.Context, job *Job, i int) (StrategyTrace, error)
	// SeriesErrors are the fp32 (test) series' max relative errors against
	// fp64, one per series the grid reads (e.g. "ema" 20, "zscore" 30).
	SeriesErrors(ctx context.Context, job *Job, test Precision, form Formulation) ([]SeriesError, error)
}

// StrategyTrace is one strategy combo recomputed (Strategy.Trace).
//
// First is the combo's first valid bar; Margin, for fp64 only (SPEC
// computes margins from the fp64 run; nil in fp32), each bar's margin as a
// fraction of close (or of the RSI scale), NaN before First.
type StrategyTrace struct {
	Metrics Metrics
	Trace   *Trace
	Signal  Signal
	First   int
	Margin  []float64
}

// Signal is what a combo's state machine compares, for a chart around a
// flip (the workbench's and the HTML report's signal chart): the lines it
// reads on one axis and the constant levels it compares them with. Each
// line has n values (NaN where undefined), in float64 from the precision
// that computed them; package strategy's SignalSeries says what each
// family draws.
type Signal struct {
	Scale  string // "price", "z" or "rsi": the unit of the axis
	Lines  []SignalLine
	Levels []SignalLevel
}

// SignalLine is one series of a Signal.
type SignalLine struct {
	Name   string
	Values []float64
}

// SignalLevel is one constant threshold of a Signal.
type SignalLevel struct {
	Name  string
	Value float64
}

// StrategyAxis is one dimension of a strategy grid.
type StrategyAxis struct {
	Name string // SPEC name: length, entry, exit, lower, upper, fast, slow
	Kind string // a leg's moving-average kind ("ema", "price"); "" otherwise
	// Integer: the values are integers (a length, a leg's length); false
	// for a decimal threshold (entry, exit, lower, upper).
	Integer bool
	Values  []string // its values' exact decimal texts, in order
	Range   string   // as written: "5:50:5" (a leg: "ema:5:50:5")
}

// ParamValue is one parameter of a combo.
type ParamValue struct {
	Name  string  // SPEC name (StrategyAxis.Name)
	Kind  string  // a leg's kind, "" otherwise
	Text  string  // the exact decimal ("1.75", "20")
	Value float64 // its float64
}

// StrategyFlip is one divergence of a strategy combo: the bars [Root,
// Root+Bars) over which the two precisions' positions differ.
//
// Trades is how many more position changes the test precision made than
// fp64 over [Root, Root+Bars] (the bar they agree again included), DPnLpp
// the return it moved: 100 x the sum over its bars b of (pos_test[b] -
// pos64[b]) x r64[b+1], in percentage points, additive and before fees
// (what the divergence held differently, over the bars it held it).
type StrategyFlip struct {
	Root, Bars int
	Pos64      int8 // fp64 position at the root
	Pos32      int8 // the test precision's
	Margin     float64
	Borderline bool
	Trades     int
	DPnLpp     float64
}

// NewStrategy builds family's grid from params (name -> range text, as
// --param gives them), or returns the family's *FieldError. Package
// strategy sets it in its init; nil until a program links it.
var NewStrategy func(family string, params map[string]string, fastBelowSlow bool) (Strategy, error)

// ErrNoStrategies: a Spec names a family other than hull in a program
// that does not link package strategy.
var ErrNoStrategies = errors.New("strategy families are not linked into this program")

// HullStops is why hull refuses a stop parameter (StopParams): its grid
// is the engine's own (HMA x HMA3, with its GPU kernels), and the same
// crossover as a cross grid takes stops.
const HullStops = "hull takes no stops; the same crossover as a cross grid does: --strategy cross --fast hma3:RANGE --slow hma:RANGE (fast hma3 and slow hma, both on the source: hull's with --source close)"

// FamilyHull is the default family (SPEC Part 1), Grid.Strategy nil.
const FamilyHull = "hull"

// Family is the grid's strategy family: "hull" for HMA x HMA3.
func (g Grid) Family() string {
	if g.Strategy != nil {
		return g.Strategy.Family()
	}
	return FamilyHull
}

// Point is combo i's parameters: hull's hma and hma3, or the strategy
// grid's values in its order.
func (g Grid) Point(i int) []ParamValue {
	if g.Strategy != nil {
		return g.Strategy.Point(i)
	}
	c := g.At(i)
	return []ParamValue{
		{Name: FieldHMA, Text: fmt.Sprint(c.HMA), Value: float64(c.HMA)},
		{Name: FieldHMA3, Text: fmt.Sprint(c.HMA3), Value: float64(c.HMA3)},
	}
}

// Label names combo i as the reports do: "hma 355, hma3 312", or
// "fast ema 20, slow sma 100", "length 20, entry 2, exit 0.5".
func (g Grid) Label(i int) string {
	if g.Strategy == nil {
		return g.At(i).Label()
	}
	return PointLabel(g.Strategy.Point(i))
}

// PointLabel is Label's text for a combo's parameters.
func PointLabel(ps []ParamValue) string {
	s := ""
	for k, p := range ps {
		if k > 0 {
			s += ", "
		}
		s += p.Name + " "
		if p.Kind != "" {
			s += p.Kind
			if p.Kind == "price" {
				continue
			}
			s += " "
		}
		s += p.Text
	}
	return s
}

// Columns are the parameter columns of every output (JSON, CSV, Parquet,
// the sessions store) for the grid, in order: "hma", "hma3" for hull; a
// family's parameters, each leg as NAME_kind then NAME (its length).
func (g Grid) Columns() []string {
	if g.Strategy == nil {
		return []string{FieldHMA, FieldHMA3}
	}
	var cols []string
	for _, ax := range g.Strategy.Axes() {
		if ax.Kind != "" {
			cols = append(cols, ax.Name+"_kind")
		}
		cols = append(cols, ax.Name)
	}
	return cols
}

// CheckParams is the grid's family's check of p (Strategy.CheckParams);
// nil for hull, which takes every Params.
func (g Grid) CheckParams(p Params, form Formulation) error {
	if g.Strategy == nil {
		return nil
	}
	return g.Strategy.CheckParams(p, form)
}

// strategyGrid builds the grid of a Spec naming a family other than hull.
func strategyGrid(family string, params map[string]string, fastBelowSlow bool) (Grid, error) {
	if NewStrategy == nil {
		return Grid{}, &FieldError{Field: FieldStrategy, Value: family, Err: ErrNoStrategies}
	}
	s, err := NewStrategy(family, params, fastBelowSlow)
	if err != nil {
		return Grid{}, err
	}
	if s.Len() == 0 && fastBelowSlow {
		return Grid{}, &FieldError{Field: FieldFastBelowSlow, Value: s.String(),
			Err: errors.New("no combo has its fast leg shorter than its slow one: lower the fast lengths or raise the slow ones")}
	}
	return Grid{Strategy: s}, nil
}

// sortedKeys is m's keys in order (for stable texts).
func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// PairStrategy is a Strategy whose combos a GPU's sweep kernels run
// from series the strategy computes (Pairs): Part 1's crossover of two
// series (SPEC Part 2 "cross": long while the fast leg is above the slow,
// short while below, unchanged on a tie or NaN), or the three-state
// machine of the families with memory (zscore, rsi, breakout) over a
// value and four levels. A backend that takes such grids implements
// PairRunner; the others run them on the reference.
type PairStrategy interface {
	Strategy
	// PairsOK reports whether a study of the grid with p runs as pairs:
	// combo i = a*NB + b over NA first-axis and NB last-axis columns (no
	// stops, no --fast-below-slow, fill close).
	PairsOK(p Params) bool
	// Pairs64 and Pairs32 are job's series in its precision and
	// formulation (job.WMA), computed once per job and shared with the
	// grid's parity report.
	Pairs64(ctx context.Context, job *Job) (*Pairs[float64], error)
	Pairs32(ctx context.Context, job *Job) (*Pairs[float32], error)
}

// PairMachine is how a combo reads its Pairs.
type PairMachine int

const (
	// MachineCross (cross): combo a*NB + b is long while A[a] > B[b],
	// short while below (flat in long-only), unchanged on a tie or NaN.
	MachineCross PairMachine = iota
	// MachineBands (zscore, rsi): the state machine of the families with
	// memory (below) over v = A[a][i] and the constant levels Levels[b];
	// a NaN v keeps the state (zscore's sd = 0, rsi's 0/0) and -0 sends it
	// to 0 (zscore's undefined variance, prefix: no value is -0 otherwise).
	MachineBands
	// MachineChannel (breakout): the same machine over v = V[i] (the
	// close) with the levels read per bar, negated: long entry when
	// V > A[a] (the entry channel's high), short entry when V < A2[a] (its
	// low), long exit when V < B[b] (the exit channel's low), short exit
	// when V > B2[b] (its high).
	MachineChannel
)

// Pairs are a PairStrategy's series for one job, each n values in F in
// bar order: A (NA columns, the first axis: cross's fast leg, zscore's
// and rsi's length, breakout's entry length) and B (NB, the last axes:
// cross's slow leg, breakout's exit length; zscore's (entry, exit) and
// rsi's (lower, upper) pairs, as Levels only). Combo a*NB + b is flat
// before max(FirstA[a], FirstB[b]).
//
// The families with memory (MachineBands, MachineChannel) share one
// three-state machine (strategy.zscoreStep, rsiStates, breakoutMachine,
// in long-short; the mode maps -1 to 0 after), every comparison strict,
// written for Bands with Levels[b] = (tLE, tSE, tLX, tSX):
//
//	from  0: v < tLE -> +1, else v > tSE -> -1;
//	from +1: v > tLX -> 0, and then v > tSE -> -1 on the same bar;
//	from -1: v < tSX -> 0, and then v < tLE -> +1.
//
// (zscore: -entry, entry, the largest F below -exit, the smallest F above
// exit; rsi: lower, upper, upper, lower.) Channel's levels are per bar,
// as MachineChannel says; its B holds the exit channel's lows and B2 its
// highs.
type Pairs[F Float] struct {
	Machine        PairMachine
	A, B           [][]F
	FirstA, FirstB []int
	A2, B2         [][]F  // MachineChannel: the second level of each a and b
	V              []F    // MachineChannel: the value compared, per bar
	Levels         [][4]F // MachineBands: the four levels of each b
	// zscore in fp64 (its parity's margins, SPEC Part 2): per a, x - mean
	// and the sd (NaN where undefined); per b, (entry, exit).
	D, SD      [][]F
	Thresholds [][2]F
}

// NB is the number of last-axis columns: len(Levels) for MachineBands,
// len(B) otherwise.
func (p *Pairs[F]) NB() int {
	if p.Machine == MachineBands {
		return len(p.Levels)
	}
	return len(p.B)
}

// PairRunner is a backend whose kernels run a PairStrategy's grids (its
// Prepare takes a job whose Grid.Strategy is one, when PairsOK).
type PairRunner interface {
	RunsPairs() bool
}
