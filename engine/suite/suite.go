package suite

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"sweepbench/engine"
	"sweepbench/engine/text"
)

// Suite is a Spec run over several datasets: Studies[d] is the study of
// Data[d], built from Spec with its Data replaced.
type Suite struct {
	Spec    engine.Spec // the common description; its Data is Data[0]
	Data    []string    // the datasets, as given
	Studies []*engine.Study
}

// BuildSuite loads every dataset of the suite, one after the other, and
// builds its study (s.BuildContext with Data replaced). An error names
// the dataset.
func BuildSuite(ctx context.Context, s engine.Spec, reg *engine.Registry, datasets []string) (*Suite, error) {
	su := &Suite{Spec: s, Data: datasets}
	if len(datasets) > 0 {
		su.Spec.Data = datasets[0]
	}
	for _, d := range datasets {
		sp := s
		sp.Data = d
		st, err := sp.BuildContext(ctx, reg)
		if err != nil {
			return nil, fmt.Errorf("dataset %s: %w", d, err)
		}
		su.Studies = append(su.Studies, st)
	}
	return su, nil
}

// Aggregate is a suite's cross-dataset figures per combo, from the
// objective's metric of each dataset's reference run (fp64, else the one
// precision). Slices are in grid order.
type Aggregate struct {
	Objective engine.Objective
	Grid      engine.Grid
	Datasets  []string // names, in suite order
	// Median is the median over the datasets of the objective's metric
	// (the mean of the middle two for an even count), NaN values left
	// out; NaN when every dataset's is NaN.
	Median []float64
	// Worst is the worst dataset's value: the minimum, or the maximum
	// for a minimised metric (max_drawdown); NaN values left out.
	Worst []float64
	// Profitable counts the datasets where the combo's total return is
	// above 0.
	Profitable []int
}

// Aggregator builds an Aggregate from the results of each dataset's
// reference run as they stream (StudyOptions.Sink), in memory of 8 bytes
// a combo a dataset.
type Aggregator struct {
	agg  Aggregate
	lane engine.Precision
	vals [][]float64 // [dataset][combo]
}

// NewAggregator starts the aggregate of n datasets of grid g, for objective
// o, from the results of precision lane.
func NewAggregator(g engine.Grid, names []string, o engine.Objective, lane engine.Precision) *Aggregator {
	a := &Aggregator{lane: lane, agg: Aggregate{Objective: o, Grid: g, Datasets: names, Profitable: make([]int, g.Len())}}
	a.vals = make([][]float64, len(names))
	for d := range a.vals {
		a.vals[d] = make([]float64, g.Len())
		for i := range a.vals[d] {
			a.vals[d][i] = math.NaN()
		}
	}
	return a
}

// Name names dataset d (from 0) as its study's data names it once loaded
// (the window included: "embedded:btcusdt-1m[:20000]"), in place of the
// path the aggregate was started with.
func (a *Aggregator) Name(d int, name string) { a.agg.Datasets[d] = name }

// Lane is the precision whose results Add takes.
func (a *Aggregator) Lane() engine.Precision { return a.lane }

// Add takes results of dataset d's reference run (results of another
// precision are ignored: call it from a StudyOptions.Sink). Each combo
// must be added once per dataset.
func (a *Aggregator) Add(d int, p engine.Precision, rs []engine.ComboResult) {
	if p != a.lane {
		return
	}
	name := a.agg.Objective.Name()
	for i := range rs {
		r := &rs[i]
		v, _ := r.Metrics.Value(name)
		a.vals[d][r.Index] = v
		if r.TotalReturn > 0 {
			a.agg.Profitable[r.Index]++
		}
	}
}

// Aggregate computes the figures from what was added.
func (a *Aggregator) Aggregate() *Aggregate {
	g := a.agg
	n := g.Grid.Len()
	g.Median, g.Worst = make([]float64, n), make([]float64, n)
	col := make([]float64, 0, len(a.vals))
	for i := 0; i < n; i++ {
		col = col[:0]
		for d := range a.vals {
			if v := a.vals[d][i]; !math.IsNaN(v) {
				col = append(col, v)
			}
		}
		g.Median[i], g.Worst[i] = math.NaN(), math.NaN()
		if len(col) == 0 {
			continue
		}
		slices.Sort(col)
		m := len(col) / 2
		if len(col)%2 == 1 {
			g.Median[i] = col[m]
		} else {
			g.Median[i] = col[m-1]/2 + col[m]/2
		}
		g.Worst[i] = col[0]
		if g.Objective.Minimise {
			g.Worst[i] = col[len(col)-1]
		}
	}
	return &g
}

// Top is the k combos with the best median (the objective's sense; NaN
// last; ties by the better worst, then grid order).
func (g *Aggregate) Top(k int) []int {
	idx := make([]int, len(g.Median))
	for i := range idx {
		idx[i] = i
	}
	sign := 1.0
	if g.Objective.Minimise {
		sign = -1
	}
	better := func(x, y float64) int { // -1 when x ranks above y
		switch {
		case math.IsNaN(x) && math.IsNaN(y):
			return 0
		case math.IsNaN(x):
			return 1
		case math.IsNaN(y):
			return -1
		case sign*x > sign*y:
			return -1
		case sign*x < sign*y:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := better(g.Median[a], g.Median[b]); c != 0 {
			return c
		}
		return better(g.Worst[a], g.Worst[b])
	})
	return idx[:min(k, len(idx))]
}

// jsonAggregate is the aggregate's JSON shape: one object per combo and
// the heatmap of the median (rows the HMA lengths, columns the HMA3's).
type jsonAggregate struct {
	Objective string             `json:"objective"`
	Lane      string             `json:"lane"`
	Datasets  []string           `json:"datasets"`
	Combos    []jsonAggregateRow `json:"combos"`
	Heatmap   jsonHeatmap        `json:"heatmap"`
}

type jsonAggregateRow struct {
	HMA        int              `json:"hma"`
	HMA3       int              `json:"hma3"`
	Median     engine.JSONFloat `json:"median"`
	Worst      engine.JSONFloat `json:"worst"`
	Profitable int              `json:"profitable"`
}

type jsonHeatmap struct {
	Of     string               `json:"of"`
	HMA    []int                `json:"hma"`
	HMA3   []int                `json:"hma3"`
	Values [][]engine.JSONFloat `json:"values"`
}

// JSON is the aggregate in its JSON shape (for a suite report). A
// strategy family's grid (Grid.Strategy) has its own (strategyJSON).
func (g *Aggregate) JSON(lane engine.Precision) any {
	if g.Grid.Strategy != nil {
		return g.strategyJSON(lane)
	}
	out := jsonAggregate{Objective: g.Objective.Name(), Lane: lane.String(), Datasets: g.Datasets,
		Combos: make([]jsonAggregateRow, len(g.Median))}
	for i := range g.Median {
		c := g.Grid.At(i)
		out.Combos[i] = jsonAggregateRow{c.HMA, c.HMA3, engine.JSONFloat(g.Median[i]), engine.JSONFloat(g.Worst[i]), g.Profitable[i]}
	}
	out.Heatmap = jsonHeatmap{Of: "median " + g.Objective.Name(), HMA: g.Grid.HMA.Values(), HMA3: g.Grid.HMA3.Values()}
	n3 := g.Grid.HMA3.Len()
	for r := 0; r < g.Grid.HMA.Len(); r++ {
		row := make([]engine.JSONFloat, n3)
		for c := range row {
			row[c] = engine.JSONFloat(g.Median[g.Grid.Index(r, c)])
		}
		out.Heatmap.Values = append(out.Heatmap.Values, row)
	}
	return out
}

// heatShades are the heatmap's cells, lowest to highest.
const heatShades = " .:-=+*#%@"

// WriteTable prints the aggregate: the top k combos by median, with the
// worst dataset and the datasets in profit, then a heatmap of the median
// (one character a combo, darker is better; when the grid is at most 100
// HMA3 lengths wide).
//
// A strategy family's grid lists each combo's parameters (Grid.Columns)
// and draws the heatmap over its first two axes, each cell the best median
// over its other axes (strategyTable).
func (g *Aggregate) WriteTable(w io.Writer, k int) error {
	if g.Grid.Strategy != nil {
		return g.strategyTable(w, k)
	}
	bw := text.NewErrWriter(w)
	name := g.Objective.Name()
	worst := "min"
	if g.Objective.Minimise {
		worst = "max"
	}
	bw.Printf("\nAcross %d datasets: top %d combos by the median %s (worst = the %s over the datasets; profitable = datasets with total return > 0)\n",
		len(g.Datasets), min(k, len(g.Median)), name, worst)
	bw.Printf("  %5s  %5s  %12s  %12s  %10s\n", "hma", "hma3", "median", "worst", "profitable")
	for _, i := range g.Top(k) {
		c := g.Grid.At(i)
		bw.Printf("  %5d  %5d  %12s  %12s  %6d/%d\n", c.HMA, c.HMA3, fmtAgg(g.Median[i]), fmtAgg(g.Worst[i]), g.Profitable[i], len(g.Datasets))
	}
	n3 := g.Grid.HMA3.Len()
	if n3 > 100 || g.Grid.HMA.Len() > 200 {
		bw.Printf("\n(heatmap of the median %s: in the JSON report, the grid is too large to draw here)\n", name)
		return bw.Err()
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range g.Median {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	bw.Printf("\nHeatmap of the median %s: rows hma %s, columns hma3 %s; '%c' lowest (%s) .. '%c' highest (%s), '?' none\n",
		name, g.Grid.HMA, g.Grid.HMA3, heatShades[0], fmtAgg(lo), heatShades[len(heatShades)-1], fmtAgg(hi))
	for r := 0; r < g.Grid.HMA.Len(); r++ {
		var b strings.Builder
		for c := 0; c < n3; c++ {
			v := g.Median[g.Grid.Index(r, c)]
			switch {
			case math.IsNaN(v):
				b.WriteByte('?')
			case hi <= lo || math.IsInf(v, -1):
				b.WriteByte(heatShades[0])
			case math.IsInf(v, 1):
				b.WriteByte(heatShades[len(heatShades)-1])
			default:
				k := int((v - lo) / (hi - lo) * float64(len(heatShades)-1))
				b.WriteByte(heatShades[min(max(k, 0), len(heatShades)-1)])
			}
		}
		bw.Printf("  %5d |%s|\n", g.Grid.HMA.At(r), b.String())
	}
	return bw.Err()
}

func fmtAgg(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return text.FormatFloat(v)
	}
	return fmt.Sprintf("%.4f", v)
}

// SuiteID names a suite: the first 12 hex digits of the SHA-256 of its
// Spec (Data and Suite cleared) and its datasets as given, in order. Each
// dataset's study is saved as a session whose Spec.Suite is "ID D/N".
func SuiteID(s engine.Spec, datasets []string) string {
	s.Data, s.Suite = "", ""
	js, _ := json.Marshal(struct {
		Spec     engine.Spec `json:"spec"`
		Datasets []string    `json:"datasets"`
	}{s, datasets}) // plain data always marshals
	sum := sha256.Sum256(js)
	return hex.EncodeToString(sum[:6])
}

// SuiteRef is where a study stands in a suite, as Spec.Suite saves it:
// "ID D/N RUN", the suite's id (SuiteID: the same for the same spec and
// datasets), the dataset's place D (from 1), the number of datasets N and
// the run of the suite the study belongs to (NewSuiteRun: one `run`, one
// merge, one run from the workbench), so that running a suite again, or
// merging its shards, makes sessions of another run, not more of the
// first's. Sessions saved before the run was recorded have none ("ID D/N").
type SuiteRef struct {
	ID   string
	D, N int
	Run  string // "" for a ref saved before runs were recorded
}

// String is the ref as Spec.Suite holds it: "3fa2c9e1b0d4 2/5 r7c1e02aa".
func (r SuiteRef) String() string {
	s := fmt.Sprintf("%s %d/%d", r.ID, r.D, r.N)
	if r.Run != "" {
		s += " " + r.Run
	}
	return s
}

// NewSuiteRun names one run of a suite: "r" and 8 random hex digits.
func NewSuiteRun() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (Go 1.24+)
	return "r" + hex.EncodeToString(b[:])
}

// ParseSuiteRef reads a Spec.Suite value ("ID D/N RUN" or, saved before
// runs were recorded, "ID D/N"; 1 <= D <= N). ok is false for "" (a study
// of one dataset); err says what is wrong with a value that is not a ref.
func ParseSuiteRef(s string) (ref SuiteRef, ok bool, err error) {
	if s == "" {
		return SuiteRef{}, false, nil
	}
	f := strings.Fields(s)
	bad := fmt.Errorf("suite %q: want \"ID D/N RUN\" with 1 <= D <= N", s)
	if len(f) != 2 && len(f) != 3 {
		return SuiteRef{}, false, bad
	}
	d, n, slash := strings.Cut(f[1], "/")
	var de, ne error
	ref.ID = f[0]
	ref.D, de = strconv.Atoi(d)
	ref.N, ne = strconv.Atoi(n)
	if len(f) == 3 {
		ref.Run = f[2]
	}
	if !slash || de != nil || ne != nil || ref.D < 1 || ref.D > ref.N {
		return SuiteRef{}, false, bad
	}
	return ref, true, nil
}

// ReferenceLane is the precision a suite's aggregate and a study's
// robustness read: fp64 when ps (a study's precisions) has it, else its
// first. ps must not be empty.
func ReferenceLane(ps []engine.Precision) engine.Precision {
	if slices.Contains(ps, engine.FP64) {
		return engine.FP64
	}
	return ps[0]
}
