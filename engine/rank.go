package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"
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
			return Objective{Metric: name, Minimise: name == "max_drawdown", MinTrades: minTrades, MaxDrawdown: maxDrawdown}, nil
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
		cs = append(cs, fmt.Sprintf("at least %d trades", o.MinTrades))
	}
	if o.MaxDrawdown > 0 {
		cs = append(cs, fmt.Sprintf("max drawdown at most %s%%", FormatFloat(100*o.MaxDrawdown)))
	}
	if len(cs) > 0 {
		s += " (" + strings.Join(cs, ", ") + ")"
	}
	return s
}

// TopBy returns up to k selectable results of run ranked by o (Ranks),
// found in one pass (topK: O(n log k)).
func TopBy(run *Run, o Objective, k int) []ComboResult {
	t := topK{o: o, k: k}
	for i := range run.Results {
		t.offer(&run.Results[i])
	}
	return t.sorted()
}

// topK keeps the k best selectable combos offered by o.Ranks (TopBy, the
// keeper of streamed results): a heap whose root ranks lowest.
type topK struct {
	o Objective
	k int
	h []ComboResult
}

func (t *topK) offer(r *ComboResult) {
	if t.k <= 0 || !t.o.Selectable(r) {
		return
	}
	h := t.h
	if len(h) < t.k {
		h = append(h, *r)
		for c := len(h) - 1; c > 0; {
			p := (c - 1) / 2
			if !t.o.Ranks(&h[p], &h[c]) {
				break
			}
			h[p], h[c] = h[c], h[p]
			c = p
		}
		t.h = h
		return
	}
	if !t.o.Ranks(r, &h[0]) {
		return
	}
	h[0] = *r
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && t.o.Ranks(&h[m], &h[l]) {
			m = l
		}
		if rr := l + 1; rr < len(h) && t.o.Ranks(&h[m], &h[rr]) {
			m = rr
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// sorted is what t kept, best first.
func (t *topK) sorted() []ComboResult {
	out := append([]ComboResult{}, t.h...)
	sort.Slice(out, func(a, b int) bool { return t.o.Ranks(&out[a], &out[b]) })
	return out
}
