package common

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"

	"sweepbench/engine"
	"sweepbench/engine/robust"
	"sweepbench/engine/suite"
	"sweepbench/sessions"
)

// Parity columns the panes offer next to the SPEC metrics.
const (
	ColDn    = "dn"      // trades32 - trades64
	ColDPnL  = "dpnl_pp" // 100*(total_return32 - total_return64), pp
	ColFlips = "flips"   // bars where the held positions differ
)

// Aggregate columns: a suite's cross-dataset figures of a combo
// (suite.Aggregate, set as Results.Agg), for the results screen's "all
// datasets" view: the median and the worst of the objective's metric over
// the datasets, and the number of datasets where it made money.
const (
	ColMedian     = "median"
	ColWorst      = "worst"
	ColProfitable = "profitable"
)

// AggregateColumns are the aggregate columns, in the order m steps them.
var AggregateColumns = []string{ColMedian, ColWorst, ColProfitable}

// IsAggregateColumn reports whether name is one of the aggregate columns.
func IsAggregateColumn(name string) bool {
	return name == ColMedian || name == ColWorst || name == ColProfitable
}

// Columns lists every value a combo has, SPEC metrics first.
func Columns() []string {
	return append(append([]string(nil), engine.MetricNames...), ColDn, ColDPnL, ColFlips)
}

// IsParityColumn reports whether name is one of the parity columns.
func IsParityColumn(name string) bool {
	return name == ColDn || name == ColDPnL || name == ColFlips
}

// NoteLines splits a study's or a report's note (engine.JoinNote parts)
// into the lines a pane shows. What auto picked and which backends are
// unavailable depend on the machine: deterministic (tests) leaves them
// out, and the form lists unavailable backends on lines of their own.
func NoteLines(note string, deterministic bool) []string {
	var out []string
	for _, part := range strings.Split(note, "; ") {
		switch {
		case part == "":
		case strings.Contains(part, "unavailable here"):
		case deterministic && strings.HasPrefix(part, "auto:"):
		default:
			out = append(out, Clean(part))
		}
	}
	return out
}

// Results is a read-only view of a report for the panes: lookups by combo
// index, nothing computed. It has two backings, chosen by the report:
//
//   - full (small grids): every run holds every result; the panes read
//     them all (Indexes, Value of any combo, the parity row of each).
//   - paged (Paged: a run kept only its best, Run.Kept, with its
//     Run.Summary): the panes draw the summaries (top lists, heatmaps) and
//     read the rest a page at a time from the saved run (Pager, set once
//     the session's runs are opened; none for a study not saved). Value
//     and Combo answer for the combos held: the kept best, the page the
//     table fetched (Hold) and the combos selected (Pick). The parity
//     report is its counts (engine.Parity.Counts): no row per combo.
//
// Memory of the paged backing does not depend on the grid: the summaries'
// options bound it, and what is held is a page.
type Results struct {
	Report   *engine.Report
	Grid     engine.Grid
	R64, R32 *engine.Run
	Err      error // why the study stopped early, if it did
	// Asked are the precisions the study asked for: a lane among them
	// with no run at all never started (the study stopped before it).
	Asked []engine.Precision
	// Objective is what "best" means for the study (the report's: its
	// metric and constraints; the zero value ranks by Sharpe).
	Objective engine.Objective
	// Robust is the study's robustness summary (Report.Robustness, read
	// once), nil when it computed none; RobustErr says why it could not
	// be read.
	Robust    *robust.Summary
	RobustErr error
	parity    map[int]*engine.ComboParity
	// Agg is the cross-dataset aggregate of the suite the study is one
	// dataset of (its aggregate columns), nil when none is computed.
	Agg *suite.Aggregate

	// The paged backing (Paged).
	paged bool
	// Session is the saved session the results are of (0: not saved), whose
	// runs the pagers read.
	Session int64
	pagers  map[engine.Precision]Pager
	// PagerWhy says why the paged results have no pager yet: being
	// opened, the study not saved, or the error opening it.
	PagerWhy string
	page     [2]map[int]*engine.ComboResult // the table's page, by precision
	picked   [2]map[int]*engine.ComboResult // combos fetched for the selection
	absent   [2]map[int]bool                // combos a pager said the run does not hold
}

// PagedAbove is the grid size, in combos, above which the workbench keeps
// a study's summaries and pages the rest from the store instead of holding
// every result (a study discards its results as they stream to the store;
// a saved session opens as its summary): below it, every result (216 bytes
// a combo) takes less than a summary (engine.Summary.Bytes: ~50 MB a run
// at the default caps, reached above 256 x 256 combos). A variable so
// that tests can page small grids.
var PagedAbove = 65_536

// PageRows is the most combos a table page read from a pager holds.
var PageRows = 1_000

// pickedCap bounds the combos fetched for selections that are held.
const pickedCap = 256

// PagedGrid reports whether a grid of g's size is shown paged.
func PagedGrid(g engine.Grid) bool { return g.Len() > PagedAbove }

// Pager reads one saved run a page at a time: sessions.RunReader.
type Pager interface {
	Count() int
	Combos(ctx context.Context, idx []int) ([]engine.ComboResult, error)
	Window(ctx context.Context, r0, r1, c0, c1 int) ([]engine.ComboResult, error)
	Top(ctx context.Context, q sessions.TopQuery) ([]engine.ComboResult, error)
	Scan(ctx context.Context, f func([]engine.ComboResult) error) error
}

var _ Pager = (*sessions.RunReader)(nil)

// Paged reports whether the results are the paged backing: summaries and
// pages, not every result.
func (r *Results) Paged() bool { return r.paged }

// Pager is the pager of precision p's run, nil when there is none (yet).
func (r *Results) Pager(p engine.Precision) Pager { return r.pagers[p] }

// SetPagers gives the paged results the pagers of their saved runs.
func (r *Results) SetPagers(ps map[engine.Precision]Pager) {
	r.pagers = ps
	r.PagerWhy = ""
}

// Summary is the summary of precision p's run, nil when it has none.
func (r *Results) Summary(p engine.Precision) *engine.Summary {
	if run := r.Run(p); run != nil {
		return run.Summary
	}
	return nil
}

func precSlot(p engine.Precision) int {
	if p == engine.FP32 {
		return 1
	}
	return 0
}

// Hold makes rs (precision p's results, fetched from its pager) the
// table's page of that precision, replacing the last page.
func (r *Results) Hold(p engine.Precision, rs []engine.ComboResult) {
	m := make(map[int]*engine.ComboResult, len(rs))
	for i := range rs {
		m[rs[i].Index] = &rs[i]
	}
	r.page[precSlot(p)] = m
}

// Pick holds results fetched for a selection (precision p): want are the
// combos asked for, those of want not in rs are not in the run.
func (r *Results) Pick(p engine.Precision, want []int, rs []engine.ComboResult) {
	k := precSlot(p)
	if len(r.picked[k]) >= pickedCap {
		r.picked[k] = nil
	}
	if r.picked[k] == nil {
		r.picked[k] = map[int]*engine.ComboResult{}
	}
	got := map[int]bool{}
	for i := range rs {
		c := rs[i]
		r.picked[k][c.Index] = &c
		got[c.Index] = true
	}
	for _, i := range want {
		if !got[i] {
			if r.absent[k] == nil || len(r.absent[k]) >= pickedCap {
				r.absent[k] = map[int]bool{}
			}
			r.absent[k][i] = true
		}
	}
}

// Held reports whether combo idx's result in precision p is held (no
// pager read needed).
func (r *Results) Held(idx int, p engine.Precision) bool { return r.Combo(idx, p) != nil }

// Known reports whether combo idx's result in precision p is held, or a
// pager said the run does not hold it: nothing to read either way.
func (r *Results) Known(idx int, p engine.Precision) bool {
	return r.Held(idx, p) || r.absent[precSlot(p)][idx]
}

// NewResults indexes rep for the panes.
//
// A report whose runs kept only their best (Run.Kept) with summaries is
// the paged backing: its parity report is reduced to its counts here
// (engine.Parity.Counts), the rows per combo dropped.
func NewResults(rep *engine.Report, err error) *Results {
	r := &Results{Report: rep, Grid: rep.Grid, R64: rep.Run(engine.FP64), R32: rep.Run(engine.FP32), Err: err,
		Objective: rep.Objective}
	if run := r.Primary(); run != nil && run.Kept && run.Summary != nil {
		r.paged = true
		r.PagerWhy = "paging needs a saved session (this study was not saved)"
		rep.Parity = rep.Parity.Counts()
	}
	if len(rep.Robustness) > 0 {
		var sm robust.Summary
		if r.RobustErr = json.Unmarshal(rep.Robustness, &sm); r.RobustErr == nil {
			r.Robust = &sm
		}
	}
	if rep.Parity != nil && !r.paged {
		r.parity = make(map[int]*engine.ComboParity, len(rep.Parity.Combos))
		for i := range rep.Parity.Combos {
			c := &rep.Parity.Combos[i]
			r.parity[c.Index] = c
		}
	}
	return r
}

// Complete reports whether every run completed.
func (r *Results) Complete() bool { return r.Report.Complete() }

// Run returns the run of precision p, or nil.
func (r *Results) Run(p engine.Precision) *engine.Run {
	if p == engine.FP32 {
		return r.R32
	}
	return r.R64
}

// Primary is the run the tables list: fp64 when it ran, else fp32.
func (r *Results) Primary() *engine.Run {
	if r.R64 != nil {
		return r.R64
	}
	return r.R32
}

// Combo returns combo idx's result in precision p, or nil.
func (r *Results) Combo(idx int, p engine.Precision) *engine.ComboResult {
	run := r.Run(p)
	if run == nil {
		return nil
	}
	if c := run.Lookup(idx); c != nil || !r.paged {
		return c
	}
	k := precSlot(p)
	if c := r.page[k][idx]; c != nil {
		return c
	}
	return r.picked[k][idx]
}

// HasParityRows reports whether the parity report has a row per combo
// (the parity columns dn, dpnl_pp and flips): not for paged results.
func (r *Results) HasParityRows() bool { return r.Report.Parity != nil && !r.paged }

// Parity returns combo idx's parity row, or nil.
func (r *Results) Parity(idx int) *engine.ComboParity {
	return r.parity[idx]
}

// Value returns column name of combo idx in precision p (parity and
// aggregate columns ignore p); ok is false when the combo or the column
// has no value.
func (r *Results) Value(idx int, name string, p engine.Precision) (float64, bool) {
	if IsAggregateColumn(name) {
		g := r.Agg
		if g == nil || idx < 0 || idx >= len(g.Median) {
			return 0, false
		}
		switch name {
		case ColMedian:
			return g.Median[idx], true
		case ColWorst:
			return g.Worst[idx], true
		default:
			return float64(g.Profitable[idx]), true
		}
	}
	if IsParityColumn(name) {
		c := r.Parity(idx)
		if c == nil {
			return 0, false
		}
		switch name {
		case ColDn:
			return float64(c.Dn), true
		case ColDPnL:
			return c.DPnLpp, true
		default:
			return float64(c.Flips), true
		}
	}
	c := r.Combo(idx, p)
	if c == nil {
		return 0, false
	}
	return c.Metrics.Value(name)
}

// Better reports whether value a of column name is better than b: lower is
// better for max_drawdown, larger magnitude is "better" (worth a look) for
// the parity columns, higher for everything else. NaN is never better.
func Better(name string, a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	if math.IsNaN(b) {
		return true
	}
	switch {
	case name == "max_drawdown":
		return a < b
	case IsParityColumn(name):
		return math.Abs(a) > math.Abs(b)
	}
	return a > b
}

// Top returns the best combo among idxs in precision p by the study's
// objective and its constraints (engine.Objective.Ranks, the order of
// run's top lists: only a combo that meets the constraints), or -1 when
// none of them does.
func (r *Results) Top(p engine.Precision, idxs []int) int {
	o := r.Objective
	var best *engine.ComboResult
	for _, i := range idxs {
		c := r.Combo(i, p)
		if c == nil || !o.Selectable(c) {
			continue
		}
		if best == nil || o.Ranks(c, best) {
			best = c
		}
	}
	if best == nil {
		return -1
	}
	return best.Index
}

// Best is the best combo of precision p's run by the study's objective
// and constraints (Top over every combo; the summary's Best list when
// paged), or -1 when none meets them.
func (r *Results) Best(p engine.Precision) int {
	if !r.paged {
		return r.Top(p, r.Indexes())
	}
	if s := r.Summary(p); s != nil && len(s.Best) > 0 {
		return s.Best[0].Index
	}
	return -1
}

// Indexes lists the combo indexes of the primary run, in grid order: every
// combo computed, or, paged, the ones the run kept (its best).
func (r *Results) Indexes() []int {
	run := r.Primary()
	if run == nil {
		return nil
	}
	out := make([]int, len(run.Results))
	for i := range run.Results {
		out[i] = run.Results[i].Index
	}
	return out
}

// Missing says why combo idx has no result in precision p although the
// study asked for that precision ("fp32 not computed (run cancelled)"), or
// "" when it has one or p was not asked for.
func (r *Results) Missing(idx int, p engine.Precision) string {
	run := r.Run(p)
	if run == nil {
		if stopped := r.stopped(p); stopped != nil {
			return p.String() + " not computed (" + StopReason(stopped) + ")"
		}
		return ""
	}
	if r.Combo(idx, p) != nil {
		return ""
	}
	if r.paged && (run.Complete() || !r.absent[precSlot(p)][idx]) {
		return "" // the run has it, or may: the pager says when it does not
	}
	return p.String() + " not computed (" + StopReason(run) + ")"
}

// NeverRan says why the study asked for precision p but has no run of it
// ("cancelled during fp64"), or "" when p ran or was not asked for.
func (r *Results) NeverRan(p engine.Precision) string {
	run := r.stopped(p)
	if run == nil || run.Status == StatusRunning {
		return ""
	}
	when := "during " + run.Precision.String()
	if run.Precision == p {
		when = "before it started"
	}
	if run.Status == engine.StatusFailed {
		return "failed " + when
	}
	return "cancelled " + when
}

// stopped is the run that ended the study before lane p (asked for, with
// no run) started; nil when p ran or was not asked for.
func (r *Results) stopped(p engine.Precision) *engine.Run {
	if r.Run(p) != nil || !slices.Contains(r.Asked, p) {
		return nil
	}
	if r.Running() {
		// The results so far: the lane has not streamed a combo yet.
		return &engine.Run{Precision: p, Status: StatusRunning}
	}
	for _, run := range r.Report.Runs {
		if !run.Complete() {
			return run
		}
	}
	// The lanes before it completed: the lane itself stopped as it began.
	st := engine.StatusCancelled
	if r.Err != nil && !errors.Is(r.Err, context.Canceled) {
		st = engine.StatusFailed
	}
	return &engine.Run{Precision: p, Status: st}
}

// StatusRunning is the status of a run in a snapshot of a study that
// computes (the results so far): its other combos are still to come.
const StatusRunning engine.Status = "running"

// Running reports whether r is a snapshot of a study that computes.
func (r *Results) Running() bool {
	for _, run := range r.Report.Runs {
		if run.Status == StatusRunning {
			return true
		}
	}
	return false
}

// StopReason says why run holds fewer combos than its grid: "run
// cancelled", "run failed", "still computing" or "run incomplete".
func StopReason(run *engine.Run) string {
	switch run.Status {
	case engine.StatusCancelled:
		return "run cancelled"
	case engine.StatusFailed:
		return "run failed"
	case StatusRunning:
		return "still computing"
	}
	return "run incomplete"
}

// Partial lists the runs that hold fewer combos than the grid, as
// "fp32: 8,224 computed", and why they stopped ("" when every run is whole).
func (r *Results) Partial() (parts []string, why string) {
	for _, run := range []*engine.Run{r.R64, r.R32} {
		if run == nil || run.Count() >= r.Grid.Len() {
			continue
		}
		parts = append(parts, run.Precision.String()+": "+Thousands(run.Count())+" computed")
		if why == "" {
			why = StopReason(run)
		}
	}
	return parts, why
}
