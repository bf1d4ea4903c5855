package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"sweepbench/engine/text"
)

// Objective orders a study's combos for its top lists: a metric of SPEC
// ("Metrics per combo", by its name in MetricNames) maximised, or
// minimised when lower is better (max_drawdown), among the combos that
// meet the constraints (at least MinTrades trades; a max drawdown of at
// most MaxDrawdown, a fraction, when it is above 0). The zero value ranks
// by Sharpe, unconstrained: what the tables always did.
type Objective struct {
	Metric      string // "" = "sharpe"
	Minimise    bool
	MinTrades   int
	MaxDrawdown float64
}

// ParseObjective is the objective of metric name (any of MetricNames;
// max_drawdown is minimised, every other maximised) with the constraints.
// Errors (*FieldError, "objective"): an unknown metric.
func ParseObjective(name string, minTrades int, maxDrawdown float64) (Objective, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, m := range MetricNames {
		if m == name {
			return Objective{Metric: name, Minimise: MetricSense(name) == LowerIsBetter, MinTrades: minTrades, MaxDrawdown: maxDrawdown}, nil
		}
	}
	return Objective{}, fieldErr(FieldObjective, name, "unknown metric (want one of %s)", strings.Join(MetricNames, ", "))
}

func (o Objective) metric() string {
	if o.Metric == "" {
		return "sharpe"
	}
	return o.Metric
}

// Name is the metric o ranks by, "sharpe" for the zero value.
func (o Objective) Name() string { return o.metric() }

// Constrained reports whether o has a constraint.
func (o Objective) Constrained() bool { return o.MinTrades > 0 || o.MaxDrawdown > 0 }

// Selectable reports whether r meets o's constraints.
func (o Objective) Selectable(r *ComboResult) bool {
	return r.TotalTrades >= o.MinTrades && (o.MaxDrawdown <= 0 || r.MaxDrawdown <= o.MaxDrawdown)
}

// value is r's metric, negated when minimised (larger is better).
func (o Objective) value(r *ComboResult) float64 {
	v, _ := r.Metrics.Value(o.metric())
	if o.Minimise {
		return -v
	}
	return v
}

// Ranks reports whether a ranks above b: a selectable combo above one
// that is not, then the better value (NaN last), then the lower index.
func (o Objective) Ranks(a, b *ComboResult) bool {
	if sa, sb := o.Selectable(a), o.Selectable(b); sa != sb {
		return sa
	}
	x, y := o.value(a), o.value(b)
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		if math.IsNaN(x) != math.IsNaN(y) {
			return math.IsNaN(y)
		}
	case x != y:
		return x > y
	}
	return a.Index < b.Index
}

// Label names the ordering for a table's title: "Sharpe" for the zero
// value, else the metric, "lowest" when minimised, and the constraints.
func (o Objective) Label() string {
	s := "Sharpe"
	if o.Metric != "" && o.Metric != "sharpe" {
		s = o.Metric
		if o.Minimise {
			s = "lowest " + s
		}
	}
	var cs []string
	if o.MinTrades > 0 {
		cs = append(cs, MinTradesText(o.MinTrades))
	}
	if o.MaxDrawdown > 0 {
		cs = append(cs, fmt.Sprintf("max drawdown at most %s%%", text.FormatFloat(100*o.MaxDrawdown)))
	}
	if len(cs) > 0 {
		s += " (" + strings.Join(cs, ", ") + ")"
	}
	return s
}

// TopBy returns up to k selectable results of run ranked by o (Ranks),
// found in one pass (Top: O(n log k)).
func TopBy(run *Run, o Objective, k int) []ComboResult {
	t := NewTop(o, k)
	for i := range run.Results {
		t.Offer(&run.Results[i])
	}
	return t.Sorted()
}

// Top keeps the k best selectable combos offered, ranked by o.Ranks (the
// order of TopBy and of every top list: the better value first, NaN last,
// ties to the lower grid index), in memory for k results whatever the
// number offered: the keeper of streamed results, the summaries'
// per-metric lists (Summary) and the sessions store's scans use it. The
// zero value keeps nothing.
type Top struct {
	o   Objective
	k   int
	m   int           // o's metric, its place in MetricNames (resolved once: Metrics.Value looks names up in a map); -1 unknown
	h   []ComboResult // a heap whose root ranks lowest
	key []float64     // o.value of h[i]: larger is better
	// thr is the key of the root once t holds k (the k-th best), NaN
	// before: a key below it (v < thr, false for NaN) ranks below every
	// combo kept, and is turned away by that one comparison, before any
	// heap work (what nearly every offer of a large run is).
	thr   float64
	ready bool // m and thr are set (NewTop, or the first Offer of a zero Top)
}

// NewTop keeps the best k (k <= 0: none) by o.
func NewTop(o Objective, k int) *Top {
	t := &Top{o: o, k: k}
	t.init()
	return t
}

func (t *Top) init() {
	if !t.ready {
		t.m = -1
		if i, ok := metricIndex[t.o.metric()]; ok {
			t.m = i
		}
		t.thr, t.ready = math.NaN(), true
	}
}

// value is o.value(r) through the resolved metric.
func (t *Top) value(r *ComboResult) float64 {
	v := metricAt(&r.Metrics, t.m)
	if t.o.Minimise {
		return -v
	}
	return v
}

// above reports whether (x, i) ranks above (y, j), keys of selectable
// combos and their indices: Ranks without the constraints.
func above(x float64, i int, y float64, j int) bool {
	switch {
	case x != x || y != y: // NaN
		if (x != x) != (y != y) {
			return y != y
		}
	case x != y:
		return x > y
	}
	return i < j
}

func (t *Top) less(a, b int) bool { return above(t.key[b], t.h[b].Index, t.key[a], t.h[a].Index) }

func (t *Top) swap(a, b int) {
	t.h[a], t.h[b] = t.h[b], t.h[a]
	t.key[a], t.key[b] = t.key[b], t.key[a]
}

// Offer considers r, copying it when it is kept; a combo that does not
// meet o's constraints (Selectable) is never kept.
func (t *Top) Offer(r *ComboResult) {
	if t.k <= 0 || !t.o.Selectable(r) {
		return
	}
	t.init()
	t.offer(r, t.value(r))
}

// offer considers r, selectable, whose key (o.value) is v: turned away
// by one comparison when v is below the k-th best kept (thr), else the
// heap's order decides (NaN last, ties to the lower index).
func (t *Top) offer(r *ComboResult, v float64) {
	if v < t.thr || t.k <= 0 {
		return
	}
	if len(t.h) < t.k {
		t.h, t.key = append(t.h, *r), append(t.key, v)
		for c := len(t.h) - 1; c > 0; {
			p := (c - 1) / 2
			if !t.less(c, p) {
				break
			}
			t.swap(p, c)
			c = p
		}
		if len(t.h) == t.k {
			t.thr = t.key[0]
		}
		return
	}
	if !above(v, r.Index, t.key[0], t.h[0].Index) {
		return
	}
	t.h[0], t.key[0] = *r, v
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(t.h) && t.less(l, m) {
			m = l
		}
		if rr := l + 1; rr < len(t.h) && t.less(rr, m) {
			m = rr
		}
		if m == i {
			break
		}
		t.swap(i, m)
		i = m
	}
	t.thr = t.key[0]
}

// Len is how many combos t holds (at most k).
func (t *Top) Len() int { return len(t.h) }

// Sorted is what t kept, best first (a new slice).
func (t *Top) Sorted() []ComboResult {
	out := append([]ComboResult{}, t.h...)
	sort.Slice(out, func(a, b int) bool { return t.o.Ranks(&out[a], &out[b]) })
	return out
}

// MinTradesText is the minimum-trades constraint as the tables state it:
// "at least 150 trades", "at least 1 trade" (the count as written).
func MinTradesText(n int) string {
	if n == 1 {
		return "at least 1 trade"
	}
	return fmt.Sprintf("at least %d trades", n)
}
