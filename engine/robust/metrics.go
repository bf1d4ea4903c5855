package robust

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"sweepbench/engine"
)

// varFloor is the relative floor under which a variance counts as zero:
// n*sum(rs^2) - sum(rs)^2 <= varFloor * n*sum(rs^2), i.e. a standard
// deviation below 1e-5 of the root mean square. One-pass sums of a constant
// series leave rounding noise of about (bars x 1e-16) relative there, which
// would otherwise turn SPEC's "0 if std = 0" into a Sharpe ratio of 1e6 per
// bar; no trading strategy has |mean|/std above 1e5 per bar.
const varFloor = 1e-10

// Moments are the sufficient statistics of one combo over a union of blocks
// (BlockStats.Union): the decomposable metrics are functions of them alone.
// Every return is a fraction per bar (0.01 = 1%).
type Moments struct {
	Bars    int64   // bar returns in the union
	Sum     float64 // sum of rs
	SumSq   float64 // sum of rs^2
	SumDown float64 // sum of min(rs,0)^2
	SumLog  float64 // sum of log1p(rs): log of the union's growth
	Trades  int64   // trades closed in the union's blocks
	Wins    int64   // of those, won
}

// Add returns the statistics of the two unions together (disjoint blocks).
func (m Moments) Add(o Moments) Moments {
	return Moments{
		Bars: m.Bars + o.Bars, Sum: m.Sum + o.Sum, SumSq: m.SumSq + o.SumSq,
		SumDown: m.SumDown + o.SumDown, SumLog: m.SumLog + o.SumLog,
		Trades: m.Trades + o.Trades, Wins: m.Wins + o.Wins,
	}
}

// TotalReturn is the compounded return over the union's bars, a fraction:
// prod(1+rs) - 1 = expm1(SumLog) (SPEC total_return when the union is the
// whole sample); -1 after a total loss.
func (m Moments) TotalReturn() float64 { return math.Expm1(m.SumLog) }

// CAGR is the union's growth annualised, a fraction per year:
// (1+TotalReturn)^(bpy/Bars) - 1 = expm1(SumLog*bpy/Bars) (SPEC cagr, whose
// n-1 is the number of bar returns); 0 for an empty union. bpy is
// bars_per_year.
func (m Moments) CAGR(bpy float64) float64 {
	if m.Bars == 0 {
		return 0
	}
	return math.Expm1(m.SumLog * (bpy / float64(m.Bars)))
}

// Mean is the mean bar return, a fraction per bar; 0 for an empty union.
func (m Moments) Mean() float64 {
	if m.Bars == 0 {
		return 0
	}
	return m.Sum / float64(m.Bars)
}

// SharpePerBar is mean/std of the union's bar returns with the population
// standard deviation (SPEC sharpe before annualising), computed as
// Sum/sqrt(Bars*SumSq - Sum^2); 0 when the variance is zero (below the
// relative floor varFloor, see there) or the union is empty.
func (m Moments) SharpePerBar() float64 {
	return sharpeRatio(m.Sum, m.SumSq, float64(m.Bars))
}

// Sharpe is SharpePerBar()*sqrt(bpy), SPEC's annualised sharpe over the
// union's bars; bpy is bars_per_year.
func (m Moments) Sharpe(bpy float64) float64 { return m.SharpePerBar() * math.Sqrt(bpy) }

// SortinoPerBar is mean(rs)/sqrt(mean(min(rs,0)^2)) over the union's bars
// (SPEC sortino before annualising) = Sum/sqrt(Bars*SumDown); +Inf when there
// is no downside and the mean is > 0, 0 when there is no downside otherwise.
func (m Moments) SortinoPerBar() float64 {
	den := float64(m.Bars) * m.SumDown
	if den > 0 {
		return m.Sum / math.Sqrt(den)
	}
	if m.Sum > 0 {
		return math.Inf(1)
	}
	return 0
}

// Sortino is SortinoPerBar()*sqrt(bpy), SPEC's annualised sortino.
func (m Moments) Sortino(bpy float64) float64 { return m.SortinoPerBar() * math.Sqrt(bpy) }

// WinRate is Wins/Trades over the trades closed in the union's blocks, a
// fraction; 0 if none closed (SPEC win_rate).
func (m Moments) WinRate() float64 {
	if m.Trades == 0 {
		return 0
	}
	return float64(m.Wins) / float64(m.Trades)
}

func sharpeRatio(s, q, n float64) float64 {
	nq := float64(n * q)
	d := nq - float64(s*s)
	if !(d > varFloor*nq) {
		return 0
	}
	return s / math.Sqrt(d)
}

// Metric is a decomposable metric: one that BlockStats gives exactly over
// any union of blocks. Names are SPEC's ("mean", the mean bar return, is the
// one SPEC's table lacks).
type Metric int

// The decomposable metrics; values and units as the Moments methods give them.
// The zero Metric is the Sharpe ratio, the default objective.
const (
	MetricSharpe      Metric = iota // sharpe: annualised (ranks as the per-bar one)
	MetricSortino                   // sortino: annualised
	MetricTotalReturn               // total_return: fraction, compounded
	MetricCAGR                      // cagr: fraction per year
	MetricMean                      // mean: fraction per bar
	MetricWinRate                   // win_rate: fraction of the trades closed in the union
	MetricTotalTrades               // total_trades: trades closed in the union
	numMetrics
)

var metricNames = [numMetrics]string{"sharpe", "sortino", "total_return", "cagr", "mean", "win_rate", "total_trades"}

func (m Metric) String() string {
	if m < 0 || m >= numMetrics {
		return "metric(" + strconv.Itoa(int(m)) + ")"
	}
	return metricNames[m]
}

// Metrics lists the decomposable metrics in the order of their constants.
func Metrics() []Metric {
	out := make([]Metric, numMetrics)
	for i := range out {
		out[i] = Metric(i)
	}
	return out
}

// ParseMetric returns the decomposable metric of a SPEC name. A SPEC metric
// that is not decomposable (max_drawdown, which needs the running peak over
// every bar; calmar; var_95 and cvar_95, order statistics; omega, whose
// positive and negative parts are not kept; the bar counts by side; and
// every metric of SPEC Part 2, over each trade's return or the bars held:
// tradeMetric) is an *InputError wrapping ErrNotDecomposable; an unknown
// name one wrapping ErrValue.
func ParseMetric(name string) (Metric, error) {
	for i, n := range metricNames {
		if n == name {
			return Metric(i), nil
		}
	}
	if tradeMetric(name) {
		return 0, inputErr(ErrNotDecomposable, "objective", "%s is taken over each trade's return or the bars held, which the block statistics do not keep (per block they hold the bars, the sums of the bar returns and the counts of trades and winners), so it cannot be computed over a union of blocks (decomposable: %v)", name, metricNames)
	}
	if slices.Contains(engine.MetricNames, name) {
		return 0, inputErr(ErrNotDecomposable, "objective", "%s cannot be computed over a union of blocks from block statistics (decomposable: %v)", name, metricNames)
	}
	return 0, inputErr(ErrValue, "objective", "unknown metric %q (decomposable: %v)", name, metricNames)
}

// objectives are the metrics a selection over blocks may maximise (an
// objective with blocks: OptionsFor), the one list the errors and the
// flags' help give: the decomposable metrics that are metrics of the
// table too (the top lists rank by the same objective; mean is not one)
// and measure performance (total_trades is a count: the combo with the
// most trades in sample says nothing of its skill out of sample, and its
// degradation line would mean nothing).
var objectives = []Metric{MetricSharpe, MetricSortino, MetricTotalReturn, MetricCAGR, MetricWinRate}

// ObjectiveNames lists the objectives a study with blocks takes, in the
// order of their constants: sharpe, sortino, total_return, cagr, win_rate.
func ObjectiveNames() []string {
	out := make([]string, len(objectives))
	for i, m := range objectives {
		out[i] = m.String()
	}
	return out
}

// ParseObjectiveMetric is the metric of an objective over blocks, one of
// ObjectiveNames. Errors (*InputError, field objective, listing
// ObjectiveNames): a SPEC metric the block statistics cannot give wraps
// ErrNotDecomposable; total_trades, mean and an unknown name wrap
// ErrValue.
func ParseObjectiveMetric(name string) (Metric, error) {
	list := strings.Join(ObjectiveNames(), ", ")
	m, err := ParseMetric(name)
	switch {
	case err == nil && slices.Contains(objectives, m):
		return m, nil
	case m == MetricTotalTrades && err == nil:
		return 0, inputErr(ErrValue, "objective", "total_trades is a count, not a measure of performance: the combo with the most trades in sample says nothing of its skill out of sample (objectives over blocks: %s)", list)
	case errors.Is(err, ErrNotDecomposable) && tradeMetric(name):
		return 0, inputErr(ErrNotDecomposable, "objective", "%s is taken over each trade's return or the bars held, which the block statistics do not keep, so it cannot be computed over a union of blocks: rank the study by it without blocks (objectives over blocks: %s)", name, list)
	case errors.Is(err, ErrNotDecomposable):
		return 0, inputErr(ErrNotDecomposable, "objective", "%s cannot be computed over a union of blocks from block statistics (objectives over blocks: %s)", name, list)
	}
	return 0, inputErr(ErrValue, "objective", "unknown metric %q (objectives over blocks: %s)", name, list)
}

// tradeMetric reports whether name is one of SPEC Part 2's metrics
// (engine.MetricNames from profit_factor on): over the trades' returns
// (profit_factor, expectancy, avg_win, avg_loss, best_trade,
// worst_trade, sqn), the bars held (avg_trade_bars, exposure) or the
// equity's runs below a peak (max_drawdown_bars). None is decomposable.
func tradeMetric(name string) bool {
	i := slices.Index(engine.MetricNames, name)
	return i >= slices.Index(engine.MetricNames, "profit_factor") && i >= 0
}

// annualised reports whether the metric's value depends on bars_per_year.
func (m Metric) annualised() bool {
	return m == MetricSharpe || m == MetricSortino || m == MetricCAGR
}

// Value is the metric over the union u, in the units of its constant; bpy
// (bars_per_year) matters only for the annualised ones.
func (m Metric) Value(u Moments, bpy float64) float64 {
	switch m {
	case MetricTotalReturn:
		return u.TotalReturn()
	case MetricCAGR:
		return u.CAGR(bpy)
	case MetricMean:
		return u.Mean()
	case MetricSharpe:
		return u.Sharpe(bpy)
	case MetricSortino:
		return u.Sortino(bpy)
	case MetricWinRate:
		return u.WinRate()
	case MetricTotalTrades:
		return float64(u.Trades)
	}
	return math.NaN()
}

// Objective is what a selection maximises (or minimises): a decomposable
// metric of the union's statistics. BarsPerYear (bars_per_year, SPEC
// "Annualisation") annualises the values it reports and must be positive
// for the annualised metrics; it changes no ranking. The zero Objective
// maximises the Sharpe ratio and still needs BarsPerYear.
type Objective struct {
	Metric      Metric
	Minimise    bool
	BarsPerYear float64
}

// DefaultObjective maximises the annualised Sharpe ratio.
func DefaultObjective(barsPerYear float64) Objective {
	return Objective{Metric: MetricSharpe, BarsPerYear: barsPerYear}
}

// Value is the objective's metric over u (its value, not a score: a
// minimised objective is not negated).
func (o Objective) Value(u Moments) float64 { return o.Metric.Value(u, o.BarsPerYear) }

// Better reports whether value a beats value b in the objective's direction
// (strictly).
func (o Objective) Better(a, b float64) bool {
	if o.Minimise {
		return a < b
	}
	return a > b
}

func (o Objective) String() string {
	if o.Minimise {
		return "min " + o.Metric.String()
	}
	return "max " + o.Metric.String()
}

func (o Objective) validate() error {
	if o.Metric < 0 || o.Metric >= numMetrics {
		return inputErr(ErrNotDecomposable, "objective", "unknown metric %d", int(o.Metric))
	}
	if o.Metric.annualised() && !(o.BarsPerYear > 0 && !math.IsInf(o.BarsPerYear, 0)) {
		return inputErr(ErrValue, "bars_per_year", "%v: %s needs a positive, finite bars_per_year", o.BarsPerYear, o.Metric)
	}
	return nil
}

// The ranking key: a number that orders combos as the objective does
// (larger = better), computed from the union's field sums alone, cheaper
// than the value (no square root, no exp, no annualising), and computed by
// the same scalar functions on every path so that equal statistics give
// equal keys bit for bit. Sharpe ranks by sign(SR)*SR^2 per bar =
// s|s|/(n q - s^2); Sortino by s|s|/(n d); cagr by the log growth per bar;
// total_return by the log growth.

// field is one of the sums a key reads.
type field uint8

const (
	fBars field = iota
	fSum
	fSumSq
	fSumDown
	fSumLog
	fTrades
	fWins
	numFields
)

// maxKeyFields is the most fields any metric's key reads.
const maxKeyFields = 3

// keyFields lists the fields the metric's key reads, in the order the key
// kernels take them.
func (m Metric) keyFields() []field {
	switch m {
	case MetricTotalReturn:
		return []field{fSumLog}
	case MetricCAGR:
		return []field{fSumLog, fBars}
	case MetricMean:
		return []field{fSum, fBars}
	case MetricSharpe:
		return []field{fSum, fSumSq, fBars}
	case MetricSortino:
		return []field{fSum, fSumDown, fBars}
	case MetricWinRate:
		return []field{fWins, fTrades}
	case MetricTotalTrades:
		return []field{fTrades}
	}
	return nil
}

// fieldOf reads a field of a Moments as the float64 the tables hold.
func fieldOf(u *Moments, f field) float64 {
	switch f {
	case fBars:
		return float64(u.Bars)
	case fSum:
		return u.Sum
	case fSumSq:
		return u.SumSq
	case fSumDown:
		return u.SumDown
	case fSumLog:
		return u.SumLog
	case fTrades:
		return float64(u.Trades)
	case fWins:
		return float64(u.Wins)
	}
	return 0
}

// fieldSlice returns field f's slice: a float64 one, or an int32 one.
func (bs *BlockStats) fieldSlice(f field) ([]float64, []int32) {
	switch f {
	case fBars:
		return nil, bs.Bars
	case fSum:
		return bs.Sum, nil
	case fSumSq:
		return bs.SumSq, nil
	case fSumDown:
		return bs.SumDown, nil
	case fSumLog:
		return bs.SumLog, nil
	case fTrades:
		return nil, bs.Trades
	case fWins:
		return nil, bs.Wins
	}
	return nil, nil
}

func keyRatio(a, n float64) float64 {
	if n > 0 {
		return a / n
	}
	return 0
}

func keySharpe(s, q, n float64) float64 {
	num, d := sharpeFrac(s, q, n)
	return num / d
}

// sharpeFrac writes the Sharpe key as a fraction num/d with d > 0:
// num = s|s|, d = n q - s^2, or 0/1 when the variance is at the zero floor
// (SPEC: 0 if std = 0). The PBO kernels compare keys by cross-multiplying
// these, so every path computes them here.
func sharpeFrac(s, q, n float64) (num, d float64) {
	nq := float64(n * q)
	d = nq - float64(s*s)
	if !(d > varFloor*nq) {
		return 0, 1
	}
	return float64(s * math.Abs(s)), d
}

func keySortino(s, down, n float64) float64 {
	den := float64(n * down)
	if den > 0 {
		return float64(s*math.Abs(s)) / den
	}
	if s > 0 {
		return math.Inf(1)
	}
	return 0
}

// key is the objective's ranking key of one union (larger = better).
func (o Objective) key(u Moments) float64 {
	var v [maxKeyFields]float64
	for i, f := range o.Metric.keyFields() {
		v[i] = fieldOf(&u, f)
	}
	k := metricKey(o.Metric, v[0], v[1], v[2])
	if o.Minimise {
		return -k
	}
	return k
}

// metricKey is the key from the field sums in keyFields order.
func metricKey(m Metric, a, b, c float64) float64 {
	switch m {
	case MetricTotalReturn, MetricTotalTrades:
		return a
	case MetricCAGR, MetricMean, MetricWinRate:
		return keyRatio(a, b)
	case MetricSharpe:
		return keySharpe(a, b, c)
	case MetricSortino:
		return keySortino(a, b, c)
	}
	return math.NaN()
}
